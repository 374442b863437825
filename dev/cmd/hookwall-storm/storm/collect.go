package storm

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/hookwall/hookwall/shared/state/store"
)

// readRecords reads the records of keys (16 at once) through table and
// returns the facts of those found.
func readRecords(ctx context.Context, table *store.Table, keys []string) (map[string]*RecordFacts, error) {
	out := make(map[string]*RecordFacts, len(keys))
	var mu sync.Mutex
	var next atomic.Int64
	var firstErr error
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= len(keys) || ctx.Err() != nil {
					return
				}
				rec, err := table.Get(ctx, keys[i])
				mu.Lock()
				if err != nil && firstErr == nil {
					firstErr = err
				}
				if rec != nil {
					out[keys[i]] = &RecordFacts{Status: rec.Status, LastError: rec.LastError, Attempts: int(rec.Attempts), History: rec.History}
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return out, firstErr
}
