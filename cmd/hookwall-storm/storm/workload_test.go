package storm

import (
	"testing"
	"time"

	"github.com/hookwall/hookwall/shared/webhook"
)

func TestWorkloadMix(t *testing.T) {
	providers := []string{webhook.LINE, webhook.WeCom, webhook.WeChat, webhook.Standard}
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
			if it.Provider != webhook.LINE {
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
		{webhook.LINE, "01X", "line#demo#01X"},
		{webhook.WeCom, "123", "wecom#demo#msg:1000002:123"},
		{webhook.WeChat, "123", "wechat#demo#msg:123"},
		{webhook.Standard, "msg_1", "standard#demo#msg_1"},
	} {
		if got := EventKey(c.provider, "demo", c.id); got != c.want {
			t.Errorf("EventKey(%s, %s) = %s, want %s", c.provider, c.id, got, c.want)
		}
	}
}
