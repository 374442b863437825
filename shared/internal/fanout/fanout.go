// Package fanout runs a function over a slice with bounded concurrency: the
// batch loop the processor and the compensator share.
package fanout

import "sync"

// Map returns fn of every item, in the order of items, running at most n
// calls at a time (n < 1 means 1).
func Map[T, R any](items []T, n int, fn func(T) R) []R {
	results := make([]R, len(items))
	sem := make(chan struct{}, max(n, 1))
	var wg sync.WaitGroup
	for i := range items {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			results[i] = fn(items[i])
		})
	}
	wg.Wait()
	return results
}
