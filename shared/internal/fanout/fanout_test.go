package fanout

import (
	"slices"
	"sync/atomic"
	"testing"
	"time"
)

func TestMapKeepsOrderAndBound(t *testing.T) {
	for _, n := range []int{-1, 0, 1, 3} {
		var running, peak atomic.Int32
		got := Map([]int{1, 2, 3, 4, 5, 6, 7}, n, func(x int) int {
			if r := running.Add(1); r > peak.Load() {
				peak.Store(r)
			}
			time.Sleep(time.Millisecond)
			running.Add(-1)
			return x * 10
		})
		if want := []int{10, 20, 30, 40, 50, 60, 70}; !slices.Equal(got, want) {
			t.Errorf("n=%d: got %v, want %v", n, got, want)
		}
		if limit := int32(max(n, 1)); peak.Load() > limit {
			t.Errorf("n=%d: got %d calls at once, want at most %d", n, peak.Load(), limit)
		}
	}
}
