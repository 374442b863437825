package queue

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/hookwall/hookwall/shared/base/webhook"
)

// fakeSQS answers SendMessageBatch (AWS JSON 1.0). reject decides, per call
// number and entry id, whether the entry is refused; down refuses the whole call.
type fakeSQS struct {
	mu     sync.Mutex
	calls  [][]string // entry ids per call
	reject func(call int, id string) bool
	down   bool
}

func (f *fakeSQS) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Entries []struct {
			ID                string `json:"Id"`
			MessageBody       string
			MessageAttributes map[string]struct{ StringValue string }
		}
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	f.mu.Lock()
	call := len(f.calls)
	var ids []string
	for _, e := range req.Entries {
		ids = append(ids, e.ID)
	}
	f.calls = append(f.calls, ids)
	f.mu.Unlock()
	w.Header().Set("Content-Type", "application/x-amz-json-1.0")
	if f.down {
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprint(w, `{"__type":"com.amazonaws.sqs#InvalidAddress","message":"no such queue"}`)
		return
	}
	var ok, failed []string
	for _, e := range req.Entries {
		if f.reject != nil && f.reject(call, e.ID) {
			failed = append(failed, fmt.Sprintf(`{"Id":%q,"SenderFault":false,"Code":"InternalError","Message":"try again"}`, e.ID))
			continue
		}
		ok = append(ok, fmt.Sprintf(`{"Id":%q,"MessageId":"m-%s"}`, e.ID, e.ID))
	}
	fmt.Fprintf(w, `{"Successful":[%s],"Failed":[%s]}`, strings.Join(ok, ","), strings.Join(failed, ","))
}

func (f *fakeSQS) sizes() []int {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []int
	for _, c := range f.calls {
		out = append(out, len(c))
	}
	return out
}

func sorted(s []int) []int {
	slices.Sort(s)
	return s
}

func newFakeQueue(t *testing.T, f *fakeSQS) *Queue {
	t.Helper()
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	client := sqs.NewFromConfig(aws.Config{Region: "us-east-1",
		Credentials: credentials.NewStaticCredentialsProvider("test", "test", "")},
		func(o *sqs.Options) {
			o.BaseEndpoint = aws.String(srv.URL)
			o.DisableMessageChecksumValidation = true
			o.RetryMaxAttempts = 1 // the SDK's own retries would hide Send's
		})
	q, err := New(Config{Client: client, URL: srv.URL + "/q", Backoff: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	return q
}

func envelopes(n int) []webhook.Envelope {
	envs := make([]webhook.Envelope, n)
	for i := range envs {
		envs[i] = envOf(fmt.Sprintf("line#t#%d", i), 10)
	}
	return envs
}

func TestSendResendsOnlyRejectedEntries(t *testing.T) {
	var once atomic.Bool // entry 0 is refused the first time only, whichever call carries it
	f := &fakeSQS{reject: func(_ int, id string) bool { return id == "0" && once.CompareAndSwap(false, true) }}
	if err := newFakeQueue(t, f).Send(context.Background(), envelopes(23)); err != nil {
		t.Fatal(err)
	}
	// Batches go SendConcurrency at a time, so their calls come in any order.
	if got := fmt.Sprint(sorted(f.sizes())); got != "[1 3 10 10]" {
		t.Errorf("got batch sizes %s, want 10, 10, 3 and 1 (the rejected entry resent alone)", got)
	}
	if !slices.ContainsFunc(f.calls, func(c []string) bool { return slices.Equal(c, []string{"0"}) }) {
		t.Errorf("calls %v, want [0] resent alone", f.calls)
	}
}

func TestSendNamesTheEntriesNeverAccepted(t *testing.T) {
	f := &fakeSQS{reject: func(_ int, id string) bool { return id == "3" || id == "12" }}
	err := newFakeQueue(t, f).Send(context.Background(), envelopes(15))
	var se *SendError
	if !errors.As(err, &se) || !slices.Equal(se.Failed, []int{3, 12}) {
		t.Fatalf("got %v, want a *SendError for [3 12]", err)
	}
	if se.Err == nil || !strings.Contains(se.Err.Error(), "InternalError") {
		t.Errorf("got reason %v, want SQS's rejection", se.Err)
	}
	if got := fmt.Sprint(sorted(f.sizes())); got != "[1 1 1 1 5 10]" {
		t.Errorf("got batch sizes %s, want 10 and 5, then 1 twice for each batch (3 attempts per batch)", got)
	}
}

func TestSendFailsEveryEntryOfAFailedCall(t *testing.T) {
	f := &fakeSQS{down: true}
	err := newFakeQueue(t, f).Send(context.Background(), envelopes(12))
	var se *SendError
	if !errors.As(err, &se) || len(se.Failed) != 12 || se.Err == nil {
		t.Fatalf("got %v, want a *SendError for all 12 with the call's error", err)
	}
	if !strings.Contains(err.Error(), "12 message(s) not sent") {
		t.Errorf("got %q", err)
	}
}

func TestSendStopsWhenTheContextIsDone(t *testing.T) {
	f := &fakeSQS{reject: func(int, string) bool { return true }}
	q := newFakeQueue(t, f)
	q.retry.Backoff = time.Hour
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	err := q.Send(ctx, envelopes(2))
	var se *SendError
	if !errors.As(err, &se) || len(se.Failed) != 2 || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %v, want both failed with the deadline", err)
	}
	if got := fmt.Sprint(f.sizes()); got != "[2]" {
		t.Errorf("got calls %s, want one", got)
	}
}
