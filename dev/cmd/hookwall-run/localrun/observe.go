package localrun

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/aws/smithy-go/middleware"

	"github.com/hookwall/hookwall/shared/aws/queue"
)

// ObserveSends returns an AWS config option that logs, after SQS accepted
// them, the messages sent by the clients built from that config: an
// enqueued line per event sent to a main queue, a dead-lettered line per
// message sent to dlqURL. The functions' own code is unchanged: the runner
// passes the option to their Build (intake.Build, the processor's
// wiring.Build), which hand it to config.LoadDefaultConfig.
func ObserveSends(log *slog.Logger, dlqURL string) config.LoadOptionsFunc {
	return config.WithAPIOptions([]func(*middleware.Stack) error{func(st *middleware.Stack) error {
		return st.Initialize.Add(middleware.InitializeMiddlewareFunc("HookwallRunObserveSends",
			func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
				out, md, err := next.HandleInitialize(ctx, in)
				if err != nil {
					return out, md, err
				}
				switch p := in.Parameters.(type) {
				case *sqs.SendMessageBatchInput:
					res, _ := out.Result.(*sqs.SendMessageBatchOutput)
					if res == nil {
						break
					}
					ok := make(map[string]string, len(res.Successful))
					for _, s := range res.Successful {
						ok[aws.ToString(s.Id)] = aws.ToString(s.MessageId)
					}
					for _, e := range p.Entries {
						if id, sent := ok[aws.ToString(e.Id)]; sent {
							logSent(ctx, log, dlqURL, aws.ToString(p.QueueUrl), id, aws.ToString(e.MessageBody), e.MessageAttributes)
						}
					}
				case *sqs.SendMessageInput:
					res, _ := out.Result.(*sqs.SendMessageOutput)
					if res == nil {
						break
					}
					logSent(ctx, log, dlqURL, aws.ToString(p.QueueUrl), aws.ToString(res.MessageId), aws.ToString(p.MessageBody), p.MessageAttributes)
				}
				return out, md, err
			}), middleware.After)
	}})
}

func logSent(ctx context.Context, log *slog.Logger, dlqURL, queueURL, messageID, body string, attrs map[string]types.MessageAttributeValue) {
	key := envelopeKey(body)
	if key == "" {
		if a, ok := attrs[queue.AttrEventKey]; ok {
			key = aws.ToString(a.StringValue)
		}
	}
	name := queueName(queueURL)
	if queueURL == dlqURL {
		reason := ""
		if a, ok := attrs[queue.AttrReason]; ok {
			reason = aws.ToString(a.StringValue)
		}
		log.LogAttrs(ctx, slog.LevelWarn, StageDeadLettered, slog.String(AttrStage, StageDeadLettered),
			slog.String("event_key", key), slog.String("queue", name), slog.String("message_id", messageID),
			slog.String("reason", reason),
			slog.String(AttrDetail, fmt.Sprintf("sent to the dead-letter queue %s: %s", name, reason)))
		return
	}
	log.LogAttrs(ctx, slog.LevelInfo, StageEnqueued, slog.String(AttrStage, StageEnqueued),
		slog.String("event_key", key), slog.String("queue", name), slog.String("message_id", messageID),
		slog.String(AttrDetail, fmt.Sprintf("message %s on queue %s", shortID(messageID), name)))
}

// logBatch returns a [Poller.OnBatch] that logs one line per message: the
// function received it (stage), with the receive count.
func logBatch(log *slog.Logger, fn, stage string) func(context.Context, events.SQSEvent) {
	return func(ctx context.Context, ev events.SQSEvent) {
		for _, r := range ev.Records {
			key := envelopeKey(r.Body)
			if key == "" {
				if a, ok := r.MessageAttributes[queue.AttrEventKey]; ok && a.StringValue != nil {
					key = *a.StringValue
				}
			}
			n := r.Attributes["ApproximateReceiveCount"]
			log.LogAttrs(ctx, slog.LevelInfo, stage, slog.String(AttrStage, stage),
				slog.String("event_key", key), slog.String("message_id", r.MessageId),
				slog.String("receive_count", n),
				slog.String(AttrDetail, fmt.Sprintf("%s got message %s (receive #%s, batch of %d)", fn, shortID(r.MessageId), n, len(ev.Records))))
		}
	}
}

// envelopeKey returns the "key" of a JSON message body, or "".
func envelopeKey(body string) string {
	var env struct {
		Key string `json:"key"`
	}
	_ = json.Unmarshal([]byte(body), &env)
	return env.Key
}

// queueName returns the last path segment of a queue URL.
func queueName(u string) string {
	return u[strings.LastIndexByte(u, '/')+1:]
}

func shortID(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}
