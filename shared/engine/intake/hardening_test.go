package intake

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/state/store"
)

// grace is the default re-enqueue grace of a test handler.
const grace = DefaultBudget + DefaultGraceMargin

// retryUntilOK delivers body as the platform retries a 5xx: every step of
// the clock, until the answer is 200 (or tries run out).
func retryUntilOK(t *testing.T, h *Handler, st *memStore, body []byte, step time.Duration, tries int) {
	t.Helper()
	for i := range tries {
		r := h.Receive(context.Background(), lineRequest(body, lineSign(body)), Meta{})
		switch {
		case r.Status == 200:
			return
		case r.Status < 500:
			t.Fatalf("retry %d: status %d, want 200 or 5xx", i, r.Status)
		}
		st.clock.Advance(step)
	}
	t.Fatalf("no 200 after %d retries", tries)
}

// assertEachOnce checks that q holds exactly one message per id.
func assertEachOnce(t *testing.T, q *memQueue, ids ...string) {
	t.Helper()
	q.mu.Lock()
	defer q.mu.Unlock()
	got := map[string]int{}
	for _, env := range q.sent {
		got[env.Key]++
	}
	for _, id := range ids {
		if n := got["line#acme#"+id]; n != 1 {
			t.Errorf("%s: %d messages, want 1", id, n)
		}
	}
	if len(q.sent) != len(ids) {
		t.Errorf("%d messages, want %d", len(q.sent), len(ids))
	}
}

// The claim's write is applied but the client sees an error (a timeout):
// the delivery gets 503, and the platform's retry, whenever it comes, ends
// with exactly one message: at once if the undo worked, after the grace if
// the undo failed too.
func TestClaimAppliedButUnanswered(t *testing.T) {
	for _, undoFails := range []bool{false, true} {
		for _, delay := range []time.Duration{0, grace / 2, grace, 10 * grace, time.Hour} {
			t.Run(fmt.Sprintf("undo fails %v, retry after %s", undoFails, delay), func(t *testing.T) {
				st, q := newMemStore(), &memQueue{}
				h := newTestHandler(t, st, q)
				body := lineBody("E1")
				st.applyThenFail, st.undoFails = true, undoFails
				if r := h.Receive(context.Background(), lineRequest(body, lineSign(body)), Meta{}); r.Status != 503 {
					t.Fatalf("status = %d, want 503", r.Status)
				}
				st.applyThenFail, st.undoFails = false, false
				st.clock.Advance(delay)
				retryUntilOK(t, h, st, body, time.Second, 10)
				assertEachOnce(t, q, "E1")
				// Later duplicates add nothing once it is processed.
				st.processAll()
				retryUntilOK(t, h, st, body, time.Second, 1)
				assertEachOnce(t, q, "E1")
			})
		}
	}
}

// The same under a 20-event body: every event enqueued once after retries.
func TestClaimAppliedButUnansweredMultiEvent(t *testing.T) {
	ids := make([]string, 20)
	for i := range ids {
		ids[i] = fmt.Sprintf("E%02d", i)
	}
	st, q := newMemStore(), &memQueue{}
	h := newTestHandler(t, st, q)
	body := lineBody(ids...)
	st.applyThenFail, st.undoFails = true, true
	if r := h.Receive(context.Background(), lineRequest(body, lineSign(body)), Meta{}); r.Status != 503 {
		t.Fatalf("status = %d, want 503", r.Status)
	}
	st.applyThenFail, st.undoFails = false, false
	retryUntilOK(t, h, st, body, 500*time.Millisecond, 20)
	assertEachOnce(t, q, ids...)
}

// A record stranded in RECEIVED is enqueued by a conflicting delivery too
// (same key, another payload), with the stored payload, after the grace.
func TestConflictTakesOverAStrandedRecord(t *testing.T) {
	st, q := newMemStore(), &memQueue{}
	h := newTestHandler(t, st, q)
	body := lineBody("E1")
	st.applyThenFail, st.undoFails = true, true
	h.Receive(context.Background(), lineRequest(body, lineSign(body)), Meta{})
	st.applyThenFail, st.undoFails = false, false
	other := bytes.Replace(body, []byte("hello E1"), []byte("HELLO E1"), 1)
	if r := h.Receive(context.Background(), lineRequest(other, lineSign(other)), Meta{}); r.Status != 503 {
		t.Fatalf("conflict inside the grace: status %d, want 503", r.Status)
	}
	st.clock.Advance(grace)
	if r := h.Receive(context.Background(), lineRequest(other, lineSign(other)), Meta{}); r.Status != 200 {
		t.Fatalf("conflict past the grace: status %d, want 200", r.Status)
	}
	assertEachOnce(t, q, "E1")
	if !bytes.Contains(q.sent[0].Payload, []byte("hello E1")) {
		t.Errorf("payload = %s, want the stored (first) payload", q.sent[0].Payload)
	}
}

// Concurrent duplicates past the grace: one takes over, the others answer
// 503 (they cannot know the winner's send succeeded), one message in all.
func TestConcurrentTakeOverSendsOnce(t *testing.T) {
	st, q := newMemStore(), &memQueue{}
	h := newTestHandler(t, st, q)
	body := lineBody("E1")
	st.applyThenFail, st.undoFails = true, true
	h.Receive(context.Background(), lineRequest(body, lineSign(body)), Meta{})
	st.applyThenFail, st.undoFails = false, false
	st.clock.Advance(grace)
	codes := make([]int, 10)
	concurrentlyDo(10, func(i int) {
		codes[i] = h.Receive(context.Background(), lineRequest(body, lineSign(body)), Meta{}).Status
	})
	ok := 0
	for _, c := range codes {
		if c == 200 {
			ok++
		} else if c != 503 {
			t.Errorf("status %d, want 200 or 503", c)
		}
	}
	if ok < 1 {
		t.Errorf("no duplicate answered 200")
	}
	assertEachOnce(t, q, "E1")
}

func concurrentlyDo(n int, fn func(int)) {
	done := make(chan struct{}, n)
	for i := range n {
		go func() { fn(i); done <- struct{}{} }()
	}
	for range n {
		<-done
	}
}

// lineEventBody returns a signed-ready LINE body with one text event whose
// id, timestamp and text are given.
func lineEventBody(id string, ts int64, text string) []byte {
	return fmt.Appendf(nil, `{"destination":"U1","events":[{"type":"message","message":{"type":"text","id":"1","text":%q},`+
		`"webhookEventId":%q,"deliveryContext":{"isRedelivery":false},"timestamp":%d,`+
		`"source":{"type":"user","userId":"U1"},"replyToken":"r","mode":"active"}]}`, text, id, ts)
}

// Input that could never be stored or sent is refused before anything is
// claimed, with a 4xx, and never answered 503.
func TestUnstorableInputIs4xxAndWritesNothing(t *testing.T) {
	now := time.Now()
	random := make([]byte, 600<<10)
	_, _ = rand.Read(random)
	incompressible := base64.StdEncoding.EncodeToString(random)[:700<<10]
	cases := []struct {
		name string
		body []byte
		want int
	}{
		{"id over the limit", lineEventBody(strings.Repeat("A", webhook.MaxDedupKeyBytes+1), now.UnixMilli(), "hi"), 400},
		{"id of 2 KB", lineEventBody(strings.Repeat("A", 2100), now.UnixMilli(), "hi"), 400},
		{"id with a control character", lineEventBody("E1\u0007", now.UnixMilli(), "hi"), 400},
		{"text with invalid UTF-8", lineEventBody("E1", now.UnixMilli(), "bad \xff byte"), 400},
		{"event older than the window", lineEventBody("E1", now.Add(-DefaultDedupWindow).UnixMilli(), "hi"), 401},
		{"event just past the accepted age", lineEventBody("E1", now.Add(-DefaultDedupWindow+DefaultEventAgeMargin-time.Minute).UnixMilli(), "hi"), 401},
		{"payload too large even compressed", lineEventBody("E1", now.UnixMilli(), incompressible), 413},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st, q := newMemStore(), &memQueue{}
			h := newTestHandler(t, st, q)
			r := h.Receive(context.Background(), lineRequest(c.body, lineSign(c.body)), Meta{})
			if r.Status != c.want {
				t.Fatalf("status = %d, want %d", r.Status, c.want)
			}
			if st.len() != 0 || q.count() != 0 {
				t.Fatalf("records %d, messages %d; want none", st.len(), q.count())
			}
		})
	}
	// The event age is inside the window by the margin: just inside it is accepted.
	st, q := newMemStore(), &memQueue{}
	h := newTestHandler(t, st, q)
	body := lineEventBody("E1", now.Add(-DefaultDedupWindow+DefaultEventAgeMargin+time.Minute).UnixMilli(), "hi")
	if r := h.Receive(context.Background(), lineRequest(body, lineSign(body)), Meta{}); r.Status != 200 || q.count() != 1 {
		t.Fatalf("event inside the accepted age: status %d, messages %d", r.Status, q.count())
	}
}

// A body at the limit full of characters JSON escapes is accepted: it
// compresses well, and its message carries the key alone.
func TestLargeEscapableBodyIsAccepted(t *testing.T) {
	st, q := newMemStore(), &memQueue{}
	h := newTestHandler(t, st, q)
	now := time.Now().UnixMilli()
	overhead := len(lineEventBody("E1", now, ""))
	text := strings.Repeat("<", (DefaultMaxBody-overhead)/6) // \u003c in the JSON body: 6 bytes each
	body := lineEventBody("E1", now, text)
	if len(body) > DefaultMaxBody {
		t.Fatalf("test body is %d bytes, over the limit", len(body))
	}
	r := h.Receive(context.Background(), lineRequest(body, lineSign(body)), Meta{})
	if r.Status != 200 || q.count() != 1 {
		t.Fatalf("status %d, messages %d; want 200 and 1", r.Status, q.count())
	}
	ev := store.NewEvent{Key: "k", Payload: q.sent[0].Payload}
	if err := ev.Prepare(); err != nil {
		t.Fatal(err)
	}
}
