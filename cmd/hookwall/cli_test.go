package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aws/smithy-go"

	"github.com/hookwall/hookwall/shared/base/release"
	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/config/settings"
	"github.com/hookwall/hookwall/shared/protocol/providers"
	"github.com/hookwall/hookwall/shared/state/audit"
	"github.com/hookwall/hookwall/shared/state/store"
)

// want checks an exit code and that stdout and stderr hold the given texts.
func want(t *testing.T, code int, stdout, stderr string, wantCode int, inOut, inErr []string) {
	t.Helper()
	if code != wantCode {
		t.Errorf("exit %d, want %d\nstdout: %s\nstderr: %s", code, wantCode, stdout, stderr)
	}
	for _, s := range inOut {
		if !strings.Contains(stdout, s) {
			t.Errorf("stdout lacks %q:\n%s", s, stdout)
		}
	}
	for _, s := range inErr {
		if !strings.Contains(stderr, s) {
			t.Errorf("stderr lacks %q:\n%s", s, stderr)
		}
	}
}

func TestUsage(t *testing.T) {
	cases := []struct {
		args        []string
		code        int
		inOut, inEr []string
	}{
		{nil, exitUsage, nil, []string{"Commands:", "no command given"}},
		{[]string{"help"}, exitOK, []string{"Commands:", "Exit codes: 0 ok; 1 the operation failed; 2 bad usage", "--json"}, nil},
		{[]string{"--help"}, exitOK, []string{"Commands:"}, nil},
		{[]string{"frobnicate"}, exitUsage, nil, []string{`unknown command "frobnicate"`, "Run 'hookwall --help'"}},
		{[]string{"events"}, exitUsage, nil, []string{"events needs a subcommand"}},
		{[]string{"events", "--help"}, exitOK, []string{"hookwall events list"}, nil},
		{[]string{"events", "delete"}, exitUsage, nil, []string{`unknown command "events delete"`, "Run 'hookwall events --help'"}},
		{[]string{"help", "dlq", "redrive"}, exitOK, []string{"StartMessageMoveTask"}, nil},
		{[]string{"help", "nothing"}, exitUsage, nil, []string{`no command "nothing"`}},
		{[]string{"events", "list", "--bogus"}, exitUsage, nil, []string{"flag provided but not defined: -bogus", "Run 'hookwall events list --help'"}},
		{[]string{"-h"}, exitOK, []string{"  send <provider>", "  version ", "make run", "HOOKWALL_RUN_DIR"}, nil},
		{[]string{"version"}, exitOK, []string{"hookwall " + release.Version + " (build ", runtime.Version()}, nil},
		{[]string{"--version"}, exitOK, []string{"hookwall ", runtime.Version()}, nil},
		{[]string{"version", "--json"}, exitOK, []string{`"goVersion": "` + runtime.Version() + `"`}, nil},
		{[]string{"version", "x"}, exitUsage, nil, []string{`unexpected argument "x"`, "Run 'hookwall version --help'"}},
		{[]string{"help", "send"}, exitOK, []string{"hookwall send <" + strings.Join(providers.Names(), "|") + ">", "|wecom> --tenant T --verify ECHOSTR"}, nil},
		{[]string{"help", "sign"}, exitOK, []string{"hookwall sign <" + strings.Join(providers.Names(), "|") + ">", "  line      X-Line-Signature", "  wechat    the message XML; --mode safe"}, nil},
		{[]string{"frob"}, exitUsage, nil, []string{"(commands: sign, send, events, replay, recover, pause, resume, targets, dlq, new, version)"}},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			code, out, errOut := newFixture().run(t, c.args...)
			want(t, code, out, errOut, c.code, c.inOut, c.inEr)
		})
	}
	for _, c := range commands() {
		t.Run(c.name+" --help", func(t *testing.T) {
			code, out, errOut := newFixture().run(t, append(strings.Fields(c.name), "--help")...)
			want(t, code, out, errOut, exitOK, []string{"Usage:", "Examples:", "Flags:", "-json"}, nil)
		})
	}
}

func TestParseInterleavesFlagsAndArguments(t *testing.T) {
	a := newApp(io.Discard, io.Discard, nil)
	fs := a.flagSet("replay")
	force := fs.Bool("force", false, "")
	pos, err := a.parse("replay", fs, []string{"--force", "line#a#1", "--json", "--", "-x"})
	if err != nil || !*force || !a.json || strings.Join(pos, " ") != "line#a#1 -x" {
		t.Errorf("parse = %q, %v (force %v, json %v)", pos, err, *force, a.json)
	}
}

func TestMissingEnvironmentNamesTheVariable(t *testing.T) {
	for _, c := range []struct {
		unset string
		args  []string
	}{
		{"TABLE_NAME", []string{"events", "get", "line#demo#E1"}},
		{"QUEUE_URL", []string{"replay", "line#demo#E1"}},
		{"DLQ_URL", []string{"dlq", "peek"}},
		{"HOOKWALL_TENANTS_FILE", []string{"sign", "line", "--tenant", "demo", "--body", "x.json"}},
	} {
		t.Run(c.unset, func(t *testing.T) {
			fx := newFixture()
			delete(fx.env, c.unset)
			code, out, errOut := fx.run(t, c.args...)
			want(t, code, out, errOut, exitUsage, nil, []string{"hookwall: " + c.unset, "run `make run` in another terminal (the CLI then finds it)",
				`eval "$(scripts/services-up.sh)"`})
			if strings.Contains(errOut, "hookwall: hookwall") || strings.Contains(errOut, "configuration:") || strings.Contains(errOut, "--help' for usage") {
				t.Errorf("doubled prefix, or a pointer to the flags for an environment error:\n%s", errOut)
			}
			if fx.opens != 0 {
				t.Errorf("AWS was opened despite the missing %s", c.unset)
			}
		})
	}
	fx := newFixture()
	fx.env["QUEUE_URL"] = "127.0.0.1:9324/q"
	code, out, errOut := fx.run(t, "events", "get", "line#demo#E1")
	want(t, code, out, errOut, exitUsage, nil, []string{"QUEUE_URL: want an absolute http(s) URL"})
}

// hasRow reports whether a line of out has exactly these fields.
func hasRow(out string, fields ...string) bool {
	for line := range strings.Lines(out) {
		if strings.Join(strings.Fields(line), " ") == strings.Join(fields, " ") {
			return true
		}
	}
	return false
}

func compact(b []byte) string {
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		return string(b)
	}
	return buf.String()
}

func writeBody(t *testing.T, name, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestSignRefusesBadInput(t *testing.T) {
	line := writeBody(t, "line.json", `{"destination":"U1","events":[]}`)
	xml := writeBody(t, "msg.xml", `<xml><ToUserName>gh_1</ToUserName><FromUserName>o1</FromUserName><CreateTime>{{now}}</CreateTime><MsgType>text</MsgType><Content>x</Content><MsgId>1</MsgId></xml>`)
	cases := []struct {
		name string
		args []string
		code int
		in   string
	}{
		{"no provider", []string{"sign", "--tenant", "demo", "--body", line}, exitUsage, "want one provider (" + strings.Join(providers.Names(), ", ") + ")"},
		{"unknown provider", []string{"sign", "myspace", "--tenant", "demo", "--body", line}, exitUsage, `unknown provider "myspace"`},
		{"no tenant", []string{"sign", "line", "--body", line}, exitUsage, "--tenant is required"},
		{"no body", []string{"sign", "line", "--tenant", "demo"}, exitUsage, "--body is required"},
		{"missing body file", []string{"sign", "line", "--tenant", "demo", "--body", "/nonexistent.json"}, exitUsage, "no such file"},
		{"mode off wechat", []string{"sign", "line", "--tenant", "demo", "--body", line, "--mode", "safe"}, exitUsage, "--mode applies to wechat only"},
		{"bad mode", []string{"sign", "wechat", "--tenant", "demo", "--body", xml, "--mode", "loud"}, exitUsage, `--mode "loud": want safe, compat or plain`},
		{"body not JSON", []string{"sign", "line", "--tenant", "demo", "--body", xml}, exitUsage, "a LINE body is a JSON object"},
		{"unknown tenant", []string{"sign", "line", "--tenant", "acme", "--body", line}, exitRefused, `unknown tenant "acme" in HOOKWALL_TENANTS_FILE=../../infra/local/tenants.json (tenants: demo, demo-plain)`},
		{"provider not configured", []string{"sign", "line", "--tenant", "demo-plain", "--body", line}, exitRefused, `tenant "demo-plain" has no line settings`},
		{"plain with a key", []string{"sign", "wechat", "--tenant", "demo", "--body", xml, "--mode", "plain"}, exitRefused, "use mode safe or compat"},
		{"verify and body", []string{"sign", "wecom", "--tenant", "demo", "--body", xml, "--verify", "1"}, exitUsage, "drop --body"},
		{"verify on line", []string{"sign", "line", "--tenant", "demo", "--verify", "1"}, exitRefused, "line has no GET URL verification"},
		{"bad url", []string{"sign", "line", "--tenant", "demo", "--body", line, "--url", "localhost:3000"}, exitUsage, "not an absolute http(s) URL"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, out, errOut := newFixture().run(t, c.args...)
			want(t, code, out, errOut, c.code, nil, []string{c.in})
			if out != "" {
				t.Errorf("stdout %q on error", out)
			}
		})
	}
}

func TestSignPrintsCurlOrJSON(t *testing.T) {
	body := writeBody(t, "line.json", `{"destination":"U1","events":[{"type":"follow","webhookEventId":"{{id}}","timestamp":{{now_ms}}}]}`)
	fx := newFixture()
	code, out, errOut := fx.run(t, "sign", "line", "--tenant", "demo", "--body", body)
	want(t, code, out, errOut, exitOK, []string{"curl -sS -i -X POST 'http://127.0.0.1:3000/webhooks/line/demo'", "-H 'X-Line-Signature: ",
		fmt.Sprint(`"timestamp":`, testNow.UnixMilli())}, nil)
	code, out, errOut = fx.run(t, "sign", "wechat", "--json", "--tenant", "demo", "--mode", "compat", "--url", "https://api.example.com/prod",
		"--body", writeBody(t, "m.xml", `<xml><ToUserName>gh_1</ToUserName><FromUserName>o1</FromUserName><CreateTime>{{now}}</CreateTime><MsgType>text</MsgType><Content>x</Content><MsgId>1</MsgId></xml>`))
	var got struct{ Method, URL, Body string }
	if err := json.Unmarshal([]byte(out), &got); err != nil || code != exitOK {
		t.Fatalf("exit %d, %v: %s %s", code, err, out, errOut)
	}
	if got.Method != "POST" || !strings.HasPrefix(got.URL, "https://api.example.com/prod/webhooks/wechat/demo?encrypt_type=aes&msg_signature=") ||
		!strings.Contains(got.Body, "<Content>x</Content>") || !strings.Contains(got.Body, "</MsgId><Encrypt><![CDATA[") {
		t.Errorf("signed request %+v", got)
	}
	if fx.opens != 0 {
		t.Errorf("sign with a tenants file opened AWS")
	}
}

func TestSignSendPrintsTheReply(t *testing.T) {
	var gotPath, gotSig string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotPath, gotSig = r.URL.Path, r.Header.Get("X-Line-Signature")
		if r.URL.Path == "/bad/webhooks/line/demo" {
			http.Error(w, "Unauthorized", http.StatusUnauthorized)
			return
		}
		fmt.Fprint(w, "ok")
	}))
	defer srv.Close()
	body := writeBody(t, "line.json", `{"destination":"U1","events":[]}`)
	code, out, errOut := newFixture().run(t, "sign", "line", "--tenant", "demo", "--body", body, "--send", srv.URL)
	want(t, code, out, errOut, exitOK, []string{"HTTP/1.1 200 OK\nok\n"}, nil)
	if gotPath != "/webhooks/line/demo" || gotSig == "" {
		t.Errorf("request to %s with signature %q", gotPath, gotSig)
	}
	code, out, errOut = newFixture().run(t, "sign", "line", "--tenant", "demo", "--body", body, "--send", srv.URL+"/bad", "--json")
	want(t, code, out, errOut, exitFailed, []string{`"status": 401`}, []string{"the receiver answered 401 Unauthorized"})
}

func failedRecord(key string, updated time.Time) *store.Record {
	p, tn, _, _ := webhook.SplitKey(key)
	return &store.Record{Key: key, Provider: p, Tenant: tn, EventType: "follow", Status: webhook.StatusFailed, Version: 4,
		Attempts: 5, UpdatedAt: updated.UnixMilli(), ReceivedAt: updated.Add(-time.Minute).UnixMilli(), ClaimID: "c1",
		Payload: store.Payload(`{"type":"follow"}`), LastError: "crm: 500 Internal Server Error",
		History: []webhook.HistoryEntry{
			{Version: 3, At: updated.Add(-time.Second), From: webhook.StatusRetry, To: webhook.StatusProcessing, Attempt: 5, Owner: "w1", Function: "processor"},
			{Version: 4, At: updated, From: webhook.StatusProcessing, To: webhook.StatusFailed, Attempt: 5, Error: "crm: 500", Function: "processor"},
		}}
}

func TestEventsGetAndHistory(t *testing.T) {
	fx := newFixture()
	key := "line#demo#E1"
	fx.store.put(failedRecord(key, testNow))
	fx.store.steps = []webhook.JournalEntry{{Handler: "crm.lead", Step: "create-lead", Result: []byte(`{"id":7}`), CompletedAt: testNow}}

	code, out, errOut := fx.run(t, "events", "get", key)
	want(t, code, out, errOut, exitOK, []string{"status             FAILED (version 4)", "PAYLOAD\n{\n  \"type\": \"follow\"\n}",
		"crm.lead  create-lead", `{"id":7}`, "HISTORY of line#demo#E1 (2 transition(s); 2 older one(s) dropped)",
	}, nil)
	if !hasRow(out, "4", "2026-12-01T12:00:00Z", "PROCESSING", "FAILED", "5", "processor", "-", "crm:", "500") {
		t.Errorf("no history row for version 4:\n%s", out)
	}

	code, out, errOut = fx.run(t, "events", "get", key, "--json")
	var v audit.View
	if err := json.Unmarshal([]byte(out), &v); err != nil || code != exitOK {
		t.Fatalf("exit %d %v: %s %s", code, err, out, errOut)
	}
	if v.Record.Key != key || compact(v.Record.Payload) != `{"type":"follow"}` || len(v.Steps) != 1 || len(v.History) != 2 {
		t.Errorf("view %+v", v)
	}

	code, out, errOut = fx.run(t, "events", "history", key, "--json")
	want(t, code, out, errOut, exitOK, []string{`"historyDropped": 2`, `"to": "FAILED"`}, nil)

	code, out, errOut = fx.run(t, "events", "get", "line#demo#E2")
	want(t, code, out, errOut, exitRefused, nil, []string{"no event line#demo#E2 in the table (never received, or expired)"})
	for bad, why := range map[string]string{
		"line-demo-E1":    "want provider#tenant#id",
		"myspace#demo#E1": "want one of " + strings.Join(providers.Names(), ", "),
		"line#de mo#E1":   `tenant "de mo"`,
	} {
		code, out, errOut = fx.run(t, "events", "get", bad)
		want(t, code, out, errOut, exitUsage, nil, []string{"bad key", why})
	}
	code, out, errOut = fx.run(t, "events", "history")
	want(t, code, out, errOut, exitUsage, nil, []string{"want one event key"})
}

func TestEventsGetShowsCallsAndDeliveries(t *testing.T) {
	fx := newFixture()
	key := "line#demo#E1"
	rec := failedRecord(key, testNow)
	rec.Calls = []webhook.Call{
		{At: testNow.Add(-3 * time.Second), Target: "crm/demo", Status: 503, Latency: 1200 * time.Millisecond, Snippet: "{\"error\":\"maintenance\"}"},
		{At: testNow.Add(-2 * time.Second), Target: "crm/demo", Error: "context deadline exceeded", Latency: 5 * time.Second},
		{At: testNow.Add(-time.Second), Target: "crm/demo", Status: 200, Latency: 87 * time.Millisecond},
	}
	rec.CallCount, rec.Deliveries, rec.LastDeliveryAt = 12, 3, testNow.UnixMilli()
	fx.store.put(rec)

	code, out, errOut := fx.run(t, "events", "get", key)
	want(t, code, out, errOut, exitOK, []string{"deliveries         3 (last 2026-12-01T12:00:00Z)",
		"CALLS (12 made; the newest 3 kept)"}, nil)
	for _, r := range [][]string{
		{"2026-12-01T11:59:57Z", "crm/demo", "503", "1.2s", `{"error":"maintenance"}`},
		{"2026-12-01T11:59:58Z", "crm/demo", "no", "answer", "5s", "context", "deadline", "exceeded"},
		{"2026-12-01T11:59:59Z", "crm/demo", "200", "87ms", "-"},
	} {
		if !hasRow(out, r...) {
			t.Errorf("no call row %q:\n%s", r, out)
		}
	}

	code, out, errOut = fx.run(t, "events", "get", key, "--json")
	want(t, code, out, errOut, exitOK, []string{`"deliveries": 3`, `"callCount": 12`, `"status": 503`, `"latencyMs": 1200`,
		`"snippet": "{\"error\":\"maintenance\"}"`, `"error": "context deadline exceeded"`}, nil)

	// A record without calls or duplicates.
	fx.store.put(failedRecord("line#demo#E2", testNow))
	code, out, errOut = fx.run(t, "events", "get", "line#demo#E2")
	want(t, code, out, errOut, exitOK, []string{"deliveries         1 (last 2026-12-01T11:59:00Z)", "CALLS (0 made)\nnone recorded"}, nil)
}

func TestEventsListByIndexAndScan(t *testing.T) {
	fx := newFixture()
	for i := range 7 { // FAILED through the index, one per minute
		fx.store.put(failedRecord(fmt.Sprintf("line#demo#F%d", i), testNow.Add(-time.Duration(i)*time.Minute)))
	}
	old := failedRecord("line#demo#OLD", testNow.Add(-2*time.Hour))
	other := failedRecord("line#acme#F0", testNow)
	retry := failedRecord("wecom#demo#R0", testNow)
	retry.Status = webhook.StatusRetry
	done := failedRecord("line#demo#S0", testNow)
	done.Status = webhook.StatusSucceeded
	fx.store.put(old, other, retry, done)

	code, out, errOut := fx.run(t, "events", "list", "--status", "failed", "--since", "1h", "--tenant", "demo")
	want(t, code, out, errOut, exitOK, []string{"KEY", "line#demo#F0", "line#demo#F6", "7 event(s) FAILED updated since 2026-12-01T11:00:00Z, tenant demo"}, nil)
	for _, absent := range []string{"OLD", "acme", "R0", "S0"} {
		if strings.Contains(out, absent) {
			t.Errorf("listing shows %s:\n%s", absent, out)
		}
	}
	if strings.Index(out, "line#demo#F0") > strings.Index(out, "line#demo#F1") {
		t.Errorf("not newest first:\n%s", out)
	}
	if len(fx.store.scans) != 0 {
		t.Errorf("FAILED was scanned: %+v", fx.store.scans)
	}

	code, out, errOut = fx.run(t, "events", "list", "--status", "FAILED,SUCCEEDED", "--limit", "3", "--json")
	var got struct {
		Events     []listedEvent
		Incomplete bool
		Notes      []string
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil || code != exitOK {
		t.Fatalf("exit %d %v: %s %s", code, err, out, errOut)
	}
	if len(got.Events) != 3 || !got.Incomplete {
		t.Errorf("got %d events, incomplete %v; want 3 of more", len(got.Events), got.Incomplete)
	}
	want(t, code, "", errOut, exitOK, nil, []string{"note: SUCCEEDED records are in no index: they were found by a Scan bounded to 10000 items (--scan-max)",
		"note: more than 3 events match"})
	if len(fx.store.scans) != 1 || len(fx.store.scans[0].statuses) != 1 || fx.store.scans[0].statuses[0] != webhook.StatusSucceeded {
		t.Errorf("scans %+v, want one for SUCCEEDED", fx.store.scans)
	}

	fx.store.scanMore = true
	code, out, errOut = fx.run(t, "events", "list", "--status", "DEAD")
	want(t, code, out, errOut, exitOK, []string{"0 event(s) DEAD"}, []string{"stopped before the end of the table, so the list may be incomplete"})

	code, out, errOut = fx.run(t, "events", "list")
	want(t, code, out, errOut, exitOK, []string{"wecom#demo#R0", "RECEIVED, PROCESSING, RETRY, HELD, FAILED, COMPENSATING"}, nil)

	for args, why := range map[string]string{
		"--status DONE":  `--status "DONE": want one or more of RECEIVED`,
		"--since 3 days": "--since",
		"--since -1h":    `--since "-1h"`,
		"--limit 0":      "--limit and --scan-max must be at least 1",
		"--tenant a/b":   `--tenant "a/b": not a tenant name`,
		"extra":          `unexpected argument "extra"`,
	} {
		code, out, errOut = fx.run(t, append([]string{"events", "list"}, strings.Fields(args)...)...)
		want(t, code, out, errOut, exitUsage, nil, []string{why})
	}
	fx.store.stuckErr = errors.New("throttled")
	code, out, errOut = fx.run(t, "events", "list", "--status", "RETRY")
	want(t, code, out, errOut, exitFailed, nil, []string{"query the sweep index", "throttled"})
}

func TestReplayOne(t *testing.T) {
	fx := newFixture()
	fx.store.put(failedRecord("line#demo#E1", testNow))
	code, out, errOut := fx.run(t, "replay", "line#demo#E1")
	want(t, code, out, errOut, exitOK, []string{"replayed line#demo#E1: FAILED → RECEIVED (version 5), enqueued on http://sqs.test/1/main; steps already journaled stay done, undone ones run again"}, nil)
	if got := fx.queue.keys(); len(got) != 1 || got[0] != "line#demo#E1" {
		t.Errorf("enqueued %v", got)
	}
	if o := fx.store.replayed[0]; o.Force || o.FreshSteps || o.Window != 168*time.Hour {
		t.Errorf("replay options %+v, want the default dedup window and nothing forced", o)
	}

	// SUCCEEDED: refused without --force, nothing sent.
	done := failedRecord("line#demo#S1", testNow)
	done.Status = webhook.StatusSucceeded
	fx.store.put(done)
	code, out, errOut = fx.run(t, "replay", "line#demo#S1")
	want(t, code, out, errOut, exitRefused, nil, []string{"refused: line#demo#S1 is SUCCEEDED", "Add --force"})
	if len(fx.queue.sent) != 1 {
		t.Errorf("a refused replay enqueued: %v", fx.queue.keys())
	}
	code, out, errOut = fx.run(t, "replay", "line#demo#S1", "--force", "--fresh-steps", "--json")
	want(t, code, out, errOut, exitOK, []string{`"outcome": "replayed"`, `"from": "SUCCEEDED"`, `"enqueued": true`}, nil)
	if o := fx.store.replayed[len(fx.store.replayed)-1]; !o.Force || !o.FreshSteps {
		t.Errorf("replay options %+v, want Force and FreshSteps", o)
	}

	// A live lease: refused, saying whose.
	busy := failedRecord("line#demo#P1", testNow)
	busy.Status, busy.LeaseOwner, busy.LeaseUntil = webhook.StatusProcessing, "worker-7", testNow.Add(time.Minute).UnixMilli()
	fx.store.put(busy)
	code, out, errOut = fx.run(t, "replay", "line#demo#P1", "--force")
	want(t, code, out, errOut, exitRefused, nil, []string{"PROCESSING under a live lease (owner worker-7"})

	code, out, errOut = fx.run(t, "replay", "line#demo#NONE")
	want(t, code, out, errOut, exitRefused, nil, []string{"no event line#demo#NONE"})

	fx.queue.failCall, fx.queue.failIdx = fx.queue.calls+1, []int{0}
	code, out, errOut = fx.run(t, "replay", "line#demo#E1")
	want(t, code, out, errOut, exitFailed, nil, []string{"line#demo#E1 is RECEIVED again (version 6) but could not be enqueued", "run the replay again"})

	for args, why := range map[string]string{
		"":                                  "give an event KEY, or --status",
		"line#demo#E1 --status FAILED":      "give either an event KEY or --status, not both",
		"line#demo#E1 --yes":                "--yes selects a range",
		"a b":                               "want one event key, got 2 arguments",
		"--status SUCCEEDED":                "add --force if they should run again",
		"--status FAILED,SUCCEEDED --yes":   "add --force",
		"--status FAILED --since yesterday": "--since",
	} {
		code, out, errOut = fx.run(t, append([]string{"replay"}, strings.Fields(args)...)...)
		want(t, code, out, errOut, exitUsage, nil, []string{why})
	}
}

func TestReplayRangeIsADryRunUnlessYes(t *testing.T) {
	fx := newFixture()
	for i := range 23 {
		fx.store.put(failedRecord(fmt.Sprintf("line#demo#F%02d", i), testNow.Add(-time.Duration(i)*time.Second)))
	}
	code, out, errOut := fx.run(t, "replay", "--status", "FAILED", "--since", "1h")
	want(t, code, out, errOut, exitOK, []string{"23 event(s) would be replayed (FAILED updated since 2026-12-01T11:00:00Z):",
		"line#demo#F22", "dry run: nothing was replayed; run again with --yes to replay these 23 event(s)"}, nil)
	if len(fx.store.replayed) != 0 || len(fx.queue.sent) != 0 {
		t.Fatalf("the dry run replayed %d and sent %d", len(fx.store.replayed), len(fx.queue.sent))
	}
	if strings.Index(out, "would be replayed") > strings.Index(out, "KEY") {
		t.Errorf("the count does not come first:\n%s", out)
	}

	code, out, errOut = fx.run(t, "replay", "--status", "FAILED", "--since", "1h", "--yes")
	want(t, code, out, errOut, exitOK, []string{"replaying 23 event(s)", "replayed and enqueued 23, refused 0, missing 0, failed 0"}, nil)
	if len(fx.queue.sent) != 23 || fx.queue.calls != 3 {
		t.Errorf("sent %d envelopes in %d calls, want 23 in 3 batches", len(fx.queue.sent), fx.queue.calls)
	}
	for _, r := range fx.store.recs {
		if r.Status != webhook.StatusReceived {
			t.Errorf("%s is %s after the replay", r.Key, r.Status)
		}
	}
	// Again: nothing FAILED is left.
	code, out, errOut = fx.run(t, "replay", "--status", "FAILED", "--yes", "--json")
	want(t, code, out, errOut, exitOK, []string{`"count": 0`}, nil)
}

func TestReplayRangeReportsWhatWasNotEnqueued(t *testing.T) {
	fx := newFixture()
	for i := range 4 {
		fx.store.put(failedRecord(fmt.Sprintf("line#demo#F%d", i), testNow.Add(-time.Duration(i)*time.Second)))
	}
	fx.queue.failCall, fx.queue.failIdx = 1, []int{1}
	code, out, errOut := fx.run(t, "replay", "--status", "FAILED", "--yes")
	want(t, code, out, errOut, exitFailed, []string{"line#demo#F1  failed", "replayed and enqueued 3, refused 0, missing 0, failed 1"},
		[]string{"1 event(s) not replayed or not enqueued", "throttled"})
}

func TestDLQPeekRemovesNothing(t *testing.T) {
	fx := newFixture()
	dlq := fx.env["DLQ_URL"]
	for i := range 12 {
		fx.sqs.add(dlq, fmt.Sprintf(`{"key":"line#demo#E%d","payload":{}}`, i), "")
	}
	fx.sqs.add(dlq, "not json", "line#demo#RAW")
	code, out, errOut := fx.run(t, "dlq", "peek")
	want(t, code, out, errOut, exitOK, []string{"MESSAGE ID", "line#demo#E0", "line#demo#E9", "10 message(s) shown; none removed"}, nil)
	if strings.Contains(out, "line#demo#E10") {
		t.Errorf("peek showed more than --n:\n%s", out)
	}
	if n := fx.sqs.visible(dlq); n != 13 {
		t.Errorf("%d messages visible after peek, want all 13", n)
	}
	code, out, errOut = fx.run(t, "dlq", "peek", "--n", "50", "--json")
	var got []peeked
	if err := json.Unmarshal([]byte(out), &got); err != nil || code != exitOK {
		t.Fatalf("exit %d %v: %s %s", code, err, out, errOut)
	}
	if len(got) != 13 || got[12].EventKey != "line#demo#RAW" || got[12].Reason != "permanent: boom" || compact(got[12].Body) != `"not json"` ||
		compact(got[0].Body) != `{"key":"line#demo#E0","payload":{}}` || got[0].EventKey != "line#demo#E0" {
		t.Errorf("peeked %+v", got)
	}
	if n := fx.sqs.visible(dlq); n != 13 || fx.sqs.deletes != 0 {
		t.Errorf("%d visible, %d deletes after peek", n, fx.sqs.deletes)
	}
	code, out, errOut = fx.run(t, "dlq", "peek", "--n", "0")
	want(t, code, out, errOut, exitUsage, nil, []string{"--n must be at least 1"})
}

func TestDLQRedriveByMoveTask(t *testing.T) {
	fx := newFixture()
	fx.sqs.moveTask = "complete"
	for i := range 5 {
		fx.sqs.add(fx.env["DLQ_URL"], fmt.Sprint("m", i), "")
	}
	code, out, errOut := fx.run(t, "dlq", "redrive")
	want(t, code, out, errOut, exitOK, []string{"moved 5 message(s) from http://sqs.test/1/dlq to http://sqs.test/1/main (move-task)"}, nil)
	if len(fx.sqs.bodies(fx.env["QUEUE_URL"])) != 5 || len(fx.sqs.bodies(fx.env["DLQ_URL"])) != 0 {
		t.Errorf("main %v, dlq %v", fx.sqs.bodies(fx.env["QUEUE_URL"]), fx.sqs.bodies(fx.env["DLQ_URL"]))
	}
}

func TestDLQRedriveByCopyLosesNothing(t *testing.T) {
	fx := newFixture()
	main, dlq := fx.env["QUEUE_URL"], fx.env["DLQ_URL"]
	var bodies []string
	for i := range 25 {
		b := fmt.Sprint("m", i)
		bodies = append(bodies, b)
		fx.sqs.add(dlq, b, fmt.Sprint("line#demo#E", i))
	}
	// A crash after the second batch was sent, before it was deleted.
	fx.sqs.failDeletes = 0
	code, out, errOut := fx.run(t, "dlq", "redrive", "--to", "main")
	want(t, code, out, errOut, exitOK, []string{"moved 25 message(s)", "(copy)"}, []string{"SQS refused a message move task (UnsupportedOperation: not here); moving by receive → send → delete instead"})
	got := fx.sqs.bodies(main)
	if strings.Join(got, ",") != strings.Join(bodies, ",") || len(fx.sqs.bodies(dlq)) != 0 {
		t.Fatalf("main %v, dlq %v: want every message once, in order", got, fx.sqs.bodies(dlq))
	}
	if k := fx.sqs.queues[main][3].attrs["hookwall-event-key"].StringValue; k == nil || *k != "line#demo#E3" {
		t.Errorf("attributes not carried over: %v", fx.sqs.queues[main][3].attrs)
	}
}

func TestDLQRedriveCrashBetweenSendAndDelete(t *testing.T) {
	fx := newFixture()
	main, dlq := fx.env["QUEUE_URL"], fx.env["DLQ_URL"]
	for i := range 15 {
		fx.sqs.add(dlq, fmt.Sprint("m", i), "")
	}
	fx.sqs.failDeletes = 1
	code, out, errOut := fx.run(t, "dlq", "redrive", "--copy")
	want(t, code, out, errOut, exitFailed, nil, []string{"redrive stopped after moving 0 message(s)", "a rerun sends them again"})
	// Nothing lost: every message is on the DLQ, the main queue, or both.
	all := map[string]bool{}
	for _, b := range append(fx.sqs.bodies(main), fx.sqs.bodies(dlq)...) {
		all[b] = true
	}
	if len(all) != 15 {
		t.Fatalf("%d distinct messages left of 15", len(all))
	}
	// The stranded batch becomes visible again (its hiding runs out); a rerun finishes.
	for _, m := range fx.sqs.queues[dlq] {
		m.hidden = false
	}
	code, out, errOut = fx.run(t, "dlq", "redrive", "--copy")
	want(t, code, out, errOut, exitOK, []string{"moved 15 message(s)"}, nil)
	if n := len(fx.sqs.bodies(main)); n != 25 || len(fx.sqs.bodies(dlq)) != 0 {
		t.Errorf("main holds %d (15 and the 10 sent twice), dlq %d", n, len(fx.sqs.bodies(dlq)))
	}
	code, out, errOut = fx.run(t, "dlq", "redrive", "--to", "ftp://x")
	want(t, code, out, errOut, exitUsage, nil, []string{`--to "ftp://x": want main or a queue URL`})
	code, out, errOut = fx.run(t, "dlq", "redrive", "--to", dlq)
	want(t, code, out, errOut, exitUsage, nil, []string{"--to is the dead-letter queue itself"})
}

func TestDLQRedriveKeepsWhatCouldNotBeSent(t *testing.T) {
	fx := newFixture()
	main, dlq := fx.env["QUEUE_URL"], fx.env["DLQ_URL"]
	for _, b := range []string{"a", "poison", "b"} {
		fx.sqs.add(dlq, b, "")
	}
	fx.sqs.reject = "poison"
	code, out, errOut := fx.run(t, "dlq", "redrive", "--copy")
	want(t, code, out, errOut, exitFailed, []string{"moved 2 message(s)"}, []string{"1 message(s) could not be sent and stay on the dead-letter queue"})
	if got := fx.sqs.bodies(dlq); len(got) != 1 || got[0] != "poison" {
		t.Errorf("dlq %v, want the refused message kept", got)
	}
	if got := fx.sqs.bodies(main); strings.Join(got, ",") != "a,b" {
		t.Errorf("main %v", got)
	}
}

func TestListSaysWhenTheIndexIsReadOnlyInPart(t *testing.T) {
	fx := newFixture()
	for i := range 7 {
		fx.store.put(failedRecord(fmt.Sprintf("line#demo#F%d", i), testNow))
	}
	code, out, errOut := fx.run(t, "events", "list", "--status", "FAILED", "--scan-max", "3", "--json")
	want(t, code, out, errOut, exitOK, []string{`"incomplete": true`}, []string{"the sweep index holds more than 3 entries; only those were read"})
	var got struct{ Events []listedEvent }
	if err := json.Unmarshal([]byte(out), &got); err != nil || len(got.Events) != 3 {
		t.Errorf("%d events listed, want the 3 read: %v", len(got.Events), err)
	}
}

func TestProgressOnlyOnATerminal(t *testing.T) {
	for _, terminal := range []bool{false, true} {
		fx := newFixture()
		for i := range 3 {
			fx.store.put(failedRecord(fmt.Sprintf("line#demo#F%d", i), testNow))
		}
		var out, errOut bytes.Buffer
		a := newApp(&out, &errOut, func(k string) string { return fx.env[k] })
		a.now = func() time.Time { return testNow }
		a.open = func(context.Context, settings.CLI) (*backend, error) {
			return &backend{events: fx.store, scan: fx.store, queue: fx.queue, sqs: fx.sqs}, nil
		}
		a.progress = terminal
		if code := a.main(context.Background(), []string{"replay", "--status", "FAILED", "--yes"}); code != exitOK {
			t.Fatalf("exit %d: %s", code, errOut.String())
		}
		if got := strings.Contains(errOut.String(), "\r\033[Kreplay: 3/3"); got != terminal {
			t.Errorf("terminal %v: progress shown %v: %q", terminal, got, errOut.String())
		}
		if strings.Contains(out.String(), "\r") {
			t.Errorf("progress on stdout: %q", out.String())
		}
	}
}

func TestListingAnUnknownTenantIsNeverASilentZero(t *testing.T) {
	// A tenants document names the tenants: an unknown one is refused, as sign refuses it.
	fx := newFixture()
	fx.store.put(failedRecord("line#demo#F1", testNow))
	code, out, errOut := fx.run(t, "events", "list", "--tenant", "nosuch")
	want(t, code, out, errOut, exitRefused, nil, []string{`hookwall: no tenant "nosuch" in HOOKWALL_TENANTS_FILE=../../infra/local/tenants.json (tenants: demo, demo-plain)`})
	if out != "" {
		t.Errorf("stdout %q on a refusal", out)
	}
	code, out, errOut = fx.run(t, "replay", "--status", "FAILED", "--tenant", "nosuch")
	want(t, code, out, errOut, exitRefused, nil, []string{`no tenant "nosuch"`})

	// A known tenant with no events: a plain 0.
	code, out, errOut = fx.run(t, "events", "list", "--tenant", "demo-plain")
	want(t, code, out, errOut, exitOK, []string{"0 event(s)", "tenant demo-plain"}, nil)
	if errOut != "" {
		t.Errorf("stderr %q for a known tenant", errOut)
	}

	// No tenants document to check against: 0, with a note asking about the name.
	delete(fx.env, "HOOKWALL_TENANTS_FILE")
	fx.env["HOOKWALL_RUN_DIR"] = t.TempDir()
	code, out, errOut = fx.run(t, "events", "list", "--tenant", "nosuch", "--json")
	want(t, code, out, errOut, exitOK, []string{`"events": []`}, []string{`note: 0 events for tenant "nosuch"; is the name right? (no tenants document`})
}

func TestVersionReadsTheBuildInfo(t *testing.T) {
	info := &debug.BuildInfo{GoVersion: "go1.26.1", Main: debug.Module{Path: "github.com/hookwall/hookwall", Version: "v1.4.0"},
		Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "c77e49b550ba"}, {Key: "vcs.time", Value: "2026-12-01T12:00:00Z"},
			{Key: "vcs.modified", Value: "true"}}}
	v := readVersion(info, true)
	if got := v.String(); got != "hookwall "+release.Version+" (build v1.4.0), revision c77e49b550ba (modified) of 2026-12-01T12:00:00Z, go1.26.1" {
		t.Errorf("version line %q", got)
	}
	if !v.Modified || v.Revision != "c77e49b550ba" || v.Module != "github.com/hookwall/hookwall" {
		t.Errorf("version %+v", v)
	}
	if v.Release != release.Version {
		t.Errorf("release %q, want %q", v.Release, release.Version)
	}
	if got := readVersion(nil, false).String(); got != "hookwall "+release.Version+" (build unknown), unknown" {
		t.Errorf("without build information: %q", got)
	}
}

// Every message a newcomer meets carries the "hookwall:" prefix once.
func TestErrorsArePrefixedOnce(t *testing.T) {
	body := writeBody(t, "line.json", `{"destination":"U1","events":[]}`)
	runs := [][]string{
		{"frob"}, {"events"}, {"events", "list", "--since", "x"}, {"events", "get", "x"},
		{"sign", "line", "--tenant", "acme", "--body", body}, {"send", "line", "--tenant", "demo", "--body", body, "--url", "x:1"},
		{"replay"}, {"dlq", "peek", "--n", "0"}, {"version", "x"},
	}
	for _, args := range runs {
		fx := newFixture()
		code, out, errOut := fx.run(t, args...)
		if code == exitOK || !strings.HasPrefix(errOut, "hookwall: ") && !strings.Contains(errOut, "\nhookwall: ") {
			t.Errorf("%q: exit %d, stderr %q", args, code, errOut)
		}
		if strings.Contains(errOut, "hookwall: hookwall") {
			t.Errorf("%q: doubled prefix: %q", args, errOut)
		}
		_ = out
	}
	fx := newFixture()
	fx.env["HOOKWALL_TENANTS_FILE"] = "/nonexistent/tenants.json"
	code, _, errOut := fx.run(t, "sign", "line", "--tenant", "demo", "--body", body)
	want(t, code, "", errOut, exitUsage, nil, []string{"hookwall: HOOKWALL_TENANTS_FILE=/nonexistent/tenants.json: "})
	if strings.Contains(errOut, "--help' for usage") {
		t.Errorf("a pointer to the flags for a bad tenants file: %q", errOut)
	}
}

// A failure a newcomer meets first says what to check.
func TestFailuresSayWhatToCheck(t *testing.T) {
	for err, hint := range map[error]string{
		fmt.Errorf("store: stuck shard 0: %w", &smithy.GenericAPIError{Code: "ResourceNotFoundException", Message: "Cannot do operations on a non-existent table"}): "check TABLE_NAME, AWS_ENDPOINT_URL_DYNAMODB",
		fmt.Errorf("dial tcp 127.0.0.1:8000: %w", syscall.ECONNREFUSED):                                                                                             "is the local stack running? `make run`",
	} {
		fx := newFixture()
		fx.store.stuckErr = err
		code, out, errOut := fx.run(t, "events", "list")
		want(t, code, out, errOut, exitFailed, nil, []string{"hookwall: query the sweep index (shard 0): " + err.Error() + "\n", hint})
	}
	srv := httptest.NewServer(http.NotFoundHandler())
	srv.Close() // nothing listens at its address any more
	body := writeBody(t, "line.json", `{"destination":"U1","events":[]}`)
	code, out, errOut := newFixture().run(t, "sign", "line", "--tenant", "demo", "--body", body, "--send", srv.URL)
	want(t, code, out, errOut, exitFailed, nil, []string{"connection refused", "is the local stack running?"})
}
