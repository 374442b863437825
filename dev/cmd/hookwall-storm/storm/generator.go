package storm

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hookwall/hookwall/shared/config/signer"
	"github.com/hookwall/hookwall/shared/config/tenants"
)

// Attempt kinds: the platform's first delivery, its own retries, and the
// manual redeliveries after its policy gave up.
const (
	KindFirst  = "first"
	KindRetry  = "platform_retry"
	KindManual = "manual_redelivery"
)

// Attempt is one HTTP request to the receiver.
type Attempt struct {
	Item    int
	Copy    int
	Kind    string
	Status  int // 0: no answer (transport error or the platform's timeout)
	Latency time.Duration
	At      time.Time
	Track   Track
}

// Delivery is what became of one platform delivery (a copy of an item).
type Delivery struct {
	Item       int
	Copy       int
	AcceptedAt time.Time // zero: never accepted
	Attempts   int
}

// generator sends the workload to the receiver and retries like the platforms.
type generator struct {
	sys      *System
	items    []Item
	tenant   *tenants.Tenant            // the default tenant
	tenants  map[string]*tenants.Tenant // by name, for items of another
	client   *http.Client
	deadline time.Time
	seq      atomic.Int64
	sent     atomic.Int64 // HTTP requests answered so far

	mu         sync.Mutex
	attempts   []Attempt
	deliveries []Delivery
}

// send runs the jobs on c workers and returns when every delivery is
// accepted or the deadline passed. Paced jobs (an At) are sent each at its
// time from start instead, whatever the others are doing (see [sendPaced]).
func (g *generator) send(ctx context.Context, jobs []Job, c int, start time.Time) {
	if slices.ContainsFunc(jobs, func(j Job) bool { return j.At > 0 }) {
		g.sendPaced(ctx, jobs, start)
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range max(1, min(c, len(jobs))) {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= len(jobs) || ctx.Err() != nil {
					return
				}
				g.job(ctx, jobs[i])
			}
		})
	}
	wg.Wait()
}

// sendPaced starts each job at start + its At, in the order of At, on its
// own goroutine: an open loop, as platforms send, so one tenant's slow or
// many deliveries never hold back another's arrival.
func (g *generator) sendPaced(ctx context.Context, jobs []Job, start time.Time) {
	jobs = slices.Clone(jobs)
	slices.SortStableFunc(jobs, func(a, b Job) int { return cmp.Compare(a.At, b.At) })
	var wg sync.WaitGroup
	for _, j := range jobs {
		if wait := time.Until(start.Add(j.At)); wait > 0 {
			select {
			case <-ctx.Done():
			case <-time.After(wait):
			}
		}
		if ctx.Err() != nil {
			break
		}
		wg.Go(func() { g.job(ctx, j) })
	}
	wg.Wait()
}

// job sends one job: its item's copies, all at the same moment when more
// than one.
func (g *generator) job(ctx context.Context, j Job) {
	if j.Copies == 1 {
		g.deliver(ctx, j.Item)
		return
	}
	var cw sync.WaitGroup
	for range j.Copies {
		cw.Go(func() { g.deliver(ctx, j.Item) })
	}
	cw.Wait()
}

// deliver is one platform delivery of item i: attempts until a 2xx, with
// the provider's retry policy, then manual redeliveries until the deadline.
func (g *generator) deliver(ctx context.Context, i int) {
	it := &g.items[i]
	pol := PolicyFor(it.Provider)
	d := Delivery{Item: i, Copy: int(g.seq.Add(1))}
	for n := 0; ; n++ {
		kind := KindFirst
		switch {
		case n > len(pol.Retries):
			kind = KindManual
		case n > 0:
			kind = KindRetry
		}
		a := g.post(ctx, it, pol, n)
		a.Kind, a.Copy = kind, d.Copy
		d.Attempts++
		g.mu.Lock()
		g.attempts = append(g.attempts, a)
		g.mu.Unlock()
		g.sent.Add(1)
		if a.Status/100 == 2 {
			d.AcceptedAt = a.At.Add(a.Latency)
			break
		}
		wait := ManualEvery
		if n < len(pol.Retries) {
			wait = pol.Retries[n]
		}
		if time.Now().Add(wait).After(g.deadline) || ctx.Err() != nil {
			break
		}
		select {
		case <-ctx.Done():
		case <-time.After(wait):
		}
	}
	g.mu.Lock()
	g.deliveries = append(g.deliveries, d)
	g.mu.Unlock()
}

// post signs the item now (as the platform would, each attempt) and sends
// it: attempt n, 0 for the first, marked as a retry where the platform
// marks one.
func (g *generator) post(ctx context.Context, it *Item, pol Policy, n int) Attempt {
	a := Attempt{Item: it.Index, At: time.Now()}
	opts := signer.Options{MessageID: it.IDs[0]} // the delivery id, where the platform sends one outside the body
	if pol.Redelivery {
		opts.Retry = n
	}
	tenant := g.tenant
	if t, ok := g.tenants[it.Tenant]; ok {
		tenant = t
	}
	sreq, err := signer.Sign(tenant, it.Provider, it.Body(n > 0 && pol.Redelivery), opts)
	if err != nil {
		return a
	}
	rctx, cancel := context.WithTimeout(ctx, pol.Timeout)
	defer cancel()
	req, err := sreq.HTTPRequest(rctx, g.sys.ReceiverURL)
	if err != nil {
		return a
	}
	id := strconv.FormatInt(g.seq.Add(1), 10)
	req.Header.Set(trackHeader, id)
	start := time.Now()
	resp, err := g.client.Do(req)
	a.Latency = time.Since(start)
	if err == nil {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		resp.Body.Close()
		a.Status = resp.StatusCode
	}
	a.Track = g.sys.takeTrack(id)
	return a
}

// newGenerator prepares the generator for the items.
func newGenerator(sys *System, items []Item, tenantsFile, tenant string, c int, deadline time.Time) (*generator, error) {
	doc, err := tenants.LoadFile(tenantsFile)
	if err != nil {
		return nil, fmt.Errorf("storm: %w", err)
	}
	t, ok := doc.Tenant(tenant)
	if !ok {
		return nil, fmt.Errorf("storm: no tenant %q", tenant)
	}
	all := map[string]*tenants.Tenant{}
	for _, name := range doc.Names() {
		if t, ok := doc.Tenant(name); ok {
			all[name] = t
		}
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 4 * c
	tr.MaxIdleConns = 8 * c
	return &generator{sys: sys, items: items, tenant: t, tenants: all, client: &http.Client{Transport: tr}, deadline: deadline}, nil
}
