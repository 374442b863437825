package skew

import (
	"context"
	"encoding/json"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hookwall/hookwall/dev/cmd/hookwall-storm/storm"
	"github.com/hookwall/hookwall/shared/config/signer"
	"github.com/hookwall/hookwall/shared/config/tenants"
)

// retryEvery is how long a platform waits before it delivers a refused or
// unanswered delivery again, here (the storm's policies wait longer; the
// skew test only needs every delivery accepted in the end).
const retryEvery = 300 * time.Millisecond

// sender delivers a storm's workload to the stack's receivers as the
// platforms do: each job's copies (at once when they are concurrent),
// each delivery signed anew on every attempt and retried until a 2xx or
// the deadline.
type sender struct {
	stack    *Stack
	tenant   *tenants.Tenant
	items    []storm.Item
	deadline time.Time

	seq        atomic.Int64
	attempts   atomic.Int64
	deliveries atomic.Int64
	refused    atomic.Int64 // deliveries never accepted by the deadline
	done       atomic.Int64 // jobs done
}

// send runs jobs on c workers fed in order, and returns when all are done
// (or ctx ended).
func (g *sender) send(ctx context.Context, jobs []storm.Job, c int) {
	feed := make(chan storm.Job)
	var wg sync.WaitGroup
	for range max(1, c) {
		wg.Go(func() {
			for j := range feed {
				g.job(ctx, j)
				g.done.Add(1)
			}
		})
	}
	for _, j := range jobs {
		select {
		case feed <- j:
		case <-ctx.Done():
		}
	}
	close(feed)
	wg.Wait()
}

// job sends a job's copies, all at once.
func (g *sender) job(ctx context.Context, j storm.Job) {
	var wg sync.WaitGroup
	for range j.Copies {
		wg.Go(func() { g.deliver(ctx, &g.items[j.Item]) })
	}
	wg.Wait()
}

// deliver is one platform delivery of it: attempts until a 2xx.
func (g *sender) deliver(ctx context.Context, it *storm.Item) {
	g.deliveries.Add(1)
	pol := storm.PolicyFor(it.Provider)
	for n := 0; ctx.Err() == nil; n++ {
		g.attempts.Add(1)
		if code := g.post(ctx, it, pol, n); code/100 == 2 {
			return
		}
		if time.Now().Add(retryEvery).After(g.deadline) {
			break
		}
		select {
		case <-ctx.Done():
		case <-time.After(retryEvery):
		}
	}
	g.refused.Add(1)
}

// post signs attempt n of it now and invokes a receiver with it.
func (g *sender) post(ctx context.Context, it *storm.Item, pol storm.Policy, n int) int {
	opts := signer.Options{MessageID: it.IDs[0]}
	if pol.Redelivery {
		opts.Retry = n
	}
	req, err := signer.Sign(g.tenant, it.Provider, it.Body(n > 0 && pol.Redelivery), opts)
	if err != nil {
		return 0
	}
	ev, err := json.Marshal(req.GatewayEvent("upgrade-"+strconv.FormatInt(g.seq.Add(1), 10), "hookwall-upgrade"))
	if err != nil {
		return 0
	}
	return g.stack.Receive(ctx, ev)
}
