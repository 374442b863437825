package main

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/middleware"

	"github.com/hookwall/hookwall/shared/state/store"
)

// Call counting (SDK middleware).

type delivery struct {
	event     int
	mu        sync.Mutex
	calls     map[string]int // by operation, DynamoDB and SQS
	outcomes  map[string]int // "op:result"
	claimed   bool           // the claim created the record (store.ClaimCreated)
	sent      int            // successful SQS sends
	status    int
	latencyMs float64
}

type ctxKey struct{}

// counter counts every SDK call once (initialize step, above the retries)
// and every HTTP attempt (deserialize step), and attributes each call to the
// delivery in its context, as bench.mjs does with AsyncLocalStorage.
type counter struct {
	mu         sync.Mutex
	calls      map[string]int
	attempts   map[string]int
	outcomes   map[string]int
	unattrib   int
	collecting atomic.Bool
}

func newCounter() *counter {
	return &counter{calls: map[string]int{}, attempts: map[string]int{}, outcomes: map[string]int{}}
}

func (c *counter) reset() {
	c.mu.Lock()
	c.calls, c.attempts, c.outcomes, c.unattrib = map[string]int{}, map[string]int{}, map[string]int{}, 0
	c.mu.Unlock()
}

func (c *counter) install(stack *middleware.Stack) error {
	if err := stack.Initialize.Add(middleware.InitializeMiddlewareFunc("hookwall-peer-calls",
		func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
			op := middleware.GetOperationName(ctx)
			out, md, err := next.HandleInitialize(ctx, in)
			result := "ok"
			if err != nil {
				result = "Error"
				var ae smithy.APIError
				if errors.As(err, &ae) {
					result = ae.ErrorCode()
				}
			}
			c.mu.Lock()
			c.calls[op]++
			c.outcomes[op+":"+result]++
			d, _ := ctx.Value(ctxKey{}).(*delivery)
			if d == nil {
				c.unattrib++
			}
			c.mu.Unlock()
			if d != nil {
				d.mu.Lock()
				d.calls[op]++
				d.outcomes[op+":"+result]++
				if _, created := store.ClaimCreated(in.Parameters); created && err == nil {
					d.claimed = true
				}
				if (op == "SendMessageBatch" || op == "SendMessage") && err == nil {
					d.sent++
				}
				d.mu.Unlock()
			}
			return out, md, err
		}), middleware.Before); err != nil {
		return err
	}
	return stack.Deserialize.Add(middleware.DeserializeMiddlewareFunc("hookwall-peer-attempts",
		func(ctx context.Context, in middleware.DeserializeInput, next middleware.DeserializeHandler) (middleware.DeserializeOutput, middleware.Metadata, error) {
			c.mu.Lock()
			c.attempts[middleware.GetOperationName(ctx)]++
			c.mu.Unlock()
			return next.HandleDeserialize(ctx, in)
		}), middleware.After)
}

func isSQS(op string) bool {
	return strings.HasPrefix(op, "SendMessage") || strings.HasPrefix(op, "ReceiveMessage") || strings.HasPrefix(op, "DeleteMessage")
}
