//go:build integration

package localrun

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/hookwall/hookwall/shared/aws/awstest"
	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/state/store"
)

// seedFailed writes n LINE events of tenant demo to the runner's table as
// the processor leaves an event whose attempts ran out: claimed, leased,
// FAILED (not on the queue). It returns their keys.
func (r *runner) seedFailed(n int, tag string) []string {
	r.t.Helper()
	var tableName string
	for _, kv := range r.env {
		if v, ok := strings.CutPrefix(kv, "TABLE_NAME="); ok {
			tableName = v
		}
	}
	tbl, err := store.New(store.Config{Client: awstest.DynamoDB(r.t), TableName: tableName, Function: "test"})
	if err != nil {
		r.t.Fatal(err)
	}
	ctx := context.Background()
	keys := make([]string, n)
	for i := range n {
		id := fmt.Sprintf("%s-%d-%d", tag, time.Now().UnixNano(), i)
		payload, _ := json.Marshal(map[string]any{"type": "message", "webhookEventId": id, "timestamp": time.Now().UnixMilli(),
			"source":  map[string]string{"type": "user", "userId": "U4af4980629aaaaaaaaaaaaaaaaaaaaaaa"},
			"message": map[string]string{"type": "text", "id": id, "text": "recover me"}})
		sum := sha256.Sum256(payload)
		keys[i] = webhook.Key("line", "demo", id)
		res, err := tbl.Claim(ctx, store.NewEvent{Key: keys[i], Provider: "line", Tenant: "demo", EventType: "message",
			PayloadHash: hex.EncodeToString(sum[:]), Payload: payload}, time.Hour)
		if err != nil || res.Outcome != store.Claimed {
			r.t.Fatalf("claim %s: %v %v", keys[i], res.Outcome, err)
		}
		acq, err := tbl.Acquire(ctx, keys[i], "seed", time.Now().Add(time.Minute))
		if err != nil || acq.Outcome != webhook.Acquired {
			r.t.Fatalf("acquire %s: %v %v", keys[i], acq.Outcome, err)
		}
		if held, err := tbl.Fail(ctx, acq.Lease, "seeded: attempts ran out"); !held || err != nil {
			r.t.Fatalf("fail %s: %v %v", keys[i], held, err)
		}
	}
	return keys
}

// job reads the job id from the page's JSON.
func (r *runner) job(id string) JobView {
	r.t.Helper()
	var js []JobView
	if err := json.Unmarshal([]byte(get(r.t, r.base+PagePath+"api/jobs")), &js); err != nil {
		r.t.Fatal(err)
	}
	for _, j := range js {
		if j.ID == id {
			return j
		}
	}
	r.t.Fatalf("no job %s in %+v", id, js)
	return JobView{}
}

// Issue 30's must-show 2: the page's recover job, tried in a real browser.
// Started from the page's form, a job sends the FAILED events of its
// window back and shows its progress to done; its events run again and
// succeed. A second job, slowed by its rate, is cancelled from the page:
// it stops, shown cancelled, and replays nothing after. Its routes keep
// the page's guards (foreign Host 421, foreign Origin 403, no control
// header 403, bad input 400: no job made).
func TestPageRecoverJobInBrowser(t *testing.T) {
	r := startRunner(t)
	keys := r.seedFailed(5, "rec")

	// The guards first: nothing they refuse makes a job.
	form := url.Values{"since": {"1h"}}.Encode()
	port := r.base[strings.LastIndex(r.base, ":")+1:]
	for _, c := range []struct {
		host, origin string
		header       []string
		body         string
		want         int
	}{
		{"evil.example:" + port, "", []string{ControlHeader, "1"}, form, http.StatusMisdirectedRequest},
		{"", "http://evil.example", []string{ControlHeader, "1"}, form, http.StatusForbidden},
		{"", "", nil, form, http.StatusForbidden},
		{"", "", []string{ControlHeader, "1"}, "since=yesterday", http.StatusBadRequest},
		{"", "", []string{ControlHeader, "1"}, "since=1h&status=SUCCEEDED", http.StatusBadRequest},
		{"", "", []string{ControlHeader, "1"}, "since=1h&rate=-2", http.StatusBadRequest},
	} {
		hdr := append([]string{"Content-Type", "application/x-www-form-urlencoded"}, c.header...)
		if code, body := r.request(http.MethodPost, PagePath+"recover", c.host, c.origin, strings.NewReader(c.body), hdr...); code != c.want {
			t.Errorf("POST recover host %q origin %q header %v body %q: %d %s, want %d", c.host, c.origin, c.header, c.body, code, body, c.want)
		}
	}
	if code, body := r.request(http.MethodPost, PagePath+"recover/cancel", "", "", strings.NewReader("id=20260101-000000000-abcdef"),
		"Content-Type", "application/x-www-form-urlencoded", ControlHeader, "1"); code != http.StatusNotFound {
		t.Errorf("cancel of an unknown job: %d %s, want 404", code, body)
	}
	if js := get(t, r.base+PagePath+"api/jobs"); strings.TrimSpace(js) != "[]" {
		t.Fatalf("refused requests made jobs: %s", js)
	}

	ctx := browser(t)
	do := func(what string, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, steps...); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	attr := func(sel, name string) string {
		t.Helper()
		v, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('`+sel+`').getAttribute('`+name+`')`))
		if err != nil {
			t.Fatalf("%s of %s: %v", name, sel, err)
		}
		return v
	}
	do("open the page and start a recovery of the last hour's FAILED events", chromedp.Navigate(r.base+PagePath),
		chromedp.WaitVisible(chromedp.CSS(`#recoverform`)),
		chromedp.Click(chromedp.CSS(`#recoverform button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS(`#joblist tr[data-job]`)))
	first := attr(`#joblist tr[data-job]`, "data-job")
	do("see it done, every seeded event replayed", chromedp.WaitVisible(chromedp.CSS(
		`#joblist tr[data-job="`+first+`"][data-state="done"][data-replayed="`+strconv.Itoa(len(keys))+`"]`)))
	for _, k := range keys {
		r.waitStatus(k, webhook.StatusSucceeded, 60*time.Second)
	}
	if j := r.job(first); j.Counts.Total != len(keys) || j.Counts.Replayed != len(keys) || j.By != RecoverBy {
		t.Errorf("job %s: %+v, want %d selected and replayed, by %s", first, j.Counts, len(keys), RecoverBy)
	}
	shot(t, ctx, "page-recover-done.png")

	// A slow job (one event every 5 s per target), cancelled from the page.
	slow := r.seedFailed(20, "slow")
	do("start a slow job", chromedp.SetValue(chromedp.CSS(`#recoverform input[name=rate]`), "0.2"),
		chromedp.Click(chromedp.CSS(`#recoverform button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS(`#joblist tr[data-job]:not([data-job="`+first+`"])[data-state="running"] button.cancel-job`)))
	second := attr(`#joblist tr[data-job]:not([data-job="`+first+`"])`, "data-job")
	do("cancel it", chromedp.Click(chromedp.CSS(`#joblist tr[data-job="`+second+`"] button.cancel-job`)),
		chromedp.WaitVisible(chromedp.CSS(`#joblist tr[data-job="`+second+`"][data-state="cancelled"]`)))
	if flash, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`#flash`))); err != nil || !strings.Contains(flash, "cancelled") {
		t.Errorf("flash %q (%v), want the cancel's answer", flash, err)
	}
	// Stopped: within its next save (a second) no more replays, ever.
	time.Sleep(2 * time.Second) // the job's save interval, and the bucket's next tokens
	stopped := r.job(second)
	time.Sleep(6 * time.Second) // more than one token's worth at 0.2/s
	after := r.job(second)
	if after.State != "cancelled" || after.Counts.Replayed != stopped.Counts.Replayed {
		t.Errorf("job %s went on after its cancel: %+v then %+v", second, stopped.Counts, after.Counts)
	}
	failed := 0
	for _, k := range slow {
		if ev, ok := r.event(k); ok && ev.Status == webhook.StatusFailed {
			failed++
		}
	}
	if failed < len(slow)-after.Counts.Replayed || after.Counts.Replayed >= len(slow) {
		t.Errorf("cancelled job: %d of %d events still FAILED with %d replayed", failed, len(slow), after.Counts.Replayed)
	}
	shot(t, ctx, "page-recover-cancelled.png")
}
