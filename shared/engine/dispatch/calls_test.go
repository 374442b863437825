package dispatch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/base/webhook/webhooktest"
	"github.com/hookwall/hookwall/shared/engine/process"
	"github.com/hookwall/hookwall/shared/state/store"
	"github.com/hookwall/hookwall/shared/state/store/memstore"
)

// callRig is a dispatcher on the in-memory store (which passes the store's
// contract suite) with one handler, and an outside service.
type callRig struct {
	mem *memstore.Store
	d   *Dispatcher
	srv *httptest.Server
}

func newCallRig(t *testing.T, svc http.HandlerFunc, fn func(ctx context.Context, ev *process.Event[follow], base string) error) *callRig {
	t.Helper()
	rg := &callRig{mem: memstore.New(memstore.Config{}), srv: httptest.NewServer(svc)}
	t.Cleanup(rg.srv.Close)
	reg := process.NewRegistry()
	process.Handle(reg, "crm.follow", followType, func(ctx context.Context, ev *process.Event[follow]) error {
		return fn(ctx, ev, rg.srv.URL)
	}, process.Target("crm/{tenant}"))
	q := &webhooktest.Queue{}
	d, err := New(Config{Registry: reg, Store: rg.mem, DLQ: q, Kernel: Kernel{Queue: q, MaxAttempts: 3,
		RetryBase: time.Second, Jitter: func(n int64) int64 { return n - 1 }}})
	if err != nil {
		t.Fatal(err)
	}
	rg.d = d
	return rg
}

// deliver claims key (once) and delivers it, and returns the record after.
func (rg *callRig) deliver(t *testing.T, key string, want Verdict) *store.Record {
	t.Helper()
	ctx := context.Background()
	if _, err := rg.mem.Claim(ctx, store.NewEvent{Key: key, Provider: "line", Tenant: "t1", EventType: "follow",
		PayloadHash: "h", Payload: []byte(`{"userId":"U1"}`)}, time.Hour); err != nil {
		t.Fatal(err)
	}
	if r := rg.d.Handle(ctx, delivery(key, "line", "follow", follow{UserID: "U1"})); r.Verdict != want {
		t.Fatalf("got verdict %v (%v), want %v", r.Verdict, r.Err, want)
	}
	rec, err := rg.mem.Get(ctx, key)
	if err != nil || rec == nil {
		t.Fatalf("get: %v, %v", rec, err)
	}
	return rec
}

func get(ctx context.Context, c *http.Client, url string) (int, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, "", err
	}
	resp, err := c.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

func TestCallsOfAnAttemptAreOnTheRecord(t *testing.T) {
	// 600 bytes, with an invalid UTF-8 byte and a control character in
	// the first 256: the snippet is cleaned, the handler reads it all.
	errBody := "\xff\x01" + `{"error":"maintenance"}` + strings.Repeat("x", 575)
	var handlerGot string
	rg := newCallRig(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/down":
			w.WriteHeader(http.StatusServiceUnavailable)
			io.WriteString(w, errBody)
		case "/slow":
			<-r.Context().Done() // until the client gives up
		default:
			io.WriteString(w, `{"ok":true}`)
		}
	}, func(ctx context.Context, ev *process.Event[follow], base string) error {
		c := ev.HTTPClient()
		status, body, err := get(ctx, c, base+"/down")
		if err != nil || status != 503 {
			return fmt.Errorf("down: %d, %v", status, err)
		}
		handlerGot = body
		tctx, cancel := context.WithTimeout(ctx, 10*time.Millisecond)
		defer cancel()
		if _, _, err := get(tctx, c, base+"/slow"); !errors.Is(err, context.DeadlineExceeded) {
			return fmt.Errorf("slow: got %v, want a timeout", err)
		}
		if status, _, err := get(ctx, c, base+"/ok"); err != nil || status != 200 {
			return fmt.Errorf("ok: %d, %v", status, err)
		}
		return nil
	})
	rec := rg.deliver(t, "line#t1#calls", Succeeded)
	if handlerGot != errBody {
		t.Errorf("the handler read %q, want the whole body %q", handlerGot, errBody)
	}
	const target = "crm/t1" // the handler's target, for the event's tenant
	if len(rec.Calls) != 3 || rec.CallCount != 3 {
		t.Fatalf("got %d calls (count %d): %+v; want 3", len(rec.Calls), rec.CallCount, rec.Calls)
	}
	down, slow, ok := rec.Calls[0], rec.Calls[1], rec.Calls[2]
	for i, c := range rec.Calls {
		if c.Target != target || c.At.IsZero() || c.Latency < 0 {
			t.Errorf("call %d: got target %q at %v latency %v; want %s, a time, a latency", i, c.Target, c.At, c.Latency, target)
		}
	}
	wantSnippet := webhook.CleanText(errBody[:webhook.MaxCallSnippet], webhook.MaxCallSnippet)
	if down.Status != 503 || down.Error != "" || down.Snippet != wantSnippet || len(down.Snippet) > webhook.MaxCallSnippet ||
		!strings.HasPrefix(down.Snippet, "\uFFFD\uFFFD{\"error\"") {
		t.Errorf("503 call: got %+v, want status 503, the cleaned first %d bytes of the body", down, webhook.MaxCallSnippet)
	}
	if slow.Status != 0 || !strings.Contains(slow.Error, "deadline exceeded") || slow.Snippet != "" || slow.Latency < 10*time.Millisecond {
		t.Errorf("timed-out call: got %+v, want status 0, the deadline error, no snippet, at least 10ms", slow)
	}
	if ok.Status != 200 || ok.Error != "" || ok.Snippet != "" {
		t.Errorf("200 call: got %+v, want status 200, no error, no snippet", ok)
	}
	if !down.At.Before(ok.At) && !down.At.Equal(ok.At) {
		t.Errorf("calls out of order: %v after %v", down.At, ok.At)
	}
}

func TestCallsAddUpOverAttemptsAndStayBounded(t *testing.T) {
	var failing atomic.Bool
	failing.Store(true)
	rg := newCallRig(t, func(w http.ResponseWriter, r *http.Request) {
		switch {
		case failing.Load():
			w.WriteHeader(http.StatusBadGateway)
		case r.URL.Path >= "/12": // the last 8 of 0..19
			w.WriteHeader(http.StatusNoContent)
		}
	}, func(ctx context.Context, ev *process.Event[follow], base string) error {
		fail := failing.Load()
		n := 5
		if !fail {
			n = 20 // more than a record keeps, in one attempt
		}
		for i := range n {
			if _, _, err := get(ctx, ev.HTTPClient(), fmt.Sprintf("%s/%02d", base, i)); err != nil {
				return err
			}
		}
		if fail {
			return errors.New("crm down")
		}
		return nil
	})
	rec := rg.deliver(t, "line#t1#bounded", Retried)
	if len(rec.Calls) != 5 || rec.CallCount != 5 || rec.Calls[0].Status != 502 {
		t.Fatalf("after attempt 1: got %d calls (count %d), want 5 of 502", len(rec.Calls), rec.CallCount)
	}
	failing.Store(false)
	if r := rg.d.Handle(context.Background(), delivery("line#t1#bounded", "line", "follow", follow{UserID: "U1"})); r.Verdict != Succeeded {
		t.Fatalf("attempt 2: got %v (%v)", r.Verdict, r.Err)
	}
	rec, err := rg.mem.Get(context.Background(), "line#t1#bounded")
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.Calls) != webhook.MaxCalls || rec.CallCount != 25 {
		t.Fatalf("after attempt 2: got %d calls (count %d), want %d (count 25)", len(rec.Calls), rec.CallCount, webhook.MaxCalls)
	}
	for i, c := range rec.Calls { // the newest: the last 8 of the second attempt's 20
		if c.Status != http.StatusNoContent {
			t.Errorf("call %d: got %+v, want one of the last 8 (204)", i, c)
		}
	}
}
