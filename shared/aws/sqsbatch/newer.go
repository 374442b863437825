package sqsbatch

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/hookwall/hookwall/shared/base/format"
)

// DeferDelay is how long a message of a newer format is put off before it
// comes back (SQS's longest delay): a newer release running beside this one
// (a gradual deployment) picks it up meanwhile.
const DeferDelay = 15 * time.Minute

// Resender sends a message again to its queue, with its body, attributes
// and group, delayed; *queue.Queue satisfies it.
type Resender interface {
	Resend(ctx context.Context, m events.SQSMessage, delay time.Duration) error
}

// newer puts off the messages of a newer format than this code knows
// (format.Message): they are neither handled, failed nor dead-lettered.
type newer struct {
	to      Resender
	log     *slog.Logger
	metrics Counter
}

// Counter counts a metric; *obs.Metrics satisfies it.
type Counter interface {
	Count(name string, n int)
}

// DeferNewer makes h send the messages of a format newer than this code
// knows back to their queue through to, delayed by [DeferDelay], and
// acknowledge them (a fresh message starts a fresh receive count, so SQS's
// redrive never dead-letters it); each is counted
// (format.CountNewer(format.Message), and the metric format.MetricNewer on
// metrics unless nil) and logged to log. Without it such a message is
// reported as a batch item failure, counted, and comes back after its
// visibility timeout. It returns h.
func (h *Handler) DeferNewer(to Resender, log *slog.Logger, metrics Counter) *Handler {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	h.newer = newer{to: to, log: log, metrics: metrics}
	return h
}

// Version is the format version of m (0, the previous format, when it has
// none or an unreadable one).
func Version(m events.SQSMessage) int {
	a, ok := m.MessageAttributes[format.MessageAttrVersion]
	if !ok || a.StringValue == nil {
		return 0
	}
	v, err := strconv.Atoi(*a.StringValue)
	if err != nil {
		return 0
	}
	return v
}

// split returns ev without the messages of a newer format, and those it
// could not put off, as batch item failures.
func (n newer) split(ctx context.Context, ev events.SQSEvent) (events.SQSEvent, []events.SQSBatchItemFailure) {
	var keep []events.SQSMessage
	var left []events.SQSBatchItemFailure
	for i, r := range ev.Records {
		v := Version(r)
		if !format.Newer(format.Message, v) {
			if keep != nil {
				keep = append(keep, r)
			}
			continue
		}
		if keep == nil {
			keep = append(make([]events.SQSMessage, 0, len(ev.Records)), ev.Records[:i]...)
		}
		format.CountNewer(format.Message)
		if n.metrics != nil {
			n.metrics.Count(format.MetricNewer, 1)
		}
		if err := n.resend(ctx, r); err != nil {
			left = append(left, events.SQSBatchItemFailure{ItemIdentifier: r.MessageId})
			n.logger().WarnContext(ctx, "message of a newer format not put off; it comes back", slog.String("message_id", r.MessageId),
				slog.Int("format", v), slog.Any("error", err))
			continue
		}
		n.logger().InfoContext(ctx, "message of a newer format put off for the newer release", slog.String("message_id", r.MessageId),
			slog.Int("format", v), slog.Duration("delay", DeferDelay))
	}
	if keep == nil {
		return ev, nil
	}
	ev.Records = keep
	return ev, left
}

func (n newer) logger() *slog.Logger {
	if n.log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return n.log
}

func (n newer) resend(ctx context.Context, r events.SQSMessage) error {
	if n.to == nil {
		return fmt.Errorf("sqsbatch: no resender for message %s", r.MessageId)
	}
	if err := n.to.Resend(ctx, r, DeferDelay); err != nil {
		return fmt.Errorf("sqsbatch: put off message %s: %w", r.MessageId, err)
	}
	return nil
}
