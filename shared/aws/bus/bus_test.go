package bus

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge/types"

	"github.com/hookwall/hookwall/shared/base/webhook"
)

type entry struct{ Source, DetailType, Detail, EventBusName string }

// fakeEventBridge answers PutEvents (AWS JSON 1.1), rejecting the first
// entry of the first call.
type fakeEventBridge struct {
	mu    sync.Mutex
	calls [][]entry
}

func (f *fakeEventBridge) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req struct{ Entries []entry }
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	f.mu.Lock()
	first := len(f.calls) == 0
	f.calls = append(f.calls, req.Entries)
	f.mu.Unlock()
	var out []string
	failed := 0
	for i := range req.Entries {
		if first && i == 0 {
			failed++
			out = append(out, `{"ErrorCode":"InternalFailure","ErrorMessage":"try again"}`)
			continue
		}
		out = append(out, fmt.Sprintf(`{"EventId":"e-%d"}`, i))
	}
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	io.WriteString(w, fmt.Sprintf(`{"FailedEntryCount":%d,"Entries":[%s]}`, failed, strings.Join(out, ",")))
}

// newFakePublisher is a Publisher on a fakeEventBridge, served until the
// test ends.
func newFakePublisher(t *testing.T) (*fakeEventBridge, *Publisher) {
	t.Helper()
	fake := &fakeEventBridge{}
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	client := eventbridge.NewFromConfig(aws.Config{Region: "us-east-1",
		Credentials: credentials.NewStaticCredentialsProvider("test", "test", "")},
		func(o *eventbridge.Options) { o.BaseEndpoint = aws.String(srv.URL) })
	p, err := New(Config{Client: client, BusName: "outcomes", Backoff: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	return fake, p
}

func TestPublishBatchesAndRetriesRejectedEntries(t *testing.T) {
	fake, p := newFakePublisher(t)
	var evs []webhook.Outcome
	for i := range 23 {
		st := webhook.StatusSucceeded
		if i%2 == 1 {
			st = webhook.StatusFailed
		}
		evs = append(evs, webhook.Outcome{Key: fmt.Sprintf("line#t1#%d", i), Provider: "line", Tenant: "t1",
			Type: "follow", Status: st, Attempts: 1, LastError: "x", At: time.Now()})
	}
	if err := p.Publish(context.Background(), evs); err != nil {
		t.Fatal(err)
	}
	var sizes []int
	seen := map[string]int{}
	for _, call := range fake.calls {
		sizes = append(sizes, len(call))
		for _, e := range call {
			if e.Source != Source || e.EventBusName != "outcomes" {
				t.Errorf("got entry %+v", e)
			}
			var d Detail
			if err := json.Unmarshal([]byte(e.Detail), &d); err != nil {
				t.Fatal(err)
			}
			if want := DetailType(webhook.Status(d.Status)); e.DetailType != want {
				t.Errorf("%s: got detail-type %s, want %s", d.Key, e.DetailType, want)
			}
			if strings.Contains(e.Detail, "payload") {
				t.Errorf("detail carries a payload: %s", e.Detail)
			}
			seen[d.Key]++
		}
	}
	if fmt.Sprint(sizes) != "[10 1 10 3]" {
		t.Errorf("got batch sizes %v, want [10 1 10 3] (the rejected entry resent alone)", sizes)
	}
	if len(seen) != 23 || seen["line#t1#0"] != 2 {
		t.Errorf("got %d distinct events, line#t1#0 sent %d times; want 23 and 2", len(seen), seen["line#t1#0"])
	}
}

func TestEmptyBusNameTurnsPublishingOff(t *testing.T) {
	p, err := New(Config{})
	if err != nil || p != nil {
		t.Fatalf("got %v, %v; want nil, nil", p, err)
	}
	if err := p.Publish(context.Background(), []webhook.Outcome{{Key: "k"}}); err != nil {
		t.Errorf("nil publisher: got %v, want nil", err)
	}
}

func TestEntrySizeCountsWhatEventBridgeCounts(t *testing.T) {
	e := types.PutEventsRequestEntry{Source: aws.String("src"), DetailType: aws.String("dt"), Detail: aws.String(`{"a":"é"}`),
		EventBusName: aws.String("ignored"), Resources: []string{"r1", "r22"}}
	if got, want := EntrySize(&e), 3+2+len(`{"a":"é"}`)+2+3; got != want {
		t.Errorf("without Time: got %d, want %d", got, want)
	}
	e.Time = aws.Time(time.Now())
	if got, want := EntrySize(&e), 3+2+len(`{"a":"é"}`)+2+3+14; got != want {
		t.Errorf("with Time: got %d, want %d", got, want)
	}
}

// recordingBus accepts every entry and records the calls.
type recordingBus struct {
	mu    sync.Mutex
	calls [][]types.PutEventsRequestEntry
}

func (b *recordingBus) PutEvents(_ context.Context, in *eventbridge.PutEventsInput, _ ...func(*eventbridge.Options)) (*eventbridge.PutEventsOutput, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.calls = append(b.calls, in.Entries)
	out := &eventbridge.PutEventsOutput{}
	for range in.Entries {
		out.Entries = append(out.Entries, types.PutEventsResultEntry{EventId: aws.String("e")})
	}
	return out, nil
}

func TestPublishSplitsBatchesByBytes(t *testing.T) {
	fake := &recordingBus{}
	p, err := New(Config{Client: fake, BusName: "outcomes", Backoff: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	// Each detail is ~100 KiB: two fit in one call, three do not.
	var evs []webhook.Outcome
	for i := range 5 {
		evs = append(evs, webhook.Outcome{Key: fmt.Sprintf("k%d", i), Status: webhook.StatusFailed,
			LastError: strings.Repeat("x", 100<<10), At: time.Now()})
	}
	if err := p.Publish(context.Background(), evs); err != nil {
		t.Fatal(err)
	}
	var sizes []int
	for _, call := range fake.calls {
		sizes = append(sizes, len(call))
		total := 0
		for i := range call {
			total += EntrySize(&call[i])
		}
		if total > MaxBatchBytes {
			t.Errorf("a call of %d bytes, over %d", total, MaxBatchBytes)
		}
	}
	if fmt.Sprint(sizes) != "[2 2 1]" {
		t.Errorf("got batch sizes %v, want [2 2 1]", sizes)
	}
}

func TestPublishNeverSendsAnOversizedEntry(t *testing.T) {
	fake := &recordingBus{}
	p, err := New(Config{Client: fake, BusName: "outcomes", Backoff: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	evs := []webhook.Outcome{
		{Key: "small", Status: webhook.StatusSucceeded},
		{Key: "huge", Status: webhook.StatusFailed, LastError: strings.Repeat("x", MaxBatchBytes)},
		{Key: "small2", Status: webhook.StatusSucceeded},
	}
	err = p.Publish(context.Background(), evs)
	if !errors.Is(err, webhook.ErrTooLarge) || !strings.Contains(err.Error(), "1 of 3") {
		t.Fatalf("got %v, want 1 of 3 not published, ErrTooLarge", err)
	}
	sent := 0
	for _, call := range fake.calls {
		for _, e := range call {
			sent++
			if strings.Contains(aws.ToString(e.Detail), `"huge"`) {
				t.Error("the oversized entry was sent")
			}
		}
	}
	if sent != 2 {
		t.Errorf("sent %d entries, want 2", sent)
	}
}
