package localrun

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/hookwall/hookwall/shared/aws/bus"
	"github.com/hookwall/hookwall/shared/base/repo"
	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/config/tenants"
	"github.com/hookwall/hookwall/shared/engine/intake"
	"github.com/hookwall/hookwall/shared/protocol/provider/line"
	"github.com/hookwall/hookwall/shared/protocol/provider/standard"
	"github.com/hookwall/hookwall/shared/protocol/providers"
	"github.com/hookwall/hookwall/shared/state/store"
	"github.com/hookwall/hookwall/shared/state/store/memstore"
)

func discard() *slog.Logger { return slog.New(slog.NewJSONHandler(io.Discard, nil)) }

// capture is an intake queue that keeps what it is sent.
type capture struct {
	mu   sync.Mutex
	envs []webhook.Envelope
}

func (c *capture) Send(_ context.Context, envs []webhook.Envelope) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.envs = append(c.envs, envs...)
	return nil
}

// receiverFor serves the receiver (intake on an in-memory store) behind the
// runner's API Gateway adapter, with the demo tenants.
func receiverFor(t *testing.T, tenantsFile string, q intake.Queue) *httptest.Server {
	t.Helper()
	doc, err := tenants.LoadFile(tenantsFile)
	if err != nil {
		t.Fatal(err)
	}
	parsers, err := intake.BuildParsers(doc, intake.ParserOptions{})
	if err != nil {
		t.Fatal(err)
	}
	h, err := intake.New(intake.Config{Parsers: parsers, Store: memstore.New(memstore.Config{}), Queue: q})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle(Route, &APIGateway{Handle: h.HandleAPIGateway, Log: discard()})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func demoTenantsFile(t *testing.T, forwardURL string) string {
	t.Helper()
	path, err := writeDemoTenants(t.TempDir(), forwardURL)
	if err != nil {
		t.Fatal(err)
	}
	return path
}

// Every demo event Send makes is accepted by the receiver as the Lambda
// builds it (intake, behind the API Gateway adapter), and the same id and
// time make the same event: the same key and payload, so a second send is
// a duplicate, not a conflict or a new event.
func TestSendIsAcceptedAndRepeatable(t *testing.T) {
	file := demoTenantsFile(t, "http://127.0.0.1:1/hookwall")
	at := time.Now().Add(-time.Minute).Truncate(time.Second)
	for _, p := range SendProviders() {
		t.Run(p, func(t *testing.T) {
			id := NewDemoID(p)
			var payloads []string
			for range 2 {
				q := &capture{}
				srv := receiverFor(t, file, q)
				var out bytes.Buffer
				if err := Send(context.Background(), SendOptions{Provider: p, ID: id, At: at, URL: srv.URL,
					TenantsFile: file, Tenant: DefaultTenant}, &out); err != nil {
					t.Fatalf("send: %v\n%s", err, out.String())
				}
				if len(q.envs) != 1 {
					t.Fatalf("%d events enqueued, want 1", len(q.envs))
				}
				pr, _ := providers.Lookup(p)
				if env, want := q.envs[0], webhook.Key(p, DefaultTenant, pr.Demo.Key(id)); env.Key != want || !strings.Contains(env.Key, id) {
					t.Errorf("key %q: want %s", env.Key, want)
				}
				payloads = append(payloads, q.envs[0].Key+" "+string(q.envs[0].Payload))
			}
			if payloads[0] != payloads[1] {
				t.Errorf("the same id and time gave two events:\n%s\n%s", payloads[0], payloads[1])
			}
		})
	}
	// Without an id, each send is a new event.
	if NewDemoID(line.Name) == NewDemoID(line.Name) {
		t.Error("NewDemoID repeats")
	}
}

// The send command reads its defaults like the runner and fails on a
// refused event (here: a tenants file with other secrets).
func TestSendCommandFailsOnRefusal(t *testing.T) {
	file := demoTenantsFile(t, "http://127.0.0.1:1/hookwall")
	srv := receiverFor(t, file, &capture{})
	other := filepath.Join(t.TempDir(), "other.json")
	b, _ := os.ReadFile(file)
	if err := os.WriteFile(other, bytes.Replace(b, []byte(demoSetting(t, line.Name, "channelSecret")), []byte("0123456789abcdef0123456789abcdef"), 1), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	err := SendCommand(context.Background(), []string{"line", "-url", srv.URL, "-tenants", other}, func(string) string { return "" },
		t.TempDir(), "", &out, &errOut)
	if err == nil || !strings.Contains(err.Error(), "401") {
		t.Fatalf("got %v, want a 401 refusal\n%s", err, out.String())
	}
	if err := SendCommand(context.Background(), []string{"-id", "x"}, func(string) string { return "" }, t.TempDir(), "", &out, &errOut); err == nil {
		t.Error("no provider: want an error")
	}
}

// The adapter builds the payload 2.0 event the Lambda receives.
func TestAPIGatewayEvent(t *testing.T) {
	var got events.APIGatewayV2HTTPRequest
	a := &APIGateway{Log: discard(), Handle: func(ctx context.Context, ev events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
		if _, ok := ctx.Deadline(); !ok {
			t.Error("no deadline: the function's timeout is missing")
		}
		got = ev
		return events.APIGatewayV2HTTPResponse{StatusCode: 202, Headers: map[string]string{"Content-Type": "text/plain"}, Body: "ok"}, nil
	}}
	mux := http.NewServeMux()
	mux.Handle(Route, a)
	srv := httptest.NewServer(mux)
	defer srv.Close()
	body := []byte{0xff, 0xfe, 'x'}
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/webhooks/wecom/acme?msg_signature=a%2Bb&nonce=1&nonce=2", bytes.NewReader(body))
	req.Header.Add("X-Multi", "a")
	req.Header.Add("X-Multi", "b")
	req.Header.Set("Cookie", "c=1")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	answer, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 202 || string(answer) != "ok" || resp.Header.Get("Content-Type") != "text/plain" {
		t.Errorf("answer %d %q %v", resp.StatusCode, answer, resp.Header)
	}
	if got.Version != "2.0" || got.RawPath != "/webhooks/wecom/acme" || got.RawQueryString != "msg_signature=a%2Bb&nonce=1&nonce=2" ||
		got.PathParameters["provider"] != "wecom" || got.PathParameters["tenant"] != "acme" ||
		got.RequestContext.HTTP.Method != "POST" || got.RequestContext.RequestID == "" {
		t.Errorf("event %+v", got)
	}
	if got.Headers["x-multi"] != "a,b" || got.Headers["x-amzn-trace-id"] == "" || got.QueryStringParameters["nonce"] != "1,2" {
		t.Errorf("headers %v query %v", got.Headers, got.QueryStringParameters)
	}
	if len(got.Cookies) != 1 || got.Cookies[0] != "c=1" {
		t.Errorf("cookies %v", got.Cookies)
	}
	if !got.IsBase64Encoded || got.Body != "//54" {
		t.Errorf("binary body: base64 %v %q", got.IsBase64Encoded, got.Body)
	}
}

// The real EventBridge client, through the bus package, publishes to the
// endpoint, which appends each entry to the outcomes file.
func TestEventBridgeEndpoint(t *testing.T) {
	path := filepath.Join(t.TempDir(), OutcomesFile)
	srv := httptest.NewServer(&EventBridge{Path: path, Log: discard()})
	defer srv.Close()
	client := eventbridge.New(eventbridge.Options{Region: "us-east-1", BaseEndpoint: aws.String(srv.URL),
		Credentials: credentials.NewStaticCredentialsProvider("test", "test", "")})
	pub, err := bus.New(bus.Config{Client: client, BusName: DefaultBus, Attempts: 1})
	if err != nil {
		t.Fatal(err)
	}
	at := time.Now().Truncate(time.Second)
	err = pub.Publish(context.Background(), []webhook.Outcome{
		{Key: "line#demo#A", Provider: "line", Tenant: "demo", Type: "message", Status: webhook.StatusSucceeded, Attempts: 1, At: at},
		{Key: "line#demo#B", Provider: "line", Tenant: "demo", Type: "message", Status: webhook.StatusFailed, Attempts: 5, LastError: "boom"},
	})
	if err != nil {
		t.Fatal(err)
	}
	lines := readLines(t, path)
	if len(lines) != 2 {
		t.Fatalf("%d lines, want 2", len(lines))
	}
	var o Outcome
	if err := json.Unmarshal([]byte(lines[0]), &o); err != nil {
		t.Fatal(err)
	}
	var d bus.Detail
	if err := json.Unmarshal(o.Detail, &d); err != nil {
		t.Fatal(err)
	}
	if o.Bus != DefaultBus || o.Source != bus.Source || o.DetailType != bus.DetailTypeSucceeded || d.Key != "line#demo#A" ||
		d.Status != "SUCCEEDED" || o.ID == "" || o.Time == nil || !o.Time.Equal(at) {
		t.Errorf("outcome %+v detail %+v", o, d)
	}
	// Anything but PutEvents is refused as AWS would.
	resp, err := http.Post(srv.URL, "application/x-amz-json-1.1", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("no target: %d, want 400", resp.StatusCode)
	}
}

func readLines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	return strings.FieldsFunc(string(b), func(r rune) bool { return r == '\n' })
}

// The forward target records each request and checks its signature.
func TestForwardTarget(t *testing.T) {
	path := filepath.Join(t.TempDir(), ForwardedFile)
	srv := httptest.NewServer(&ForwardTarget{Path: path, Secret: DemoForwardSecret, Log: discard()})
	defer srv.Close()
	body := []byte(`{"key":"line#demo#A","payload":{}}`)
	post := func(secret string) {
		sig, err := standard.Sign(secret, "id-1", 1700000000, body)
		if err != nil {
			t.Fatal(err)
		}
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/hookwall", bytes.NewReader(body))
		req.Header.Set("webhook-id", "id-1")
		req.Header.Set("webhook-timestamp", "1700000000")
		req.Header.Set("webhook-signature", sig)
		req.Header.Set("Idempotency-Key", "id-1")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Errorf("status %d", resp.StatusCode)
		}
	}
	post(DemoForwardSecret)
	post("whsec_" + strings.Repeat("A", 32))
	lines := readLines(t, path)
	if len(lines) != 2 {
		t.Fatalf("%d lines", len(lines))
	}
	for i, want := range []string{"ok", "bad"} {
		var f Forwarded
		if err := json.Unmarshal([]byte(lines[i]), &f); err != nil {
			t.Fatal(err)
		}
		if f.Key != "line#demo#A" || f.Signature != want || f.IdempotencyKey != "id-1" {
			t.Errorf("line %d: %+v, want signature %s", i, f, want)
		}
	}
}

// On a terminal each line is short and says the step; otherwise the JSON
// lines pass through unchanged.
func TestLogTap(t *testing.T) {
	var human, js bytes.Buffer
	for _, w := range []io.Writer{NewLogTap(&human, true, false), NewLogTap(&js, false, false)} {
		log := slog.New(slog.NewJSONHandler(w, nil))
		log.Info(StageEnqueued, AttrStage, StageEnqueued, "event_key", "line#demo#A", AttrDetail, "message 1 on queue q", "queue", "q")
		log.Info("event succeeded", "event_key", "line#demo#A", "status", "SUCCEEDED", "attempt", 1, "function", "processor")
		log.Warn("event will be retried", "event_key", "line#demo#B", "error", "forward: POST: 503")
		log.Info("something else", "n", 3)
	}
	lines := strings.Split(strings.TrimSpace(human.String()), "\n")
	if len(lines) != 4 {
		t.Fatalf("human:\n%s", human.String())
	}
	for i, want := range [][]string{
		{"enqueued", "line#demo#A", "message 1 on queue q"},
		{"succeeded", "line#demo#A", "attempt=1"},
		{"retry", "line#demo#B", "event will be retried", `error="forward: POST: 503"`},
		{"info", "something else", "n=3"},
	} {
		for _, w := range want {
			if !strings.Contains(lines[i], w) {
				t.Errorf("line %d %q: no %q", i, lines[i], w)
			}
		}
	}
	if strings.Contains(lines[0], "{") || strings.Contains(lines[1], "function=") || strings.Contains(lines[1], "event succeeded") {
		t.Errorf("human lines carry noise:\n%s", human.String())
	}
	for _, l := range strings.Split(strings.TrimSpace(js.String()), "\n") {
		if !json.Valid([]byte(l)) {
			t.Errorf("not JSON: %s", l)
		}
	}
}

// A second runner on the same run directory is told which one runs.
func TestLockSaysWhoRuns(t *testing.T) {
	dir := t.TempDir()
	l, err := acquireLock(dir, HolderSamLocal)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.write("http://127.0.0.1:3001"); err != nil {
		t.Fatal(err)
	}
	_, err = acquireLock(dir, HolderSamInvoke)
	var already *AlreadyRunningError
	if !errors.As(err, &already) || already.PID != os.Getpid() || already.Page != "http://127.0.0.1:3001" || already.Holder != HolderSamLocal {
		t.Fatalf("got %#v, want AlreadyRunningError with this pid, sam local's URL and its holder", err)
	}
	msg := err.Error()
	for _, want := range []string{"make sam-local is already running", "one runs at a time", "kill"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q lacks %q", msg, want)
		}
	}
	if said, _, _ := strings.Cut(msg, "Lock:"); strings.Contains(said, "hookwall-run") {
		t.Errorf("message %q names hookwall-run, which is not what runs", msg)
	}
	l.release()
	if _, err := os.Stat(filepath.Join(dir, LockFile)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("lock file left behind: %v", err)
	}
	l2, err := acquireLock(dir, HolderRun)
	if err != nil {
		t.Fatalf("after release: %v", err)
	}
	l2.release()
}

func TestLoadConfig(t *testing.T) {
	wd, _ := os.Getwd()
	env := map[string]string{}
	getenv := func(k string) string { return env[k] }
	c, err := LoadConfig(getenv, wd)
	if err != nil {
		t.Fatal(err)
	}
	if c.Port != DefaultPort || c.TableName != "hookwall-events" || !c.Services || c.SweepEvery != DefaultSweepEvery ||
		c.RunDir != filepath.Join(c.Root, ".local", "run") || !repo.IsRoot(c.Root) {
		t.Errorf("defaults %+v", c)
	}
	env = map[string]string{"PORT": "x", "HOOKWALL_RUN_LOG": "xml", "FORWARD_URL": "ftp://a", "HOOKWALL_RUN_SWEEP_EVERY": "1ms"}
	_, err = LoadConfig(getenv, wd)
	for _, name := range []string{"PORT", "HOOKWALL_RUN_LOG", "FORWARD_URL", "HOOKWALL_RUN_SWEEP_EVERY"} {
		if err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: error %v does not name it", name, err)
		}
	}
	if _, err := LoadConfig(func(string) string { return "" }, t.TempDir()); err == nil {
		t.Error("outside the repository: want an error")
	}
}

// The poller hands the handler what the Lambda event source would.
func TestPollerEvent(t *testing.T) {
	p := &Poller{QueueARN: "arn:aws:sqs:us-east-1:000000000000:q", Region: "us-east-1"}
	ev := p.Event([]sqstypes.Message{{
		MessageId: aws.String("m1"), ReceiptHandle: aws.String("rh"), Body: aws.String(`{"key":"k"}`), MD5OfBody: aws.String("md5"),
		Attributes:        map[string]string{"ApproximateReceiveCount": "2"},
		MessageAttributes: map[string]sqstypes.MessageAttributeValue{"a": {DataType: aws.String("String"), StringValue: aws.String("v")}},
	}})
	r := ev.Records[0]
	if r.MessageId != "m1" || r.ReceiptHandle != "rh" || r.Body != `{"key":"k"}` || r.EventSource != "aws:sqs" ||
		r.EventSourceARN != p.QueueARN || r.AWSRegion != "us-east-1" || r.Attributes["ApproximateReceiveCount"] != "2" ||
		*r.MessageAttributes["a"].StringValue != "v" || r.MessageAttributes["a"].DataType != "String" {
		t.Errorf("record %+v", r)
	}
}

// fakeScan is a table of items: a Scan reads them in order, in pages of
// at most Limit (default: half of them, so there are two pages), a Query
// the items of one pk.
type fakeScan struct {
	items []map[string]types.AttributeValue
}

func (f fakeScan) Scan(_ context.Context, in *dynamodb.ScanInput, _ ...func(*dynamodb.Options)) (*dynamodb.ScanOutput, error) {
	from := 0
	if in.ExclusiveStartKey != nil {
		n, _ := strconv.Atoi(in.ExclusiveStartKey["i"].(*types.AttributeValueMemberN).Value)
		from = n
	}
	size := max(1, (len(f.items)+1)/2)
	if in.Limit != nil {
		size = int(*in.Limit)
	}
	to := min(len(f.items), from+size)
	out := &dynamodb.ScanOutput{Items: f.items[from:to]}
	if to < len(f.items) {
		out.LastEvaluatedKey = map[string]types.AttributeValue{"i": &types.AttributeValueMemberN{Value: strconv.Itoa(to)}}
	}
	return out, nil
}

func (f fakeScan) Query(_ context.Context, in *dynamodb.QueryInput, _ ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	key := in.ExpressionAttributeValues[":pk"].(*types.AttributeValueMemberS).Value
	out := &dynamodb.QueryOutput{}
	for _, item := range f.items {
		if pk, _ := item[store.AttrPK].(*types.AttributeValueMemberS); pk != nil && pk.Value == key {
			out.Items = append(out.Items, item)
		}
	}
	return out, nil
}

type fakeReplay struct {
	rec  *store.Record
	keys []string
}

func (f *fakeReplay) Replay(_ context.Context, key string, opts store.ReplayOptions) (store.ReplayResult, error) {
	f.keys = append(f.keys, key)
	if key != f.rec.Key {
		return store.ReplayResult{Outcome: store.ReplayMissing}, nil
	}
	if !opts.Force {
		return store.ReplayResult{Outcome: store.ReplayRefused, Record: f.rec}, nil
	}
	r := *f.rec
	r.Status = webhook.StatusReceived
	return store.ReplayResult{Outcome: store.Replayed, Record: &r}, nil
}

// The page lists the newest events first with history and the current
// claim's steps, and replays one only with the replay header.
func TestPage(t *testing.T) {
	now := time.Now()
	var items []map[string]types.AttributeValue
	for i := range MaxPageEvents + 5 {
		rec := store.Record{Key: "line#demo#E" + string(rune('A'+i%26)) + string(rune('a'+i/26)), SK: store.SKEvent,
			Status: webhook.StatusSucceeded, Version: 3, Provider: "line", Tenant: "demo", EventType: "message",
			ReceivedAt: now.Add(time.Duration(i) * time.Second).UnixMilli(), ExpiresAt: now.Add(time.Hour).Unix(),
			ClaimID: "c1", Payload: store.Payload(`{"x":"<b>1</b>"}`),
			Calls: []webhook.Call{
				{At: now, Target: "forward/demo", Status: 503, Latency: 1200 * time.Millisecond, Snippet: "<i>down</i>"},
				{At: now, Target: "forward/demo", Error: "context deadline exceeded", Latency: 5 * time.Second},
				{At: now, Target: "forward/demo", Status: 200, Latency: 87 * time.Millisecond},
			},
			CallCount: 12, Deliveries: 3, LastDeliveryAt: now.UnixMilli(),
			History: []webhook.HistoryEntry{
				{At: now, To: webhook.StatusReceived, Function: "receiver", Version: 1},
				{At: now, From: webhook.StatusReceived, To: webhook.StatusProcessing, Function: "processor", Attempt: 1, Version: 2},
				{At: now, From: webhook.StatusProcessing, To: webhook.StatusSucceeded, Function: "processor", Attempt: 1, Version: 3},
			}}
		item, err := attributevalue.MarshalMap(rec)
		if err != nil {
			t.Fatal(err)
		}
		items = append(items, item)
	}
	newest := "line#demo#E" + string(rune('A'+(MaxPageEvents+4)%26)) + string(rune('a'+(MaxPageEvents+4)/26))
	items[MaxPageEvents+4][store.StepAttr("hookwall.forward", "in-record")] = &types.AttributeValueMemberN{Value: "2"} // kept in the record
	for _, claim := range []string{"c1", "old"} {
		items = append(items, map[string]types.AttributeValue{
			"pk": &types.AttributeValueMemberS{Value: newest}, "sk": &types.AttributeValueMemberS{Value: store.StepSK("hookwall.forward", "post-"+claim)},
			"claimId": &types.AttributeValueMemberS{Value: claim}, "handler": &types.AttributeValueMemberS{Value: "hookwall.forward"},
			"step": &types.AttributeValueMemberS{Value: "post-" + claim}, "completedAt": &types.AttributeValueMemberN{Value: "1"},
		})
	}
	rp := &fakeReplay{rec: &store.Record{Key: newest, Status: webhook.StatusSucceeded}}
	q := &capture{}
	page := &Page{DB: fakeScan{items}, Table: "t", Replay: rp, Queue: q, Log: discard(), Info: [][2]string{{"table", "t"}}}
	evs, err := page.Events(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != MaxPageEvents || evs[0].Key != newest || !evs[0].ReceivedAt.After(evs[1].ReceivedAt) {
		t.Fatalf("%d events, first %s", len(evs), evs[0].Key)
	}
	if len(evs[0].History) != 3 || len(evs[0].Steps) != 2 || evs[0].Steps[0].Step != "post-c1" || evs[0].Steps[1].Step != "in-record" {
		t.Errorf("history %v steps %v (only the current claim's)", evs[0].History, evs[0].Steps)
	}
	if c := evs[0].Calls; len(c) != 3 || c[0].Status != 503 || c[1].Error != "context deadline exceeded" || evs[0].CallCount != 12 ||
		evs[0].Deliveries != 3 || evs[0].LastDeliveryAt.UnixMilli() != now.UnixMilli() {
		t.Errorf("calls %+v (count %d), deliveries %d at %v", c, evs[0].CallCount, evs[0].Deliveries, evs[0].LastDeliveryAt)
	}
	mux := http.NewServeMux()
	mux.Handle(PagePath, page)
	srv := httptest.NewServer(mux)
	defer srv.Close()
	body := get(t, srv.URL+PagePath)
	for _, want := range []string{newest, "SUCCEEDED", "PROCESSING → SUCCEEDED", "post-c1", "&lt;b&gt;1&lt;/b&gt;", "Replay",
		"calls (12, newest 3 kept)", "<td>forward/demo</td><td>503</td><td>1.2s</td>", "<code>&lt;i&gt;down&lt;/i&gt;</code>",
		"<td>no answer</td><td>5s</td><td class=\"error\">context deadline exceeded</td>", "3 deliveries"} {
		if !strings.Contains(body, want) {
			t.Errorf("page has no %q", want)
		}
	}
	if strings.Contains(body, "post-old") || strings.Contains(body, "<b>1</b>") || strings.Contains(body, "<i>down") {
		t.Error("page shows an old claim's step, or unescaped payload")
	}
	if rows := get(t, srv.URL+PagePath+"events"); !strings.Contains(rows, newest) || strings.Contains(rows, "<html") {
		t.Error("rows fragment")
	}
	var api []EventView
	if err := json.Unmarshal([]byte(get(t, srv.URL+PagePath+"api/events")), &api); err != nil || len(api) != MaxPageEvents {
		t.Errorf("api: %v %d", err, len(api))
	}

	replay := func(key string, header bool) (int, ReplayAnswer) {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+PagePath+"replay", strings.NewReader(url.Values{"key": {key}}.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if header {
			req.Header.Set(ReplayHeader, "1")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var a ReplayAnswer
		_ = json.NewDecoder(resp.Body).Decode(&a)
		return resp.StatusCode, a
	}
	if code, _ := replay(newest, false); code != http.StatusForbidden || len(rp.keys) != 0 {
		t.Errorf("without the header: %d, replays %v", code, rp.keys)
	}
	if code, a := replay(newest, true); code != 200 || a.Outcome != "replayed" || len(q.envs) != 1 || q.envs[0].Key != newest {
		t.Errorf("replay: %d %+v, sent %v", code, a, q.envs)
	}
	if code, a := replay("nope", true); code != http.StatusNotFound || a.Outcome != "missing" {
		t.Errorf("missing: %d %+v", code, a)
	}
}

func get(t *testing.T, u string) string {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: %d %s", u, resp.StatusCode, b)
	}
	return string(b)
}

// The compensator's JSON entry point is driven with the event the runtime
// delivers, and the scheduled event is the one a rule sends.
func TestJSONHandlerAndScheduledEvent(t *testing.T) {
	h := JSONHandler(func(_ context.Context, raw json.RawMessage) (any, error) {
		var ev events.SQSEvent
		if err := json.Unmarshal(raw, &ev); err != nil || len(ev.Records) != 1 || ev.Records[0].EventSource != "aws:sqs" {
			t.Errorf("event %s: %v", raw, err)
		}
		return events.SQSEventResponse{BatchItemFailures: []events.SQSBatchItemFailure{{ItemIdentifier: "m1"}}}, nil
	})
	resp, err := h(context.Background(), events.SQSEvent{Records: []events.SQSMessage{{MessageId: "m1", EventSource: "aws:sqs"}}})
	if err != nil || len(resp.BatchItemFailures) != 1 || resp.BatchItemFailures[0].ItemIdentifier != "m1" {
		t.Errorf("%+v %v", resp, err)
	}
	raw, err := ScheduledEvent(time.Now(), "us-east-1", "r")
	if err != nil {
		t.Fatal(err)
	}
	var shape struct {
		Source     string `json:"source"`
		DetailType string `json:"detail-type"`
	}
	if err := json.Unmarshal(raw, &shape); err != nil || shape.Source != "aws.events" || shape.DetailType != "Scheduled Event" {
		t.Errorf("%s", raw)
	}
}

// A message handed out twice in one long poll (the local server does it
// when its visibility ends during the poll) is in the batch once, with its
// latest receipt handle.
func TestDedupe(t *testing.T) {
	m := func(id, rh string) sqstypes.Message {
		return sqstypes.Message{MessageId: aws.String(id), ReceiptHandle: aws.String(rh)}
	}
	got := dedupe([]sqstypes.Message{m("a", "1"), m("b", "2"), m("a", "3")})
	if len(got) != 2 || *got[0].MessageId != "b" || *got[1].MessageId != "a" || *got[1].ReceiptHandle != "3" {
		t.Errorf("got %v", got)
	}
	one := []sqstypes.Message{m("a", "1")}
	if got := dedupe(one); len(got) != 1 {
		t.Errorf("got %v", got)
	}
}

// demoSetting returns the field of the provider's demo settings.
func demoSetting(t *testing.T, provider, field string) string {
	t.Helper()
	p, ok := providers.Lookup(provider)
	if !ok {
		t.Fatalf("no provider %s", provider)
	}
	b, _ := json.Marshal(p.Demo.Settings)
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	v, _ := m[field].(string)
	return v
}

// The demo tenant has the secrets of infra/local/tenants.json, so the
// samples `make events` signs verify against the runner too.
func TestDemoTenantsMatchInfraLocal(t *testing.T) {
	wd, _ := os.Getwd()
	root, err := FindRoot(wd)
	if err != nil {
		t.Fatal(err)
	}
	infra, err := tenants.LoadFile(filepath.Join(root, "infra", "local", "tenants.json"))
	if err != nil {
		t.Fatal(err)
	}
	demo, err := tenants.LoadFile(demoTenantsFile(t, "http://127.0.0.1:1/hookwall"))
	if err != nil {
		t.Fatal(err)
	}
	a, _ := infra.Tenant(DefaultTenant)
	b, ok := demo.Tenant(DefaultTenant)
	if a == nil || !ok {
		t.Fatal("no demo tenant")
	}
	// Every provider section of infra/local/tenants.json is the registry's
	// demo section (a provider infra does not list yet is left out there).
	raw, err := os.ReadFile(filepath.Join(root, "infra", "local", "tenants.json"))
	if err != nil {
		t.Fatal(err)
	}
	var sections struct {
		Tenants map[string]map[string]json.RawMessage `json:"tenants"`
	}
	if err := json.Unmarshal(raw, &sections); err != nil {
		t.Fatal(err)
	}
	for _, name := range a.Providers() {
		p, _ := providers.Lookup(name)
		want, _ := json.Marshal(p.Demo.Settings)
		var got, wantV any
		_ = json.Unmarshal(sections.Tenants[DefaultTenant][name], &got)
		_ = json.Unmarshal(want, &wantV)
		if !reflect.DeepEqual(got, wantV) {
			t.Errorf("infra/local/tenants.json's demo %s section is %s, the registry's demo %s", name, sections.Tenants[DefaultTenant][name], want)
		}
	}
	if len(a.Providers()) < 4 || !slices.Equal(b.Providers(), providers.Names()) {
		t.Errorf("providers: infra %v, runner's demo %v; want the runner's to be every provider", a.Providers(), b.Providers())
	}
	if b.Forward == nil || b.Forward.URL != "http://127.0.0.1:1/hookwall" || b.Forward.Secret.Reveal() != DemoForwardSecret {
		t.Errorf("forward %+v", b.Forward)
	}
}

// A large payload lives in its own item (store: PAYLOAD#<hash>): the page
// shows it from there.
func TestPageShowsAPayloadStoredApart(t *testing.T) {
	now := time.Now()
	rec := store.Record{Key: "line#demo#BIG", SK: store.SKEvent, Status: webhook.StatusReceived, Version: 1,
		Provider: "line", Tenant: "demo", ReceivedAt: now.UnixMilli(), ExpiresAt: now.Add(time.Hour).Unix(),
		ClaimID: "c1", PayloadRef: store.SKPayloadPrefix + "00ff"}
	item, err := attributevalue.MarshalMap(rec)
	if err != nil {
		t.Fatal(err)
	}
	delete(item, "payload")
	payload, err := attributevalue.MarshalMap(struct {
		PK      string        `dynamodbav:"pk"`
		SK      string        `dynamodbav:"sk"`
		Payload store.Payload `dynamodbav:"payload"`
	}{rec.Key, rec.PayloadRef, store.Payload(`{"big":"` + strings.Repeat("y", 5000) + `"}`)})
	if err != nil {
		t.Fatal(err)
	}
	page := &Page{DB: fakeScan{[]map[string]types.AttributeValue{payload, item}}, Table: "t", Log: discard()}
	evs, err := page.Events(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 1 || !strings.HasPrefix(evs[0].Payload, "{\n  \"big\": \"yyy") {
		t.Fatalf("events %d, payload %.40q", len(evs), evs[0].Payload)
	}
}
