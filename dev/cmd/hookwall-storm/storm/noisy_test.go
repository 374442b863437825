package storm

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/hookwall/hookwall/shared/aws/queue"
)

func noisyWorkload(withNoisy bool) ([]Item, []Job, NoisyOptions) {
	n := NoisyOptions{Quiet: 4, Factor: 10, Rate: 2, For: 30 * time.Second}
	items, jobs := NoisyWorkload(n.Loads(withNoisy), DefaultProviders(), 0.3, 0.1, 0.5, 0.3, 42, "abcdef0123", time.Unix(1700000000, 0), n.For)
	return items, jobs, n
}

// The quiet tenants send the same items at the same times with and
// without the noisy tenant, which sends Factor times as many.
func TestNoisyWorkloadKeepsTheQuietTenantsWorkload(t *testing.T) {
	with, withJobs, n := noisyWorkload(true)
	without, withoutJobs, _ := noisyWorkload(false)
	count := map[string]int{}
	for _, it := range with {
		count[it.Tenant]++
	}
	per := int(n.Rate * n.For.Seconds())
	for i := 1; i <= n.Quiet; i++ {
		if count[QuietTenant(i)] != per {
			t.Errorf("%s: %d items, want %d", QuietTenant(i), count[QuietTenant(i)], per)
		}
	}
	if count[NoisyTenant] != per*n.Factor || len(count) != n.Quiet+1 {
		t.Errorf("items by tenant %v, want %d for %s", count, per*n.Factor, NoisyTenant)
	}
	if len(without) != n.Quiet*per {
		t.Fatalf("without the noisy tenant: %d items, want %d", len(without), n.Quiet*per)
	}
	for i, it := range without {
		w := with[i]
		if it.Index != i || w.Tenant != it.Tenant || w.Provider != it.Provider || w.Copies != it.Copies ||
			w.Concurrent != it.Concurrent || strings.Join(w.Keys, ",") != strings.Join(it.Keys, ",") {
			t.Fatalf("item %d differs: with %+v, without %+v", i, w, it)
		}
	}
	quietJobs := func(jobs []Job) []Job {
		var q []Job
		for _, j := range jobs {
			if j.Item < len(without) {
				q = append(q, j)
			}
		}
		return q
	}
	a, b := quietJobs(withJobs), quietJobs(withoutJobs)
	if len(a) != len(b) {
		t.Fatalf("quiet jobs: %d with the noisy tenant, %d without", len(a), len(b))
	}
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("quiet job %d: %+v with the noisy tenant, %+v without", i, a[i], b[i])
		}
	}
}

// Every tenant sends all through the span, the noisy tenant among the
// quiet ones (not before or after them), every copy of every item once,
// in the order of At, and every event has a key of its own.
func TestNoisyWorkloadInterleavesTheTenants(t *testing.T) {
	items, jobs, n := noisyWorkload(true)
	keys := map[string]bool{}
	for i, it := range items {
		if it.Index != i {
			t.Fatalf("item %d has Index %d", i, it.Index)
		}
		for _, k := range it.Keys {
			if keys[k] {
				t.Fatalf("key %s twice", k)
			}
			keys[k] = true
			if tenantOf(k) != it.Tenant {
				t.Fatalf("key %s of tenant %s", k, it.Tenant)
			}
		}
	}
	const slices = 10
	seen := map[string][slices]int{}
	sent := map[int]int{}
	var last time.Duration
	for _, j := range jobs {
		if j.At < last || j.At < 0 || j.At >= n.For {
			t.Fatalf("job at %v after %v (span %v)", j.At, last, n.For)
		}
		last = j.At
		sent[j.Item] += j.Copies
		s := seen[items[j.Item].Tenant]
		s[int(j.At*slices/n.For)]++
		seen[items[j.Item].Tenant] = s
	}
	for _, it := range items {
		if sent[it.Index] != it.Copies {
			t.Fatalf("item %d: %d copies sent, want %d", it.Index, sent[it.Index], it.Copies)
		}
	}
	for tenant, s := range seen {
		for i, c := range s {
			if c == 0 {
				t.Errorf("%s sends nothing in tenth %d of the span: %v", tenant, i, s)
			}
		}
	}
	if q, no := seen[QuietTenant(1)], seen[NoisyTenant]; no[0] < 5*q[0] || no[slices-1] < 5*q[slices-1] {
		t.Errorf("the noisy tenant's jobs per tenth %v against a quiet one's %v: not about %d times as many", no, q, n.Factor)
	}
}

// Analyze splits the counts and latencies by tenant.
func TestAnalyzeByTenant(t *testing.T) {
	t0 := time.Unix(1700000000, 0)
	items := []Item{
		{Index: 0, Tenant: "quiet-1", Keys: []string{"line#quiet-1#a"}, Copies: 1},
		{Index: 1, Tenant: "noisy", Keys: []string{"line#noisy#b", "line#noisy#c"}, Copies: 2},
		{Index: 2, Keys: []string{"line#demo#d"}, Copies: 1},
	}
	f := Facts{Items: items, Steps: 1, Records: map[string]*RecordFacts{}, Effects: map[string]map[string]int{},
		FirstEffect: map[string]time.Time{}, FirstReceive: map[string]time.Time{}}
	for i, it := range items {
		f.Deliveries = append(f.Deliveries, Delivery{Item: i, AcceptedAt: t0})
		for j, k := range it.Keys {
			f.Records[k] = &RecordFacts{Status: "SUCCEEDED"}
			if k == "line#noisy#c" {
				continue // no effect: lost
			}
			f.Effects[k] = map[string]int{k + "#1": 1}
			f.FirstEffect[k] = t0.Add(time.Duration(100*(i+1)+j) * time.Millisecond)
			f.FirstReceive[k] = t0.Add(time.Duration(10*(i+1)) * time.Millisecond)
		}
	}
	o := Analyze(f)
	q, no, demo := o.ByTenant["quiet-1"], o.ByTenant["noisy"], o.ByTenant["demo"]
	if q == nil || no == nil || demo == nil || len(o.ByTenant) != 3 {
		t.Fatalf("tenants %v, want quiet-1, noisy and demo", o.ByTenant)
	}
	if q.Items != 1 || q.Events != 1 || q.Processed != 1 || q.Lost != 0 || len(q.e2e) != 1 || q.e2e[0] != 100*time.Millisecond || q.wait[0] != 10*time.Millisecond {
		t.Errorf("quiet-1: %+v", q)
	}
	if no.Items != 1 || no.Events != 2 || no.Deliveries != 2 || no.Processed != 1 || no.Lost != 1 || len(no.e2e) != 1 {
		t.Errorf("noisy: %+v", no)
	}
}

// The group check counts a message whose group is not its event's
// tenant, or that has none, once however often it is received.
func TestGroupCheck(t *testing.T) {
	s := &System{}
	s.expectGroups([]Item{{Tenant: "quiet-1", Keys: []string{"line#quiet-1#a"}}, {Keys: []string{"line#demo#b"}},
		{Tenant: "noisy", Keys: []string{"line#noisy#c", "line#noisy#d"}}})
	rec := func(id, key, group string) events.SQSMessage {
		m := events.SQSMessage{MessageId: id, Attributes: map[string]string{},
			MessageAttributes: map[string]events.SQSMessageAttribute{queue.AttrEventKey: {StringValue: &key, DataType: "String"}}}
		if group != "" {
			m.Attributes[string(sqstypes.MessageSystemAttributeNameMessageGroupId)] = group
		}
		return m
	}
	check := s.onBatch("queue")
	check(context.Background(), events.SQSEvent{Records: []events.SQSMessage{
		rec("1", "line#quiet-1#a", "quiet-1"), rec("2", "line#demo#b", "demo"),
		rec("3", "line#noisy#c", "quiet-1"), rec("4", "line#noisy#d", ""),
		rec("5", "line#other#e", "other"),
	}})
	check(context.Background(), events.SQSEvent{Records: []events.SQSMessage{rec("3", "line#noisy#c", "quiet-1")}})
	g := s.groupReport()
	if g.Receives != 6 || g.Messages != 5 || g.Mismatched != 2 || g.UnknownKeys != 1 || len(g.Samples) != 2 {
		t.Errorf("group check %+v: want 6 receives, 5 messages, 2 mismatched, 1 unknown key", g)
	}
	if g.ByGroup["quiet-1"] != 2 || g.ByGroup[""] != 1 {
		t.Errorf("by group %v", g.ByGroup)
	}
	r := &Report{Groups: g}
	if f := r.Failures(); len(f) != 1 || !strings.Contains(f[0], "mismatched=2") {
		t.Errorf("failures %v, want the mismatched groups", f)
	}
	if len(s.firstReceives()) != 5 {
		t.Errorf("first receives %v", s.firstReceives())
	}
}
