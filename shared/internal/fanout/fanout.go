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

// Fair returns the order in which to start the items whose groups are
// given: round robin over the groups, in the order each group first
// appears, each group's items in their own order. With Map over that order
// and n slots, a group with one item starts within the first rounds however
// many items another group has: one tenant's messages in a batch do not
// starve another's. Items of one group only keep their order.
func Fair(groups []string) []int {
	var names []string
	queues := map[string][]int{}
	for i, g := range groups {
		if _, ok := queues[g]; !ok {
			names = append(names, g)
		}
		queues[g] = append(queues[g], i)
	}
	order := make([]int, 0, len(groups))
	for round := 0; len(order) < len(groups); round++ {
		for _, g := range names {
			if q := queues[g]; round < len(q) {
				order = append(order, q[round])
			}
		}
	}
	return order
}
