package localrun

import (
	"context"
	"slices"
	"sync"

	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/smithy-go/middleware"

	"github.com/hookwall/hookwall/shared/state/store"
)

// DefaultRecentKeys is how many claimed keys the runner remembers for its
// page: far more than the page lists, so that records that went away
// (expired, deleted) still leave the newest MaxPageEvents.
const DefaultRecentKeys = 10 * MaxPageEvents

// Recent remembers the keys of the events this runner's receiver claimed,
// in the order of their claims, at most Max (the oldest are forgotten).
// The page reads their records by key (one Query each), so it lists the
// newest events whatever the table's size, without a Scan. It is safe for
// concurrent use.
type Recent struct {
	// Max bounds the keys kept (default DefaultRecentKeys).
	Max int

	mu   sync.Mutex
	keys []string
}

// Add notes that key was claimed now (moving it to the front if it was
// already there: a record claimed again after it expired).
func (r *Recent) Add(key string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if i := slices.Index(r.keys, key); i >= 0 {
		r.keys = slices.Delete(r.keys, i, i+1)
	}
	r.keys = append(r.keys, key)
	max := r.Max
	if max <= 0 {
		max = DefaultRecentKeys
	}
	if over := len(r.keys) - max; over > 0 {
		r.keys = slices.Delete(r.keys, 0, over)
	}
}

// Newest returns up to n keys, the most recently claimed first.
func (r *Recent) Newest(n int) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if n > len(r.keys) {
		n = len(r.keys)
	}
	out := make([]string, 0, n)
	for i := len(r.keys) - 1; i >= 0 && len(out) < n; i-- {
		out = append(out, r.keys[i])
	}
	return out
}

// Len returns how many keys r holds.
func (r *Recent) Len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.keys)
}

// ObserveClaims returns an AWS config option that adds to recent the key of
// every event record a claim of the clients built from that config created
// ([store.ClaimCreated]). The receiver's code is unchanged, as with
// [ObserveSends].
func ObserveClaims(recent *Recent) config.LoadOptionsFunc {
	return config.WithAPIOptions([]func(*middleware.Stack) error{func(st *middleware.Stack) error {
		return st.Initialize.Add(middleware.InitializeMiddlewareFunc("HookwallRunObserveClaims",
			func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
				out, md, err := next.HandleInitialize(ctx, in)
				if err == nil {
					if key, ok := store.ClaimCreated(in.Parameters); ok {
						recent.Add(key)
					}
				}
				return out, md, err
			}), middleware.After)
	}})
}
