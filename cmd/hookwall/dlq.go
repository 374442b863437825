package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/aws/smithy-go"

	"github.com/hookwall/hookwall/shared/aws/queue"
	"github.com/hookwall/hookwall/shared/config/settings"
)

// peekHide is how long dlq peek hides the messages it reads, so that one
// run sees each once; it makes them visible again when it is done.
const peekHide = 10 * time.Second

// peeked is one dead-letter message, in JSON.
type peeked struct {
	MessageID    string          `json:"messageId"`
	SentAt       string          `json:"sentAt,omitempty"`
	ReceiveCount int             `json:"receiveCount"`
	EventKey     string          `json:"eventKey,omitempty"`
	Reason       string          `json:"reason,omitempty"`
	Body         json.RawMessage `json:"body"`
}

func (a *app) dlqPeek(ctx context.Context, args []string) error {
	const cmd = "dlq peek"
	fs := a.flagSet(cmd)
	n := fs.Int("n", 10, "the most messages to show")
	pos, err := a.parse(cmd, fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef(cmd, "unexpected argument %q", pos[0])
	}
	if *n < 1 {
		return usagef(cmd, "--n must be at least 1")
	}
	s, b, err := a.backend(ctx, settings.CLINeeds{DLQ: true})
	if err != nil {
		return err
	}
	msgs, err := a.peek(ctx, b.sqs, s.DLQURL, *n)
	if err != nil {
		return err
	}
	out := make([]peeked, len(msgs))
	for i, m := range msgs {
		out[i] = describe(m)
	}
	if a.json {
		return a.writeJSON(out)
	}
	if err := printTable(a, "the dead-letter queue has no visible message", "MESSAGE ID\tSENT\tRECEIVES\tEVENT KEY\tREASON", out,
		func(w io.Writer, p peeked) {
			fmt.Fprintf(w, "%s\t%s\t%d\t%s\t%s\n", p.MessageID, cell(p.SentAt, 25), p.ReceiveCount, cell(p.EventKey, 80), cell(p.Reason, 60))
		}); err != nil || len(out) == 0 {
		return err
	}
	fmt.Fprintf(a.stdout, "%d message(s) shown; none removed (--json shows the bodies)\n", len(out))
	return nil
}

// peek receives up to n distinct messages from url, hiding them for
// peekHide, then makes them visible again. Nothing is deleted.
func (a *app) peek(ctx context.Context, c sqsAPI, url string, n int) ([]sqstypes.Message, error) {
	var msgs []sqstypes.Message
	seen := map[string]bool{}
	defer func() { a.unhide(context.WithoutCancel(ctx), c, url, msgs) }()
	for len(msgs) < n {
		got, err := receive(ctx, c, url, int32(min(10, n-len(msgs))), peekHide, 0)
		if err != nil {
			return msgs, err
		}
		fresh := 0
		for _, m := range got {
			if id := aws.ToString(m.MessageId); !seen[id] {
				seen[id] = true
				msgs = append(msgs, m)
				fresh++
			}
		}
		if fresh == 0 {
			break
		}
	}
	return msgs, nil
}

// unhide makes msgs visible again at once (best effort: otherwise they
// reappear after peekHide).
func (a *app) unhide(ctx context.Context, c sqsAPI, url string, msgs []sqstypes.Message) {
	for i := 0; i < len(msgs); i += 10 {
		var entries []sqstypes.ChangeMessageVisibilityBatchRequestEntry
		for j, m := range msgs[i:min(i+10, len(msgs))] {
			entries = append(entries, sqstypes.ChangeMessageVisibilityBatchRequestEntry{
				Id: aws.String(strconv.Itoa(j)), ReceiptHandle: m.ReceiptHandle, VisibilityTimeout: 0})
		}
		if _, err := c.ChangeMessageVisibilityBatch(ctx, &sqs.ChangeMessageVisibilityBatchInput{QueueUrl: &url, Entries: entries}); err != nil {
			fmt.Fprintf(a.stderr, "note: could not make the peeked messages visible again (%v); they reappear within %s\n", err, peekHide)
			return
		}
	}
}

// receive receives up to max messages with their attributes.
func receive(ctx context.Context, c sqsAPI, url string, max int32, hide, wait time.Duration) ([]sqstypes.Message, error) {
	out, err := c.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{
		QueueUrl:                    &url,
		MaxNumberOfMessages:         max,
		VisibilityTimeout:           queue.VisibilitySeconds(hide),
		WaitTimeSeconds:             int32(wait / time.Second),
		AttributeNames:              []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameAll}, //nolint:staticcheck // the local SQS server needs it
		MessageSystemAttributeNames: []sqstypes.MessageSystemAttributeName{sqstypes.MessageSystemAttributeNameAll},
		MessageAttributeNames:       []string{"All"},
	})
	if err != nil {
		return nil, fmt.Errorf("receive from %s: %w", url, err)
	}
	return out.Messages, nil
}

// describe returns what peek shows of m: the event key from its attribute
// (or, failing that, its body), the processor's reason, the body.
func describe(m sqstypes.Message) peeked {
	p := peeked{MessageID: aws.ToString(m.MessageId)}
	attr := func(name string) string {
		if v, ok := m.MessageAttributes[name]; ok {
			return aws.ToString(v.StringValue)
		}
		return ""
	}
	p.EventKey, p.Reason = attr(queue.AttrEventKey), attr(queue.AttrReason)
	sys := func(name sqstypes.MessageSystemAttributeName) string {
		if v, ok := m.Attributes[string(name)]; ok {
			return v
		}
		return ""
	}
	if ms, err := strconv.ParseInt(sys(sqstypes.MessageSystemAttributeNameSentTimestamp), 10, 64); err == nil {
		p.SentAt = time.UnixMilli(ms).UTC().Format(time.RFC3339)
	}
	p.ReceiveCount, _ = strconv.Atoi(sys(sqstypes.MessageSystemAttributeNameApproximateReceiveCount))
	body := aws.ToString(m.Body)
	if json.Valid([]byte(body)) {
		p.Body = json.RawMessage(body)
		if p.EventKey == "" {
			var env struct {
				Key string `json:"key"`
			}
			if json.Unmarshal([]byte(body), &env) == nil {
				p.EventKey = env.Key
			}
		}
	} else {
		p.Body, _ = json.Marshal(body)
	}
	return p
}

// redriveResult is the outcome of dlq redrive, in JSON.
type redriveResult struct {
	From   string `json:"from"`
	To     string `json:"to"`
	Method string `json:"method"` // "move-task" or "copy"
	Moved  int64  `json:"moved"`
	Failed int64  `json:"failed"`
}

func (a *app) dlqRedrive(ctx context.Context, args []string) error {
	const cmd = "dlq redrive"
	fs := a.flagSet(cmd)
	to := fs.String("to", "main", `where to move the messages: "main" (QUEUE_URL) or a queue URL`)
	copyOnly := fs.Bool("copy", false, "skip SQS's message move task: receive, send, then delete, 10 at a time")
	pos, err := a.parse(cmd, fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef(cmd, "unexpected argument %q", pos[0])
	}
	need := settings.CLINeeds{DLQ: true, Queue: *to == "main"}
	s, err := a.settings(need)
	if err != nil {
		return err
	}
	dest := *to
	if dest == "main" {
		dest = s.QueueURL
	} else if !strings.HasPrefix(dest, "https://") && !strings.HasPrefix(dest, "http://") {
		return usagef(cmd, "--to %q: want main or a queue URL", dest)
	}
	if dest == s.DLQURL {
		return usagef(cmd, "--to is the dead-letter queue itself")
	}
	b, err := a.open(ctx, s)
	if err != nil {
		return err
	}
	res := redriveResult{From: s.DLQURL, To: dest}
	if !*copyOnly {
		moved, err := a.moveTask(ctx, b.sqs, s.DLQURL, dest)
		res.Moved = moved
		var unsupported *moveUnsupported
		switch {
		case err == nil:
			res.Method = "move-task"
			return a.redriveDone(res)
		case errors.As(err, &unsupported):
			fmt.Fprintf(a.stderr, "note: %v; moving by receive → send → delete instead\n", err)
		default:
			return err
		}
	}
	res.Method = "copy"
	n, failed, err := a.copyMessages(ctx, b.sqs, s.DLQURL, dest)
	res.Moved += n
	res.Failed = failed
	if err != nil {
		return fmt.Errorf("redrive stopped after moving %d message(s): %w", res.Moved, err)
	}
	return a.redriveDone(res)
}

func (a *app) redriveDone(res redriveResult) error {
	if a.json {
		if err := a.writeJSON(res); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(a.stdout, "moved %d message(s) from %s to %s (%s)\n", res.Moved, res.From, res.To, res.Method)
	}
	if res.Failed > 0 {
		return fmt.Errorf("%d message(s) could not be sent and stay on the dead-letter queue; run the redrive again", res.Failed)
	}
	return nil
}

// moveUnsupported says the endpoint cannot run an SQS message move task
// (or the task failed), so the copy loop should do the work.
type moveUnsupported struct{ why string }

func (e *moveUnsupported) Error() string { return e.why }

// queueARN returns the ARN of the queue at url.
func queueARN(ctx context.Context, c sqsAPI, url string) (string, error) {
	out, err := c.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: &url,
		AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameQueueArn}})
	if err != nil {
		return "", fmt.Errorf("queue %s: %w", url, err)
	}
	arn := out.Attributes[string(sqstypes.QueueAttributeNameQueueArn)]
	if arn == "" {
		return "", fmt.Errorf("queue %s: no QueueArn attribute", url)
	}
	return arn, nil
}

// moveTask moves every message of the DLQ to dest with SQS's own message
// move task (StartMessageMoveTask), and waits for it, showing progress. The
// destination is always given: messages the processor sent to the DLQ
// itself have no source queue SQS could return them to.
func (a *app) moveTask(ctx context.Context, c sqsAPI, dlq, dest string) (int64, error) {
	src, err := queueARN(ctx, c, dlq)
	if err != nil {
		return 0, err
	}
	dst, err := queueARN(ctx, c, dest)
	if err != nil {
		return 0, err
	}
	start, err := c.StartMessageMoveTask(ctx, &sqs.StartMessageMoveTaskInput{SourceArn: &src, DestinationArn: &dst})
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return 0, &moveUnsupported{why: fmt.Sprintf("SQS refused a message move task (%s: %s)", ae.ErrorCode(), ae.ErrorMessage())}
	}
	if err != nil {
		return 0, fmt.Errorf("start message move task: %w", err)
	}
	handle := aws.ToString(start.TaskHandle)
	for {
		select {
		case <-ctx.Done():
			return 0, fmt.Errorf("message move task %s still running (cancel it with aws sqs cancel-message-move-task): %w", handle, ctx.Err())
		case <-time.After(a.pollEvery):
		}
		out, err := c.ListMessageMoveTasks(ctx, &sqs.ListMessageMoveTasksInput{SourceArn: &src, MaxResults: aws.Int32(10)})
		if err != nil {
			return 0, fmt.Errorf("message move task %s: %w", handle, err)
		}
		if len(out.Results) == 0 {
			return 0, fmt.Errorf("message move task %s: not listed by ListMessageMoveTasks", handle)
		}
		// Newest first, and a queue runs one task at a time: ours is the one
		// with our handle (only a running task shows it) or else the newest.
		task := &out.Results[0]
		for i := range out.Results {
			if aws.ToString(out.Results[i].TaskHandle) == handle {
				task = &out.Results[i]
			}
		}
		moved, total := task.ApproximateNumberOfMessagesMoved, aws.ToInt64(task.ApproximateNumberOfMessagesToMove)
		switch aws.ToString(task.Status) {
		case "RUNNING":
			a.progressf("redrive: %d/%d moved (SQS message move task)", moved, total)
		case "COMPLETED":
			a.progressDone()
			return moved, nil
		case "FAILED":
			a.progressDone()
			return moved, &moveUnsupported{why: fmt.Sprintf("the message move task failed after %d message(s): %s", moved, aws.ToString(task.FailureReason))}
		default: // CANCELLING, CANCELLED: someone else stopped it
			a.progressDone()
			return moved, fmt.Errorf("the message move task was %s after %d message(s)", strings.ToLower(aws.ToString(task.Status)), moved)
		}
	}
}

// copyHide is how long a message being copied stays hidden: it reappears
// on the DLQ if this run stops between receiving and deleting it.
const copyHide = 60 * time.Second

// copyMessages moves the DLQ's messages to dest ten at a time: receive,
// send (body and message attributes), then delete only what was sent. A
// crash between send and delete leaves the message on the DLQ to be sent
// again, a duplicate the processor absorbs; nothing is ever lost. It stops
// when a receive finds the DLQ empty.
func (a *app) copyMessages(ctx context.Context, c sqsAPI, dlq, dest string) (moved, failed int64, err error) {
	defer a.progressDone()
	for {
		msgs, err := receive(ctx, c, dlq, 10, copyHide, time.Second)
		if err != nil {
			return moved, failed, err
		}
		if len(msgs) == 0 {
			return moved, failed, nil
		}
		entries := make([]sqstypes.SendMessageBatchRequestEntry, len(msgs))
		for i, m := range msgs {
			entries[i] = sqstypes.SendMessageBatchRequestEntry{Id: aws.String(strconv.Itoa(i)), MessageBody: m.Body,
				MessageAttributes: m.MessageAttributes, MessageGroupId: queue.GroupOf(m)}
		}
		out, err := c.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: &dest, Entries: entries})
		if err != nil {
			return moved, failed, fmt.Errorf("send to %s: %w (the %d message(s) received stay on the dead-letter queue)", dest, err, len(msgs))
		}
		var del []sqstypes.DeleteMessageBatchRequestEntry
		for _, ok := range out.Successful {
			i, _ := strconv.Atoi(aws.ToString(ok.Id))
			del = append(del, sqstypes.DeleteMessageBatchRequestEntry{Id: ok.Id, ReceiptHandle: msgs[i].ReceiptHandle})
		}
		failed += int64(len(msgs) - len(del))
		if len(del) == 0 {
			return moved, failed, fmt.Errorf("send to %s: every message of the batch was rejected (%s)", dest, batchFailure(out.Failed))
		}
		dout, err := c.DeleteMessageBatch(ctx, &sqs.DeleteMessageBatchInput{QueueUrl: &dlq, Entries: del})
		if err != nil {
			return moved, failed, fmt.Errorf("delete from %s after sending: %w (those messages stay there too; a rerun sends them again, which the processor absorbs)", dlq, err)
		}
		moved += int64(len(dout.Successful))
		a.progressf("redrive: %d moved", moved)
	}
}

func batchFailure(f []sqstypes.BatchResultErrorEntry) string {
	if len(f) == 0 {
		return "no reason given"
	}
	return aws.ToString(f[0].Code) + ": " + aws.ToString(f[0].Message)
}
