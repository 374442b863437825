package webhooktest

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/hookwall/hookwall/shared/base/webhook"
)

// Outcomes is a publisher of outcome events that records them, one batch
// per call. It is safe for concurrent use; the zero value is ready.
type Outcomes struct {
	mu      sync.Mutex
	batches [][]webhook.Outcome
	err     error
}

// Publish records evs and returns the error set with Fail (nil by default).
func (o *Outcomes) Publish(_ context.Context, evs []webhook.Outcome) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.batches = append(o.batches, slices.Clone(evs))
	return o.err
}

// Fail makes every later Publish return err (nil: succeed again).
func (o *Outcomes) Fail(err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.err = err
}

// Batches returns what each Publish call was given, in order.
func (o *Outcomes) Batches() [][]webhook.Outcome {
	o.mu.Lock()
	defer o.mu.Unlock()
	return slices.Clone(o.batches)
}

// All returns every outcome published, in order.
func (o *Outcomes) All() []webhook.Outcome {
	o.mu.Lock()
	defer o.mu.Unlock()
	return slices.Concat(o.batches...)
}

// DeadLetter is a message sent to a [Queue]'s dead-letter queue.
type DeadLetter struct {
	// Key is the event key, Reason why the event was given up on, Body the
	// original message body.
	Key, Reason string
	Body        []byte
}

// Queue records what an engine asks of its queues: the visibility changes
// (the last per receipt handle) and the dead letters, in order. It is safe
// for concurrent use; the zero value is ready.
type Queue struct {
	mu   sync.Mutex
	vis  map[string]time.Duration
	dead []DeadLetter
	err  error
}

// ChangeVisibility records d for the receipt handle and returns the error
// set with Fail (nil by default).
func (q *Queue) ChangeVisibility(_ context.Context, handle string, d time.Duration) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.vis == nil {
		q.vis = map[string]time.Duration{}
	}
	q.vis[handle] = d
	return q.err
}

// Fail makes every later ChangeVisibility return err (nil: succeed again).
func (q *Queue) Fail(err error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.err = err
}

// Visibility returns the last visibility change of the receipt handle, and
// whether there was one.
func (q *Queue) Visibility(handle string) (time.Duration, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	d, ok := q.vis[handle]
	return d, ok
}

// SendDeadLetter records the dead letter.
func (q *Queue) SendDeadLetter(_ context.Context, key string, body []byte, reason string) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.dead = append(q.dead, DeadLetter{Key: key, Reason: reason, Body: slices.Clone(body)})
	return nil
}

// DeadLetters returns the dead letters sent, in order.
func (q *Queue) DeadLetters() []DeadLetter {
	q.mu.Lock()
	defer q.mu.Unlock()
	return slices.Clone(q.dead)
}

// Ops is a publisher of operational events of type T (the processor's
// dispatch.Op, the operators' bus.Op) that records them, in order. It is
// safe for concurrent use; the zero value is ready.
type Ops[T any] struct {
	mu  sync.Mutex
	ops []T
}

// PublishOps records ops.
func (o *Ops[T]) PublishOps(_ context.Context, ops []T) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.ops = append(o.ops, ops...)
	return nil
}

// All returns the events published, in order.
func (o *Ops[T]) All() []T {
	o.mu.Lock()
	defer o.mu.Unlock()
	return slices.Clone(o.ops)
}
