package storm

import (
	"crypto/rand"
	"fmt"
	"math"
	"math/big"
	"time"

	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/protocol/providers"
)

// Item is one delivery of the workload as the platform first makes it: a
// provider, its events (LINE multi-event bodies carry several), and how many
// times the platform delivers it (duplicates).
type Item struct {
	// Index is the item's place in the workload.
	Index int
	// Provider is line, wecom, wechat or standard.
	Provider string
	// Tenant is the tenant it is sent for ("" : the demo tenant).
	Tenant string
	// IDs are the provider's event ids (webhookEventId, MsgId, webhook-id).
	IDs []string
	// Keys are the events' Hookwall keys (webhook.Key), as the receiver
	// derives them.
	Keys []string
	// Copies is how many times the platform delivers the item (1, 2 or 3).
	Copies int
	// Concurrent says the copies are sent at the same moment, not
	// scattered through the storm.
	Concurrent bool
	// At is the events' own time.
	At time.Time
}

// Job is one unit of the send order: copies of an item a worker sends (all
// at once when more than one).
type Job struct {
	Item   int
	Copies int
	// At, in a paced workload ([NoisyWorkload]), is when the job starts,
	// from the storm's start; a workload whose jobs all have At 0 is sent
	// as fast as the C workers go.
	At time.Duration
}

// rng is the workload's seeded generator (mulberry32, as hookwall-peer and
// the Powertools bench use).
type rng struct{ a uint32 }

func (r *rng) float() float64 {
	r.a += 0x6d2b79f5
	t := r.a
	t = (t ^ t>>15) * (t | 1)
	t ^= t + (t^t>>7)*(t|61)
	return float64(t^t>>14) / 4294967296
}

func (r *rng) intn(n int) int { return int(math.Floor(r.float() * float64(n))) }

func shuffle[T any](s []T, r *rng) {
	for i := len(s) - 1; i > 0; i-- {
		j := r.intn(i + 1)
		s[i], s[j] = s[j], s[i]
	}
}

// Workload builds n items over providers (round robin after a shuffle),
// round(dup2*n) of them delivered twice and round(dup3*n) three times, a
// share concurrent of the duplicated ones sent all at once, the others
// scattered (late). multi is the share of LINE items with 2 or 3 events.
// It returns the items and the shuffled send order.
func Workload(n int, providers []string, tenant string, dup2, dup3, concurrent, multi float64, seed uint32, prefix string, at time.Time) ([]Item, []Job) {
	r := &rng{a: seed}
	items := make([]Item, n)
	for i := range items {
		p := providers[i%len(providers)]
		it := Item{Index: i, Provider: p, Copies: 1, At: at}
		k := 1
		if multiEvent(p) && r.float() < multi {
			k = 2 + r.intn(2)
		}
		for j := range k {
			id := EventID(p, prefix, i, j)
			it.IDs = append(it.IDs, id)
			it.Keys = append(it.Keys, EventKey(p, tenant, id))
		}
		items[i] = it
	}
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	shuffle(idx, r)
	n3, n2 := int(math.Floor(float64(n)*dup3+0.5)), int(math.Floor(float64(n)*dup2+0.5))
	n3 = min(n3, n)
	n2 = min(n2, n-n3)
	for _, i := range idx[:n3] {
		items[i].Copies = 3
	}
	for _, i := range idx[n3 : n3+n2] {
		items[i].Copies = 2
	}
	var jobs []Job
	for i := range items {
		it := &items[i]
		if it.Copies > 1 && r.float() < concurrent {
			it.Concurrent = true
			jobs = append(jobs, Job{Item: i, Copies: it.Copies})
			continue
		}
		for range it.Copies {
			jobs = append(jobs, Job{Item: i, Copies: 1})
		}
	}
	shuffle(jobs, r)
	return items, jobs
}

// SpreadTenants gives the items to tenants in turn, one provider round
// (len(providers) items) each, so that every tenant gets every provider,
// and derives their keys again. One tenant or none changes nothing.
func SpreadTenants(items []Item, providers []string, tenants []string) {
	if len(tenants) < 2 {
		return
	}
	for i := range items {
		it := &items[i]
		it.Tenant = tenants[(i/max(1, len(providers)))%len(tenants)]
		for j, id := range it.IDs {
			it.Keys[j] = EventKey(it.Provider, it.Tenant, id)
		}
	}
}

// multiEvent reports whether one delivery of provider may carry several events.
func multiEvent(provider string) bool {
	p, ok := providers.Lookup(provider)
	return ok && p.Demo.MultiEvent
}

// EventID returns the provider's id of event j of item i (its demo's ID,
// tagged with prefix): a webhookEventId (LINE), a numeric MsgId (WeCom,
// WeChat), a webhook-id (Standard), and so on.
func EventID(provider, prefix string, i, j int) string {
	p, ok := providers.Lookup(provider)
	if !ok {
		return fmt.Sprintf("%s-%07d-%d", prefix, i, j)
	}
	return p.Demo.ID(prefix, uint64(i)*10+uint64(j))
}

// EventKey is the Hookwall key the receiver derives for an event id (its
// demo's Key: the provider's dedup key rule).
func EventKey(provider, tenant, id string) string {
	if p, ok := providers.Lookup(provider); ok {
		id = p.Demo.Key(id)
	}
	return webhook.Key(provider, tenant, id)
}

// Body returns the item's body (its provider's demo body of the item's
// events); redelivery marks it as a retry where the platform does so in the
// body (LINE's deliveryContext.isRedelivery, which the receiver's payload
// hash leaves out).
func (it *Item) Body(redelivery bool) []byte {
	p, ok := providers.Lookup(it.Provider)
	if !ok {
		return nil
	}
	return p.Demo.Body(it.IDs, it.At, redelivery)
}

// RandomPrefix returns a fresh lower-case hex prefix for event ids and
// resource names.
func RandomPrefix() string {
	n, _ := rand.Int(rand.Reader, big.NewInt(1<<40))
	return fmt.Sprintf("%010x", n.Int64())
}
