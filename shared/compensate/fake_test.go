package compensate

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/hookwall/hookwall/shared/webhook"
)

// fakeQueue records visibility changes.
type fakeQueue struct {
	mu  sync.Mutex
	vis map[string]time.Duration
}

func (q *fakeQueue) ChangeVisibility(_ context.Context, rh string, d time.Duration) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.vis == nil {
		q.vis = map[string]time.Duration{}
	}
	q.vis[rh] = d
	return nil
}

func (q *fakeQueue) visibility(rh string) (time.Duration, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	d, ok := q.vis[rh]
	return d, ok
}

// fakePublisher records published outcomes, one slice per call.
type fakePublisher struct {
	mu    sync.Mutex
	calls [][]webhook.Outcome
}

func (p *fakePublisher) Publish(_ context.Context, evs []webhook.Outcome) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.calls = append(p.calls, slices.Clone(evs))
	return nil
}

func (p *fakePublisher) all() []webhook.Outcome {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []webhook.Outcome
	for _, c := range p.calls {
		out = append(out, c...)
	}
	return out
}
