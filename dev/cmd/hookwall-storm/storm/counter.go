package storm

import (
	"context"
	"errors"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/middleware"

	"github.com/hookwall/hookwall/shared/state/store"
)

// Track is what one HTTP request to the receiver caused on AWS: the SDK
// calls its context carried, by operation, and what they did.
type Track struct {
	// Calls counts the calls by operation (DynamoDB and SQS).
	Calls map[string]int
	// Failed counts the calls that returned an error.
	Failed int
	// Claimed: the claim created the record (store.ClaimCreated).
	Claimed bool
	// Undos counts DeleteItem calls (undoing a claim).
	Undos int
	// TookOver: an UpdateItem (the re-enqueue take-over) succeeded.
	TookOver bool
	// Sent counts the successful SQS sends.
	Sent int
}

// liveTrack is the Track of a request being served.
type liveTrack struct {
	mu sync.Mutex
	t  Track
}

// record counts one call: err is what it returned, failed the same unless
// it was a lost condition (an answer, not a failure).
// created says the call was a claim that created the record
// (store.ClaimCreated).
func (lt *liveTrack) record(op string, err, failed error, created bool) {
	lt.mu.Lock()
	defer lt.mu.Unlock()
	t := &lt.t
	if t.Calls == nil {
		t.Calls = map[string]int{}
	}
	t.Calls[op]++
	if failed != nil {
		t.Failed++
	}
	switch {
	case created:
		t.Claimed = true
	case op == "DeleteItem":
		t.Undos++
	case op == "UpdateItem" && err == nil:
		t.TookOver = true
	case strings.HasPrefix(op, "SendMessage") && err == nil:
		t.Sent++
	}
}

// snapshot returns a copy safe to read.
func (lt *liveTrack) snapshot() Track {
	lt.mu.Lock()
	defer lt.mu.Unlock()
	t := &lt.t
	c := make(map[string]int, len(t.Calls))
	for k, v := range t.Calls {
		c[k] = v
	}
	return Track{Calls: c, Failed: t.Failed, Claimed: t.Claimed, Undos: t.Undos, TookOver: t.TookOver, Sent: t.Sent}
}

type trackKey struct{}

// withTrack returns ctx carrying t: the receiver's SDK calls in it count on t.
func withTrack(ctx context.Context, t *liveTrack) context.Context {
	return context.WithValue(ctx, trackKey{}, t)
}

// Counter counts the SDK calls of the functions' clients by role
// (receiver, processor, compensator) and operation, with SDK middleware at
// the initialize step (one per call, above the SDK's retries).
type Counter struct {
	mu     sync.Mutex
	calls  map[string]map[string]int
	errors map[string]int
}

// NewCounter returns an empty Counter.
func NewCounter() *Counter {
	return &Counter{calls: map[string]map[string]int{}, errors: map[string]int{}}
}

// Option returns the AWS config option that counts the calls of the clients
// built from that config under role; it is passed to the functions' Build.
func (c *Counter) Option(role string) config.LoadOptionsFunc {
	return config.WithAPIOptions([]func(*middleware.Stack) error{func(st *middleware.Stack) error {
		return st.Initialize.Add(middleware.InitializeMiddlewareFunc("HookwallStormCount",
			func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
				out, md, err := next.HandleInitialize(ctx, in)
				op := middleware.GetOperationName(ctx)
				failed := err // a lost condition is an answer, not a failure
				if expected(err) {
					failed = nil
				}
				c.mu.Lock()
				m := c.calls[role]
				if m == nil {
					m = map[string]int{}
					c.calls[role] = m
				}
				m[op]++
				if failed != nil {
					c.errors[role]++
				}
				c.mu.Unlock()
				if t, _ := ctx.Value(trackKey{}).(*liveTrack); t != nil {
					_, created := store.ClaimCreated(in.Parameters)
					t.record(op, err, failed, created && err == nil)
				}
				return out, md, err
			}), middleware.Before)
	}})
}

// Calls returns a copy of the counts: role → operation → calls.
func (c *Counter) Calls() (map[string]map[string]int, map[string]int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]map[string]int, len(c.calls))
	for r, m := range c.calls {
		out[r] = make(map[string]int, len(m))
		for k, v := range m {
			out[r][k] = v
		}
	}
	errs := make(map[string]int, len(c.errors))
	for k, v := range c.errors {
		errs[k] = v
	}
	return out, errs
}

// expected reports an error that is DynamoDB's answer to a condition (a
// duplicate's claim, a lost race), not a failure of the call.
func expected(err error) bool {
	var ae smithy.APIError
	if !errors.As(err, &ae) {
		return false
	}
	switch ae.ErrorCode() {
	case "ConditionalCheckFailedException", "TransactionCanceledException":
		return true
	}
	return false
}

// isSQS reports whether op is an SQS operation.
func isSQS(op string) bool {
	for _, p := range []string{"SendMessage", "ReceiveMessage", "DeleteMessage", "ChangeMessageVisibility", "GetQueue"} {
		if strings.HasPrefix(op, p) {
			return true
		}
	}
	return false
}
