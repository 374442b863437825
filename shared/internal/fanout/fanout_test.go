package fanout

import (
	"fmt"
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

func TestFairInterleavesGroups(t *testing.T) {
	groups := []string{"noisy", "noisy", "noisy", "noisy", "quiet", "noisy", "other", "quiet"}
	got := Fair(groups)
	want := []int{0, 4, 6, 1, 7, 2, 3, 5}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("Fair(%v) = %v, want %v", groups, got, want)
	}
	if got := Fair(nil); len(got) != 0 {
		t.Errorf("Fair(nil) = %v", got)
	}
	one := Fair([]string{"a", "a", "a"})
	if fmt.Sprint(one) != "[0 1 2]" {
		t.Errorf("one group: %v, want its own order", one)
	}
}
