package storm

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/hookwall/hookwall/shared/engine/process"
	"github.com/hookwall/hookwall/shared/protocol/provider/line"
	"github.com/hookwall/hookwall/shared/protocol/provider/standard"
	"github.com/hookwall/hookwall/shared/protocol/provider/wechat"
	"github.com/hookwall/hookwall/shared/protocol/provider/wecom"
)

func post(t *testing.T, h http.Handler, key, idem string) int {
	t.Helper()
	r := httptest.NewRequest(http.MethodPost, "/business", strings.NewReader(`{"key":"`+key+`"}`))
	r.Header.Set(process.HeaderIdempotencyKey, idem)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w.Code
}

func TestTargetCountsEffectsAndAbsorbsReplays(t *testing.T) {
	tg := NewTarget(TargetConfig{Dedupe: true, Reject4xx: func(k string) bool { return k == "bad" }})
	for _, c := range []struct {
		key, idem string
		want      int
	}{{"a", "i1", 200}, {"a", "i1", 200}, {"b", "i2", 200}, {"bad", "i3", 422}} {
		if got := post(t, tg, c.key, c.idem); got != c.want {
			t.Errorf("%s/%s: %d, want %d", c.key, c.idem, got, c.want)
		}
	}
	eff, first := tg.Effects()
	if eff["a"]["i1"] != 1 || eff["b"]["i2"] != 1 || len(eff["bad"]) != 0 || len(first) != 2 {
		t.Errorf("effects %v first %v", eff, first)
	}
	st := tg.Stats()
	if st.Requests != 4 || st.AbsorbedReplays != 1 || st.Rejected4xx != 1 {
		t.Errorf("stats %+v", st)
	}
	if !tg.HasEffects([]string{"a", "b"}) || tg.HasEffects([]string{"a", "bad"}) {
		t.Error("HasEffects")
	}
	// Without dedupe a same-key repeat is a second effect: doubled.
	nd := NewTarget(TargetConfig{})
	post(t, nd, "a", "i1")
	post(t, nd, "a", "i1")
	eff, _ = nd.Effects()
	if !Doubled(eff["a"], 1) {
		t.Errorf("no dedupe, applied twice: %v not doubled", eff)
	}
	// Every request fails before anything is applied.
	ff := NewTarget(TargetConfig{Fail5xx: 1})
	if got := post(t, ff, "a", "i1"); got != http.StatusServiceUnavailable {
		t.Errorf("fail 5xx: %d", got)
	}
	if eff, _ := ff.Effects(); len(eff) != 0 {
		t.Errorf("a failed request applied %v", eff)
	}
}

func TestPolicies(t *testing.T) {
	if p := PolicyFor(line.Name); !p.Redelivery || len(p.Retries) == 0 {
		t.Errorf("LINE: %+v; want redelivery", p)
	}
	for _, prov := range []string{wecom.Name, wechat.Name} {
		p := PolicyFor(prov)
		var total float64
		for _, d := range p.Retries {
			total += d.Seconds()
		}
		if len(p.Retries) != 3 || total > 5 || p.Redelivery {
			t.Errorf("%s: %+v; want 3 retries within 5 s", prov, p)
		}
	}
	p := PolicyFor(standard.Name)
	for i := 1; i < len(p.Retries); i++ {
		if p.Retries[i] <= p.Retries[i-1] {
			t.Errorf("standard: %v not growing", p.Retries)
		}
	}
}

func TestLINEBodyMarksRedelivery(t *testing.T) {
	it := Item{Index: 3, Provider: line.Name, IDs: []string{"e1", "e2"}}
	first, again := string(it.Body(false)), string(it.Body(true))
	if strings.Count(first, `"isRedelivery":false`) != 2 || strings.Count(again, `"isRedelivery":true`) != 2 {
		t.Errorf("bodies:\n%s\n%s", first, again)
	}
	if !strings.Contains(first, `"webhookEventId":"e2"`) {
		t.Errorf("multi-event body lacks the second event: %s", first)
	}
}
