package storm

import (
	"strings"
	"testing"
	"time"

	"github.com/hookwall/hookwall/shared/protocol/provider/line"
	"github.com/hookwall/hookwall/shared/protocol/provider/standard"
	"github.com/hookwall/hookwall/shared/protocol/provider/wechat"
	"github.com/hookwall/hookwall/shared/protocol/provider/wecom"
	"github.com/hookwall/hookwall/shared/protocol/providers"
)

func TestWorkloadMix(t *testing.T) {
	providers := []string{line.Name, wecom.Name, wechat.Name, standard.Name}
	items, jobs := Workload(1000, providers, "demo", 0.3, 0.1, 0.5, 0.3, 7, "abcdef0123", time.Unix(0, 0))
	copies := map[int]int{}
	keys := map[string]bool{}
	multi := 0
	for _, it := range items {
		copies[it.Copies]++
		for _, k := range it.Keys {
			if keys[k] {
				t.Fatalf("key %s twice", k)
			}
			keys[k] = true
		}
		if len(it.Keys) > 1 {
			multi++
			if it.Provider != line.Name {
				t.Errorf("%s item with %d events", it.Provider, len(it.Keys))
			}
		}
	}
	if copies[1] != 600 || copies[2] != 300 || copies[3] != 100 {
		t.Errorf("copies %v, want 600/300/100", copies)
	}
	if multi == 0 {
		t.Error("no multi-event LINE item")
	}
	sent := map[int]int{}
	for _, j := range jobs {
		sent[j.Item] += j.Copies
	}
	for _, it := range items {
		if sent[it.Index] != it.Copies {
			t.Errorf("item %d: %d copies in the jobs, want %d", it.Index, sent[it.Index], it.Copies)
		}
	}
	// The same seed, the same workload.
	_, again := Workload(1000, providers, "demo", 0.3, 0.1, 0.5, 0.3, 7, "abcdef0123", time.Unix(0, 0))
	for i := range jobs {
		if jobs[i] != again[i] {
			t.Fatal("the workload is not reproducible")
		}
	}
}

func TestEventKeys(t *testing.T) {
	for _, c := range []struct{ provider, id, want string }{
		{line.Name, "01X", "line#demo#01X"},
		{wecom.Name, "123", "wecom#demo#msg:1000002:123"},
		{wechat.Name, "123", "wechat#demo#msg:123"},
		{standard.Name, "msg_1", "standard#demo#msg_1"},
	} {
		if got := EventKey(c.provider, "demo", c.id); got != c.want {
			t.Errorf("EventKey(%s, %s) = %s, want %s", c.provider, c.id, got, c.want)
		}
	}
}

// Every provider of the registry can be stormed: distinct ids and keys for
// distinct events, a body carrying each id, and a policy with a timeout.
func TestEveryProviderHasAWorkload(t *testing.T) {
	names := providers.Names()
	items, _ := Workload(200, names, "demo", 0.3, 0.1, 0.5, 0.3, 7, "abcdef0123", time.Unix(1700000000, 0))
	keys := map[string]bool{}
	for _, it := range items {
		body := string(it.Body(false))
		for j, id := range it.IDs {
			if keys[it.Keys[j]] {
				t.Fatalf("%s: key %s twice", it.Provider, it.Keys[j])
			}
			keys[it.Keys[j]] = true
			if !strings.Contains(body, id) {
				t.Errorf("%s: body lacks event id %s: %s", it.Provider, id, body)
			}
		}
	}
	for _, name := range names {
		if p := PolicyFor(name); p.Timeout <= 0 || p.Name == "" {
			t.Errorf("%s: policy %+v", name, p)
		}
	}
}
