package batch

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"
)

func TestSplitByCountAndBytes(t *testing.T) {
	tests := []struct {
		name  string
		sizes []int
		count int
		bytes int
		want  string
	}{
		{"nothing", nil, 10, 100, "[]"},
		{"by count", []int{1, 1, 1, 1, 1}, 2, 100, "[[0 1] [2 3] [4]]"},
		{"by bytes", []int{40, 40, 40, 10}, 10, 100, "[[0 1] [2 3]]"},
		{"exactly the limit fits", []int{50, 50, 1}, 10, 100, "[[0 1] [2]]"},
		{"an oversized entry alone", []int{10, 150, 10}, 10, 100, "[[0] [1] [2]]"},
		{"an oversized entry first", []int{150, 10}, 10, 100, "[[0] [1]]"},
		{"count and bytes together", []int{30, 30, 30, 30, 30}, 2, 50, "[[0] [1] [2] [3] [4]]"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Split(len(tc.sizes), func(i int) int { return tc.sizes[i] }, tc.count, tc.bytes)
			if s := fmt.Sprint(got); s != tc.want && !(tc.want == "[]" && got == nil) {
				t.Errorf("got %v, want %s", got, tc.want)
			}
		})
	}
}

func TestSplitPanicsWithoutRoom(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("no panic for maxCount 0")
		}
	}()
	Split(1, func(int) int { return 1 }, 0, 10)
}

// script is a SendFunc that rejects, per call, the entries listed in rejects
// (by call number), and records every call.
type script struct {
	mu      sync.Mutex
	calls   [][]int
	rejects map[int][]int
	fail    map[int]error // the call fails as a whole
	at      []time.Time
}

func (s *script) send(_ context.Context, pending []int) ([]int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := len(s.calls)
	s.calls = append(s.calls, slices.Clone(pending))
	s.at = append(s.at, time.Now())
	if err := s.fail[n]; err != nil {
		return pending, err
	}
	var rest []int
	for _, i := range pending {
		if slices.Contains(s.rejects[n], i) {
			rest = append(rest, i)
		}
	}
	if rest != nil {
		return rest, fmt.Errorf("call %d rejected %v", n, rest)
	}
	return nil, nil
}

func TestSendResendsOnlyRejectedEntries(t *testing.T) {
	s := &script{rejects: map[int][]int{0: {1, 3}, 1: {3}}}
	failed, err := Send(context.Background(), [][]int{{0, 1, 2, 3}, {4, 5}}, Retry{3, time.Millisecond}, s.send)
	if failed != nil || err != nil {
		t.Fatalf("got %v, %v; want nil, nil", failed, err)
	}
	if got, want := fmt.Sprint(s.calls), "[[0 1 2 3] [1 3] [3] [4 5]]"; got != want {
		t.Errorf("got calls %s, want %s", got, want)
	}
}

func TestSendGivesUpAfterAttempts(t *testing.T) {
	s := &script{rejects: map[int][]int{0: {2}, 1: {2}, 2: {2}, 3: {2}}}
	failed, err := Send(context.Background(), [][]int{{0, 1, 2}, {3}}, Retry{3, time.Millisecond}, s.send)
	if !slices.Equal(failed, []int{2}) || err == nil || err.Error() != "call 2 rejected [2]" {
		t.Fatalf("got %v, %v; want [2] and the last rejection", failed, err)
	}
	if got, want := fmt.Sprint(s.calls), "[[0 1 2] [2] [2] [3]]"; got != want {
		t.Errorf("got calls %s, want %s", got, want)
	}
}

func TestSendKeepsTheReasonOfAnEarlierBatch(t *testing.T) {
	boom := errors.New("boom")
	s := &script{fail: map[int]error{0: boom}}
	failed, err := Send(context.Background(), [][]int{{0, 1}, {2}}, Retry{1, 0}, s.send)
	if !slices.Equal(failed, []int{0, 1}) || !errors.Is(err, boom) {
		t.Fatalf("got %v, %v; want [0 1] and boom (a later batch's success must not clear it)", failed, err)
	}
}

func TestSendSortsTheFailedEntries(t *testing.T) {
	s := &script{rejects: map[int][]int{0: {5}, 1: {1}}}
	failed, _ := Send(context.Background(), [][]int{{4, 5}, {0, 1}}, Retry{1, 0}, s.send)
	if !slices.Equal(failed, []int{1, 5}) {
		t.Errorf("got %v, want [1 5]", failed)
	}
}

func TestSendNamesUnexplainedRejections(t *testing.T) {
	send := func(_ context.Context, pending []int) ([]int, error) { return pending[:1], nil }
	failed, err := Send(context.Background(), [][]int{{0, 1}}, Retry{2, 0}, send)
	if !slices.Equal(failed, []int{0}) || !errors.Is(err, ErrNotAccepted) {
		t.Errorf("got %v, %v; want [0], ErrNotAccepted", failed, err)
	}
}

func TestSendDoublesTheBackoff(t *testing.T) {
	const backoff = 20 * time.Millisecond
	s := &script{rejects: map[int][]int{0: {0}, 1: {0}}}
	if failed, err := Send(context.Background(), [][]int{{0}}, Retry{3, backoff}, s.send); failed != nil || err != nil {
		t.Fatalf("got %v, %v", failed, err)
	}
	if len(s.at) != 3 {
		t.Fatalf("got %d calls, want 3", len(s.at))
	}
	for i, want := range []time.Duration{backoff, 2 * backoff} {
		if gap := s.at[i+1].Sub(s.at[i]); gap < want {
			t.Errorf("pause before resend %d: got %v, want at least %v", i+1, gap, want)
		}
	}
}

func TestSendStopsWhenTheContextIsDone(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var calls int
	send := func(_ context.Context, pending []int) ([]int, error) {
		calls++
		cancel() // the caller gives up during the first call
		return pending[1:], errors.New("rejected")
	}
	failed, err := Send(ctx, [][]int{{0, 1}, {2}}, Retry{5, time.Hour}, send)
	if calls != 1 || !slices.Equal(failed, []int{1, 2}) || !errors.Is(err, context.Canceled) {
		t.Errorf("got %d call(s), failed %v, %v; want 1 call, [1 2], context.Canceled", calls, failed, err)
	}
}

func TestRetryOrTakesOnlyUnsetFields(t *testing.T) {
	def := Retry{Attempts: 3, Backoff: 50 * time.Millisecond}
	tests := []struct {
		name string
		in   Retry
		want Retry
	}{
		{"nothing set", Retry{}, def},
		{"negative is unset", Retry{Attempts: -1, Backoff: -time.Second}, def},
		{"attempts set", Retry{Attempts: 5}, Retry{Attempts: 5, Backoff: 50 * time.Millisecond}},
		{"backoff set", Retry{Backoff: time.Second}, Retry{Attempts: 3, Backoff: time.Second}},
		{"both set", Retry{Attempts: 1, Backoff: time.Millisecond}, Retry{Attempts: 1, Backoff: time.Millisecond}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.in.Or(def); got != tc.want {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}
