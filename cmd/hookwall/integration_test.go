//go:build integration

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/hookwall/hookwall/shared/aws/awstest"
	"github.com/hookwall/hookwall/shared/aws/queue"
	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/config/settings"
	"github.com/hookwall/hookwall/shared/engine/dispatch"
	"github.com/hookwall/hookwall/shared/engine/intake"
	"github.com/hookwall/hookwall/shared/engine/process"
	"github.com/hookwall/hookwall/shared/state/audit"
	"github.com/hookwall/hookwall/shared/state/store"
)

// The CLI against DynamoDB Local and the SQS server, through the real SDK
// and the production wiring of the receiver (intake.Build): the CLI runs as
// main runs it (run with the environment), only its output captured.

const tenantsDoc = `{"tenants":{
 "acme":{
  "line":{"channelSecret":"5e1f0c1d6a2b4e9f8a7b6c5d4e3f2a10"},
  "wecom":{"token":"T0ken","encodingAESKey":"HookwallLocalDemoKeyNotASecret0123456789abc","corpId":"ww0000000000000001"},
  "wechat":{"token":"T0ken","appId":"wx0000000000000001","encodingAESKey":"HookwallLocalWeChatKeyNotASecret0123456789a"},
  "standard":{"secrets":["whsec_gaTG2ftU1oeRGcKSkQLETLLJ3aPA+Hbw"]}},
 "plain":{"wechat":{"token":"T0ken","appId":"wx0000000000000002"}}}}`

// stack is one test's table, queues, tenants file and receiver.
type stack struct {
	env      map[string]string
	db       *dynamodb.Client
	sq       *sqs.Client
	table    *store.Table
	queues   awstest.Queues
	receiver *httptest.Server
}

func envDefault(t *testing.T, name, value string) {
	if os.Getenv(name) == "" {
		t.Setenv(name, value)
	}
}

func newStack(t *testing.T) *stack {
	t.Helper()
	envDefault(t, "AWS_ENDPOINT_URL_DYNAMODB", awstest.DefaultDynamoDBEndpoint)
	envDefault(t, "AWS_ENDPOINT_URL_SQS", awstest.DefaultSQSEndpoint)
	envDefault(t, "AWS_REGION", "us-east-1")
	envDefault(t, "AWS_ACCESS_KEY_ID", "test")
	envDefault(t, "AWS_SECRET_ACCESS_KEY", "test")
	s := &stack{db: awstest.DynamoDB(t), sq: awstest.SQS(t)}
	name := awstest.NewTable(t, s.db)
	s.queues = awstest.NewQueues(t, s.sq, 10, 30*time.Second)
	tenants := filepath.Join(t.TempDir(), "tenants.json")
	if err := os.WriteFile(tenants, []byte(tenantsDoc), 0o600); err != nil {
		t.Fatal(err)
	}
	s.env = map[string]string{"TABLE_NAME": name, "QUEUE_URL": s.queues.URL, "DLQ_URL": s.queues.DLQURL, "HOOKWALL_TENANTS_FILE": tenants}
	var err error
	if s.table, err = store.New(store.Config{Client: s.db, TableName: name, Function: "processor"}); err != nil {
		t.Fatal(err)
	}
	rs, _, err := settings.LoadReceiver(func(k string) string { return s.env[k] }, intake.Defaults())
	if err != nil {
		t.Fatal(err)
	}
	h, err := intake.Build(context.Background(), rs, slog.New(slog.DiscardHandler), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	s.receiver = httptest.NewServer(h)
	t.Cleanup(s.receiver.Close)
	return s
}

// cli runs the hookwall command with the stack's environment.
func (s *stack) cli(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(context.Background(), args, &out, &errOut, func(k string) string { return s.env[k] })
	return code, out.String(), errOut.String()
}

func body(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// view reads an event through `hookwall events get --json`.
func (s *stack) view(t *testing.T, key string) audit.View {
	t.Helper()
	code, out, errOut := s.cli(t, "events", "get", key, "--json")
	var v audit.View
	if code != exitOK || json.Unmarshal([]byte(out), &v) != nil {
		t.Fatalf("events get %s: exit %d\n%s%s", key, code, out, errOut)
	}
	return v
}

// TestSignSendIsAcceptedForEveryProviderAndMode is must-show 6: `hookwall
// sign … --send` is accepted by the receiver (intake.Build over DynamoDB
// Local and SQS) for every provider and WeChat mode, each event is stored
// and enqueued once, and the URL verifications are answered.
func TestSignSendIsAcceptedForEveryProviderAndMode(t *testing.T) {
	s := newStack(t)
	wechatXML := func(id string) string {
		return `<xml><ToUserName><![CDATA[gh_0000000000001]]></ToUserName><FromUserName><![CDATA[oKzKivH6hwSntH4tXK9ieGIoh47G]]></FromUserName>` +
			`<CreateTime>{{now}}</CreateTime><MsgType><![CDATA[text]]></MsgType><Content><![CDATA[hello ` + id + `]]></Content><MsgId>` + id + `</MsgId></xml>`
	}
	cases := []struct {
		name, provider, tenant, mode, body, key, inPayload string
	}{
		{"line", "line", "acme", "", `{"destination":"U1","events":[{"type":"follow","follow":{"isUnblocked":false},"webhookEventId":"01JSIGNLINE00000000000001",` +
			`"deliveryContext":{"isRedelivery":false},"timestamp":{{now_ms}},"mode":"active","source":{"type":"user","userId":"U2"}}]}`,
			"line#acme#01JSIGNLINE00000000000001", `"userId":"U2"`},
		{"standard", "standard", "acme", "", `{"type":"order.paid","timestamp":"{{now_rfc3339}}","data":{"orderId":"A-1"}}`,
			"", `"orderId":"A-1"`},
		{"wecom", "wecom", "acme", "", `<xml><ToUserName><![CDATA[ww0000000000000001]]></ToUserName><FromUserName><![CDATA[ZhangSan]]></FromUserName>` +
			`<CreateTime>{{now}}</CreateTime><MsgType><![CDATA[text]]></MsgType><Content><![CDATA[order?]]></Content><MsgId>7400000000000000001</MsgId><AgentID>1000002</AgentID></xml>`,
			"wecom#acme#msg:1000002:7400000000000000001", `"Content":"order?"`},
		{"wechat default", "wechat", "acme", "", wechatXML("7300000000000000001"), "wechat#acme#msg:7300000000000000001", `"Content":"hello 7300000000000000001"`},
		{"wechat safe", "wechat", "acme", "safe", wechatXML("7300000000000000002"), "wechat#acme#msg:7300000000000000002", `"Content":"hello 7300000000000000002"`},
		{"wechat compat", "wechat", "acme", "compat", wechatXML("7300000000000000003"), "wechat#acme#msg:7300000000000000003", `"Content":"hello 7300000000000000003"`},
		{"wechat plain", "wechat", "plain", "plain", wechatXML("7300000000000000004"), "wechat#plain#msg:7300000000000000004", `"Content":"hello 7300000000000000004"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args := []string{"sign", c.provider, "--tenant", c.tenant, "--body", body(t, "body", c.body), "--send", s.receiver.URL}
			if c.mode != "" {
				args = append(args, "--mode", c.mode)
			}
			if c.provider == "standard" {
				args = append(args, "--json")
			}
			code, out, errOut := s.cli(t, args...)
			if code != exitOK || !strings.Contains(out, "200") {
				t.Fatalf("exit %d: %s%s", code, out, errOut)
			}
			key := c.key
			if key == "" { // Standard Webhooks: the key is the webhook-id the signer chose; find it in the table.
				code, out, errOut = s.cli(t, "events", "list", "--status", "RECEIVED", "--tenant", c.tenant, "--json")
				var l struct{ Events []listedEvent }
				if code != exitOK || json.Unmarshal([]byte(out), &l) != nil {
					t.Fatalf("events list: exit %d %s%s", code, out, errOut)
				}
				for _, e := range l.Events {
					if e.Provider == "standard" {
						key = e.Key
					}
				}
				if key == "" {
					t.Fatalf("no standard event RECEIVED in %s", out)
				}
			}
			v := s.view(t, key)
			if v.Record.Status != webhook.StatusReceived || !strings.Contains(compact(v.Record.Payload), c.inPayload) {
				t.Errorf("%s: %s with payload %s, want RECEIVED holding %s", key, v.Record.Status, v.Record.Payload, c.inPayload)
			}
			if len(v.History) != 1 || v.History[0].To != webhook.StatusReceived || v.History[0].Function != "receiver" {
				t.Errorf("%s: history %+v, want the receiver's claim", key, v.History)
			}
		})
	}
	for _, provider := range []string{"wecom", "wechat"} {
		code, out, errOut := s.cli(t, "sign", provider, "--tenant", "acme", "--verify", "6386451842216651161", "--send", s.receiver.URL)
		if code != exitOK || !strings.HasSuffix(out, "200 OK\n6386451842216651161\n") {
			t.Errorf("%s verification: exit %d %q %s", provider, code, out, errOut)
		}
	}
	if msgs := awstest.Drain(t, s.sq, s.queues.URL); len(msgs) != len(cases) {
		t.Errorf("%d messages enqueued, want %d (one per event)", len(msgs), len(cases))
	}

	// The events API on the receiver shows the same view.
	resp, err := http.Get(s.receiver.URL + "/events/wecom/acme/msg:1000002:7400000000000000001")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var v audit.View
	if resp.StatusCode != 200 || json.Unmarshal(b, &v) != nil || v.Record.Key != "wecom#acme#msg:1000002:7400000000000000001" ||
		!strings.Contains(string(v.Record.Payload), `"Content":"order?"`) || len(v.History) != 1 {
		t.Errorf("events API: %d %s", resp.StatusCode, b)
	}
	resp, err = http.Get(s.receiver.URL + "/events/wecom/acme/msg:9:9")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 404 {
		t.Errorf("events API for an absent event: %d, want 404", resp.StatusCode)
	}
}

// processor runs the processor engine (dispatch.New, as the processor's
// wiring builds it) over the stack, with one handler that journals a step
// and then fails permanently while broken is set.
type processor struct {
	d              *dispatch.Dispatcher
	broken         atomic.Bool
	steps, handled atomic.Int32
}

func newProcessor(t *testing.T, s *stack) *processor {
	t.Helper()
	p := &processor{}
	p.broken.Store(true)
	reg := process.NewRegistry()
	process.HandleAll(reg, "test.crm", func(ctx context.Context, ev *process.Event[webhook.Envelope]) error {
		p.handled.Add(1)
		if err := ev.Step(ctx, "create-lead", func(context.Context, string) error {
			p.steps.Add(1)
			return nil
		}); err != nil {
			return err
		}
		if p.broken.Load() {
			return process.Permanent(errors.New("crm: 422 lead rejected (the bug)"))
		}
		return nil
	})
	mainQ, err := queue.New(queue.Config{Client: s.sq, URL: s.queues.URL})
	if err != nil {
		t.Fatal(err)
	}
	dlq, err := queue.New(queue.Config{Client: s.sq, URL: s.queues.DLQURL})
	if err != nil {
		t.Fatal(err)
	}
	if p.d, err = dispatch.New(dispatch.Config{Registry: reg, Store: s.table, DLQ: dlq,
		Kernel: dispatch.Kernel{Queue: mainQ}}); err != nil {
		t.Fatal(err)
	}
	return p
}

// drain processes every message on the main queue once, deleting the
// acknowledged ones, and returns the verdicts.
func (p *processor) drain(t *testing.T, s *stack) []dispatch.Verdict {
	t.Helper()
	var verdicts []dispatch.Verdict
	for _, m := range awstest.Drain(t, s.sq, s.queues.URL) {
		res := p.d.Handle(context.Background(), dispatch.Message{MessageID: aws.ToString(m.MessageId),
			ReceiptHandle: aws.ToString(m.ReceiptHandle), Body: []byte(aws.ToString(m.Body))})
		verdicts = append(verdicts, res.Verdict)
		if res.Ack {
			if _, err := s.sq.DeleteMessage(context.Background(), &sqs.DeleteMessageInput{QueueUrl: &s.queues.URL, ReceiptHandle: m.ReceiptHandle}); err != nil {
				t.Fatal(err)
			}
		}
	}
	return verdicts
}

// TestReplayAfterAFixEndsSucceeded is must-show 4 (replay): an event the
// processor FAILED, replayed by `hookwall replay` once the bug is fixed,
// ends SUCCEEDED without running its journaled step again; replaying it
// once more without --force is refused with a clear message and enqueues
// nothing. The range form finds FAILED events through the sweep index,
// counts them in a dry run, and replays them with --yes.
func TestReplayAfterAFixEndsSucceeded(t *testing.T) {
	s := newStack(t)
	p := newProcessor(t, s)
	send := func(id string) string {
		b := body(t, id+".json", `{"destination":"U1","events":[{"type":"follow","follow":{"isUnblocked":false},"webhookEventId":"`+id+`",`+
			`"deliveryContext":{"isRedelivery":false},"timestamp":{{now_ms}},"mode":"active","source":{"type":"user","userId":"U2"}}]}`)
		if code, out, errOut := s.cli(t, "sign", "line", "--tenant", "acme", "--body", b, "--send", s.receiver.URL); code != exitOK {
			t.Fatalf("sign --send: exit %d %s%s", code, out, errOut)
		}
		return "line#acme#" + id
	}
	key := send("01JREPLAY0000000000000001")
	if v := p.drain(t, s); !slices.Equal(v, []dispatch.Verdict{dispatch.Failed}) {
		t.Fatalf("first run: %v, want failed", v)
	}
	if v := s.view(t, key); v.Record.Status != webhook.StatusFailed || !strings.Contains(v.Record.LastError, "the bug") {
		t.Fatalf("after the bug: %s (%s), want FAILED", v.Record.Status, v.Record.LastError)
	}
	if n := len(awstest.Drain(t, s.sq, s.queues.DLQURL)); n != 1 {
		t.Errorf("%d dead letters, want 1", n)
	}

	p.broken.Store(false) // the fix ships
	code, out, errOut := s.cli(t, "replay", key)
	if code != exitOK || !strings.Contains(out, "replayed "+key+": FAILED → RECEIVED") {
		t.Fatalf("replay: exit %d %s%s", code, out, errOut)
	}
	if v := p.drain(t, s); !slices.Equal(v, []dispatch.Verdict{dispatch.Succeeded}) {
		t.Fatalf("after the replay: %v, want succeeded", v)
	}
	v := s.view(t, key)
	if v.Record.Status != webhook.StatusSucceeded {
		t.Fatalf("after the replay: %s, want SUCCEEDED", v.Record.Status)
	}
	if p.steps.Load() != 1 || p.handled.Load() != 2 {
		t.Errorf("step ran %d times and handler %d, want 1 and 2: a replay keeps the journaled steps done unless --fresh-steps "+
			"(the processor must read the journal on a replayed record's attempt 1: shared/engine/dispatch/journal.go load skips it when Attempt <= 1)",
			p.steps.Load(), p.handled.Load())
	}
	var path []string
	for _, h := range v.History {
		path = append(path, fmt.Sprintf("%s>%s/%s", h.From, h.To, h.Function))
	}
	wantPath := []string{">RECEIVED/receiver", "RECEIVED>PROCESSING/processor", "PROCESSING>FAILED/processor",
		"FAILED>RECEIVED/cli", "RECEIVED>PROCESSING/processor", "PROCESSING>SUCCEEDED/processor"}
	if !slices.Equal(path, wantPath) {
		t.Errorf("history %v, want %v", path, wantPath)
	}

	// SUCCEEDED: refused without --force, nothing enqueued.
	code, out, errOut = s.cli(t, "replay", key)
	if code != exitRefused || !strings.Contains(errOut, "refused: "+key+" is SUCCEEDED") || !strings.Contains(errOut, "Add --force") {
		t.Errorf("replay of SUCCEEDED: exit %d %s%s", code, out, errOut)
	}
	if n := len(awstest.Drain(t, s.sq, s.queues.URL)); n != 0 {
		t.Errorf("a refused replay enqueued %d message(s)", n)
	}
	if v := s.view(t, key); v.Record.Status != webhook.StatusSucceeded || v.Record.Version != 6 {
		t.Errorf("a refused replay changed the record: %s version %d", v.Record.Status, v.Record.Version)
	}

	// The range: two new events break, are counted, then replayed.
	p.broken.Store(true)
	k1, k2 := send("01JREPLAY0000000000000002"), send("01JREPLAY0000000000000003")
	if v := p.drain(t, s); !slices.Equal(v, []dispatch.Verdict{dispatch.Failed, dispatch.Failed}) {
		t.Fatalf("second run: %v", v)
	}
	p.broken.Store(false)
	code, out, errOut = s.cli(t, "replay", "--status", "FAILED", "--since", "1h")
	if code != exitOK || !strings.Contains(out, "2 event(s) would be replayed") || !strings.Contains(out, k1) || !strings.Contains(out, k2) ||
		!strings.Contains(out, "dry run: nothing was replayed") {
		t.Fatalf("dry run: exit %d %s%s", code, out, errOut)
	}
	if n := len(awstest.Drain(t, s.sq, s.queues.URL)); n != 0 {
		t.Fatalf("the dry run enqueued %d message(s)", n)
	}
	code, out, errOut = s.cli(t, "replay", "--status", "FAILED", "--since", "1h", "--yes")
	if code != exitOK || !strings.Contains(out, "replayed and enqueued 2, refused 0, missing 0, failed 0") {
		t.Fatalf("replay --yes: exit %d %s%s", code, out, errOut)
	}
	if v := p.drain(t, s); !slices.Equal(v, []dispatch.Verdict{dispatch.Succeeded, dispatch.Succeeded}) {
		t.Fatalf("after the range replay: %v", v)
	}
	code, out, errOut = s.cli(t, "events", "list", "--status", "FAILED,SUCCEEDED", "--since", "1h", "--json")
	var l struct{ Events []listedEvent }
	if code != exitOK || json.Unmarshal([]byte(out), &l) != nil || len(l.Events) != 3 {
		t.Fatalf("events list: exit %d %s%s", code, out, errOut)
	}
	for _, e := range l.Events {
		if e.Status != webhook.StatusSucceeded {
			t.Errorf("%s is %s", e.Key, e.Status)
		}
	}
}

// TestDLQRedriveMovesEveryMessageOnce is must-show 4 (redrive): dlq peek
// shows without removing, and dlq redrive moves every message of the DLQ to
// the main queue exactly once, by SQS's message move task where the
// endpoint has one and by the copy loop (--copy).
func TestDLQRedriveMovesEveryMessageOnce(t *testing.T) {
	s := newStack(t)
	ctx := context.Background()
	fill := func(prefix string, n int) []string {
		var bodies []string
		for i := range n {
			b := fmt.Sprintf(`{"key":"line#acme#%s%02d","provider":"line","tenant":"acme","type":"follow","receivedAt":"2026-12-01T00:00:00Z"}`, prefix, i)
			bodies = append(bodies, b)
			_, err := s.sq.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: &s.queues.DLQURL, MessageBody: aws.String(b),
				MessageAttributes: map[string]sqstypes.MessageAttributeValue{
					queue.AttrEventKey: {DataType: aws.String("String"), StringValue: aws.String(fmt.Sprintf("line#acme#%s%02d", prefix, i))},
					queue.AttrReason:   {DataType: aws.String("String"), StringValue: aws.String("permanent: crm 422")}}})
			if err != nil {
				t.Fatal(err)
			}
		}
		return bodies
	}
	onceEach := func(t *testing.T, want []string) {
		t.Helper()
		got := map[string]int{}
		for _, m := range awstest.Drain(t, s.sq, s.queues.URL) {
			got[aws.ToString(m.Body)]++
			if k := m.MessageAttributes[queue.AttrEventKey].StringValue; k == nil || !strings.Contains(aws.ToString(m.Body), *k) {
				t.Errorf("message %s lost its event key attribute", aws.ToString(m.Body))
			}
		}
		for _, b := range want {
			if got[b] != 1 {
				t.Errorf("message %s arrived %d times, want once", b, got[b])
			}
		}
		if len(got) != len(want) {
			t.Errorf("%d distinct messages on the main queue, want %d", len(got), len(want))
		}
		if left := awstest.Drain(t, s.sq, s.queues.DLQURL); len(left) != 0 {
			t.Errorf("%d message(s) left on the DLQ", len(left))
		}
	}

	bodies := fill("T", 25)
	code, out, errOut := s.cli(t, "dlq", "peek", "--n", "30", "--json")
	var peekedMsgs []peeked
	if code != exitOK || json.Unmarshal([]byte(out), &peekedMsgs) != nil || len(peekedMsgs) != 25 ||
		peekedMsgs[0].Reason != "permanent: crm 422" || !strings.HasPrefix(peekedMsgs[0].EventKey, "line#acme#T") {
		t.Fatalf("peek: exit %d %s%s", code, out, errOut)
	}
	code, out, errOut = s.cli(t, "dlq", "peek", "--n", "3")
	if code != exitOK || !strings.Contains(out, "3 message(s) shown; none removed") {
		t.Fatalf("peek: exit %d %s%s", code, out, errOut)
	}

	t.Run("move task", func(t *testing.T) {
		code, out, errOut := s.cli(t, "dlq", "redrive", "--to", "main")
		if code != exitOK || !strings.Contains(out, "moved 25 message(s)") {
			t.Fatalf("redrive: exit %d %s%s", code, out, errOut)
		}
		onceEach(t, bodies)
	})
	t.Run("copy", func(t *testing.T) {
		bodies := fill("C", 23)
		code, out, errOut := s.cli(t, "dlq", "redrive", "--copy", "--json")
		var res redriveResult
		if code != exitOK || json.Unmarshal([]byte(out), &res) != nil || res.Moved != 23 || res.Method != "copy" {
			t.Fatalf("redrive --copy: exit %d %s%s", code, out, errOut)
		}
		onceEach(t, bodies)
	})
}

// TestTheRunnerIsFoundWithoutEnvironment: with nothing in the environment
// but the run directory, the CLI takes the stack (table, queues, endpoints,
// region, credentials) and the receiver's URL and tenants from the local
// runner's runner.json, as after `make run` on a port other than 3000.
func TestTheRunnerIsFoundWithoutEnvironment(t *testing.T) {
	s := newStack(t)
	runnerEnv := map[string]string{"HOOKWALL_TENANTS_FILE": s.env["HOOKWALL_TENANTS_FILE"]}
	for _, k := range []string{"TABLE_NAME", "QUEUE_URL", "DLQ_URL"} {
		runnerEnv[k] = s.env[k]
	}
	for _, k := range awsVariables {
		if v := os.Getenv(k); v != "" {
			runnerEnv[k] = v
		}
		// The SDK reads the process environment itself: empty, only the
		// runner's values can reach it.
		t.Setenv(k, "")
	}
	runDir := t.TempDir()
	b, err := json.Marshal(map[string]any{"pid": os.Getpid(), "url": s.receiver.URL, "tenantsFile": s.env["HOOKWALL_TENANTS_FILE"],
		"tenants": []string{"acme", "plain"}, "env": runnerEnv})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(runDir, "runner.json"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	cli := func(args ...string) (int, string, string) {
		var out, errOut bytes.Buffer
		code := run(context.Background(), args, &out, &errOut, func(k string) string {
			if k == "HOOKWALL_RUN_DIR" {
				return runDir
			}
			return ""
		})
		return code, out.String(), errOut.String()
	}
	note := "note: using the runner at " + s.receiver.URL

	line := body(t, "line.json", `{"destination":"U1","events":[{"type":"follow","follow":{"isUnblocked":false},`+
		`"webhookEventId":"01JRUNNER0000000000000001","deliveryContext":{"isRedelivery":false},"timestamp":{{now_ms}},`+
		`"mode":"active","source":{"type":"user","userId":"U7"}}]}`)
	code, out, errOut := cli("send", "line", "--tenant", "acme", "--body", line)
	if code != exitOK || !strings.Contains(out, "200 OK") || !strings.Contains(errOut, note) {
		t.Fatalf("send without --url: exit %d\n%s%s", code, out, errOut)
	}

	code, out, errOut = cli("events", "list", "--status", "RECEIVED", "--json")
	var l struct{ Events []listedEvent }
	if code != exitOK || json.Unmarshal([]byte(out), &l) != nil || !strings.Contains(errOut, note) {
		t.Fatalf("events list without TABLE_NAME: exit %d\n%s%s", code, out, errOut)
	}
	if len(l.Events) != 1 || l.Events[0].Key != "line#acme#01JRUNNER0000000000000001" {
		t.Errorf("listed %+v, want the event sent", l.Events)
	}

	code, out, errOut = cli("events", "list", "--tenant", "nosuch")
	if code != exitRefused || !strings.Contains(errOut, `no tenant "nosuch" in the local runner's tenants`) {
		t.Errorf("an unknown tenant: exit %d\n%s%s", code, out, errOut)
	}

	code, out, errOut = cli("dlq", "peek")
	if code != exitOK || !strings.Contains(out, "the dead-letter queue has no visible message") {
		t.Errorf("dlq peek without DLQ_URL: exit %d\n%s%s", code, out, errOut)
	}
	if msgs := awstest.Drain(t, s.sq, s.queues.URL); len(msgs) != 1 {
		t.Errorf("%d messages on the runner's queue, want the one sent", len(msgs))
	}
}
