package localrun

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/config/runfile"
	"github.com/hookwall/hookwall/shared/engine/intake"
	"github.com/hookwall/hookwall/shared/state/store"
)

// served is the runner's main handler (Handler) served by its own server
// (newServer) on a loopback port, as Run serves it, with a receiver that
// counts its invocations and a page over one SUCCEEDED record.
type served struct {
	base    string // http://127.0.0.1:<port>
	port    int
	calls   atomic.Int64 // receiver invocations
	replays *fakeReplay
	queue   *capture
	key     string
}

func serve(t *testing.T, maxBody int64, to Timeouts) *served {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &served{port: ln.Addr().(*net.TCPAddr).Port, key: "line#demo#K1", queue: &capture{}}
	s.base = "http://" + ln.Addr().String()
	s.replays = &fakeReplay{rec: &store.Record{Key: s.key, Status: webhook.StatusSucceeded}}
	rec := store.Record{Key: s.key, SK: store.SKEvent, Status: webhook.StatusSucceeded, Version: 3, Provider: "line",
		Tenant: "demo", ReceivedAt: time.Now().UnixMilli(), ExpiresAt: time.Now().Add(time.Hour).Unix(),
		Payload: store.Payload(`{"secret":"payload"}`)}
	item, err := attributevalue.MarshalMap(rec)
	if err != nil {
		t.Fatal(err)
	}
	page := &Page{DB: fakeScan{[]map[string]types.AttributeValue{item}}, Table: "t", Replay: s.replays, Queue: s.queue, Log: discard()}
	recv := func(ctx context.Context, e events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
		s.calls.Add(1)
		body, _ := json.Marshal(map[string]any{"route": e.RouteKey, "params": e.PathParameters, "bytes": len(e.Body)})
		return events.APIGatewayV2HTTPResponse{StatusCode: 200, Body: string(body)}, nil
	}
	srv := newServer(Handler(s.port, recv, maxBody, discard(), page), to)
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return s
}

// do sends a request to s with Host host and optional headers (name, value pairs).
func (s *served) do(t *testing.T, method, path, host string, body io.Reader, headers ...string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, s.base+path, body)
	if err != nil {
		t.Fatal(err)
	}
	req.Host = host
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// Issue 16 item 2: the page, its API and the events API answer only the
// runner's loopback origin (DNS rebinding): a foreign Host is refused for
// GET api/events and POST replay, and nothing is replayed; a foreign
// Origin is refused; the loopback names pass; the webhook route answers
// any Host.
func TestLocalOnlyRefusesForeignHostsAndOrigins(t *testing.T) {
	s := serve(t, intake.DefaultMaxBody, Timeouts{})
	port := strconv.Itoa(s.port)
	replayForm := func() io.Reader { return strings.NewReader(url.Values{"key": {s.key}}.Encode()) }
	form := []string{"Content-Type", "application/x-www-form-urlencoded", ReplayHeader, "1"}

	for _, host := range []string{"attacker.example:" + port, "attacker.example", "127.0.0.1:1", "127.0.0.2:" + port, "localhost.attacker.example:" + port} {
		code, body := s.do(t, http.MethodGet, PagePath+"api/events", host, nil)
		if code != http.StatusMisdirectedRequest || strings.Contains(body, "payload") || !strings.Contains(body, "refused") {
			t.Errorf("GET api/events with Host %s: %d %q, want 421 without the events", host, code, body)
		}
		code, _ = s.do(t, http.MethodPost, PagePath+"replay", host, replayForm(), append(form, "Origin", "http://"+host)...)
		if code != http.StatusMisdirectedRequest {
			t.Errorf("POST replay with Host %s: %d, want 421", host, code)
		}
		for _, path := range []string{PagePath, PagePath + "events", "/events/line/demo/K1", "/"} {
			if code, _ := s.do(t, http.MethodGet, path, host, nil); code != http.StatusMisdirectedRequest {
				t.Errorf("GET %s with Host %s: %d, want 421", path, host, code)
			}
		}
	}
	if len(s.replays.keys) != 0 || len(s.queue.envs) != 0 || s.calls.Load() != 0 {
		t.Fatalf("a refused request got through: replays %v, sent %d, receiver calls %d", s.replays.keys, len(s.queue.envs), s.calls.Load())
	}
	// Same host, foreign origin: refused too.
	code, _ := s.do(t, http.MethodPost, PagePath+"replay", "127.0.0.1:"+port, replayForm(), append(form, "Origin", "http://attacker.example:"+port)...)
	if code != http.StatusForbidden || len(s.replays.keys) != 0 {
		t.Errorf("POST replay with a foreign Origin: %d (replays %v), want 403 and no replay", code, s.replays.keys)
	}

	for _, host := range []string{"127.0.0.1:" + port, "localhost:" + port, "LOCALHOST:" + port, "[::1]:" + port} {
		code, body := s.do(t, http.MethodGet, PagePath+"api/events", host, nil)
		if code != http.StatusOK || !strings.Contains(body, s.key) {
			t.Errorf("GET api/events with Host %s: %d %.80q", host, code, body)
		}
		code, _ = s.do(t, http.MethodPost, PagePath+"replay", host, replayForm(), append(form, "Origin", "http://"+host)...)
		if code != http.StatusOK {
			t.Errorf("POST replay with Host and Origin %s: %d, want 200", host, code)
		}
	}
	if len(s.replays.keys) != 4 {
		t.Errorf("replays %v, want 4", s.replays.keys)
	}
	if code, body := s.do(t, http.MethodPost, "/webhooks/line/demo", "tunnel.example.com", strings.NewReader("{}")); code != 200 || s.calls.Load() != 1 {
		t.Errorf("webhook through a tunnel's Host: %d %s (calls %d)", code, body, s.calls.Load())
	}
	// The events API goes through the adapter with API Gateway's route key.
	code, body := s.do(t, http.MethodGet, "/events/line/demo/K%231", "127.0.0.1:"+port, nil)
	if code != 200 || !strings.Contains(body, `"route":"`+intake.EventsRoute+`"`) || !strings.Contains(body, `"key":"K#1"`) {
		t.Errorf("events API: %d %s", code, body)
	}
}

// rawRequest writes head and then body to a new connection to addr
// without waiting, and returns the connection.
func rawConn(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// closedWithin reads from c until the server closes it (EOF or reset),
// failing the test if it is still open after bound.
func closedWithin(t *testing.T, c net.Conn, bound time.Duration, what string) {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(bound))
	_, err := io.Copy(io.Discard, c)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("%s: the connection is still open after %s", what, bound)
	}
}

// Issue 16 item 3: bodies are cut at the receiver's limit while they are
// read (declared too large: 413 before a byte of it is read; streamed
// chunked: 413 at the limit), and the receiver is never invoked.
func TestBodiesCutAtTheReceiversLimit(t *testing.T) {
	const limit = 64 << 10
	s := serve(t, limit, Timeouts{})
	addr := strings.TrimPrefix(s.base, "http://")

	// Declared 10 MB, only 1 KB sent, then nothing: the answer comes anyway.
	c := rawConn(t, addr)
	fmt.Fprintf(c, "POST /webhooks/line/demo HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n%s", 10<<20, strings.Repeat("a", 1024))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("declared too large: %v", err)
	}
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("declared too large: %s, want 413", resp.Status)
	}

	// Chunked, without an end: cut at the limit.
	c = rawConn(t, addr)
	fmt.Fprintf(c, "POST /webhooks/line/demo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n")
	chunk := strings.Repeat("b", 8<<10)
	go func() { // streams up to 4× the limit, stops when the server closes
		for range 4 * limit / len(chunk) {
			if _, err := fmt.Fprintf(c, "%x\r\n%s\r\n", len(chunk), chunk); err != nil {
				return
			}
		}
	}()
	resp, err = http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("streamed too large: %v", err)
	}
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("streamed too large: %s, want 413", resp.Status)
	}
	if n := s.calls.Load(); n != 0 {
		t.Errorf("the receiver was invoked %d times with a body over its limit", n)
	}
	// At the limit: passed on.
	if code, body := s.do(t, http.MethodPost, "/webhooks/line/demo", "x", strings.NewReader(strings.Repeat("c", limit))); code != 200 ||
		!strings.Contains(body, `"bytes":`+strconv.Itoa(limit)) {
		t.Errorf("a body at the limit: %d %s", code, body)
	}
}

// Issue 16 item 3: a connection whose body stalls is closed after the read
// timeout, an idle keep-alive connection after the idle timeout.
func TestStalledAndIdleConnectionsAreClosed(t *testing.T) {
	s := serve(t, intake.DefaultMaxBody, Timeouts{Read: 300 * time.Millisecond, Idle: 300 * time.Millisecond})
	addr := strings.TrimPrefix(s.base, "http://")

	c := rawConn(t, addr)
	fmt.Fprintf(c, "POST /webhooks/line/demo HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n%s", strings.Repeat("a", 990))
	closedWithin(t, c, 20*time.Second, "stalled body")
	if s.calls.Load() != 0 {
		t.Error("a stalled body reached the receiver")
	}

	c = rawConn(t, addr)
	fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n\r\n", PagePath+"api/events", s.port)
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("keep-alive request: %v %v", resp, err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	closedWithin(t, c, 20*time.Second, "idle keep-alive connection")
}

// The runner's defaults bound every read; the test config can shorten them.
func TestServerTimeoutsAreSet(t *testing.T) {
	srv := newServer(http.NotFoundHandler(), Timeouts{})
	if srv.ReadHeaderTimeout <= 0 || srv.ReadTimeout <= 0 || srv.WriteTimeout <= 0 || srv.IdleTimeout <= 0 || srv.IdleTimeout >= time.Minute {
		t.Errorf("timeouts %+v", srv)
	}
	cfg, err := LoadConfig(func(k string) string {
		return map[string]string{"HOOKWALL_ROOT": t.TempDir(), "HOOKWALL_RUN_READ_TIMEOUT": "2s", "HOOKWALL_RUN_IDLE_TIMEOUT": "3s"}[k]
	}, t.TempDir())
	if err != nil || cfg.Timeouts.Read != 2*time.Second || cfg.Timeouts.Idle != 3*time.Second || cfg.Timeouts.Write != DefaultTimeouts.Write {
		t.Errorf("config timeouts %+v: %v", cfg.Timeouts, err)
	}
	if _, err := LoadConfig(func(k string) string {
		return map[string]string{"HOOKWALL_ROOT": t.TempDir(), "HOOKWALL_RUN_IDLE_TIMEOUT": "soon"}[k]
	}, t.TempDir()); err == nil || !strings.Contains(err.Error(), "HOOKWALL_RUN_IDLE_TIMEOUT") {
		t.Errorf("a bad timeout: %v", err)
	}
}

// Issue 16 item 4: with more than maxScanItems items in the table, the
// events the runner claimed (Recent) are all listed, newest first, and the
// page says the list of the others is partial.
func TestPageListsTheNewestOfALargeTable(t *testing.T) {
	now := time.Now()
	var items []map[string]types.AttributeValue
	record := func(key string, at time.Time) map[string]types.AttributeValue {
		item, err := attributevalue.MarshalMap(store.Record{Key: key, SK: store.SKEvent, Status: webhook.StatusSucceeded,
			Provider: "line", Tenant: "demo", ReceivedAt: at.UnixMilli(), ExpiresAt: now.Add(time.Hour).Unix()})
		if err != nil {
			t.Fatal(err)
		}
		return item
	}
	for i := range maxScanItems + 1000 {
		items = append(items, record(fmt.Sprintf("line#demo#old-%05d", i), now.Add(-time.Hour).Add(time.Duration(i)*time.Millisecond)))
	}
	recent := &Recent{}
	var fresh []string
	for i := range 10 { // the table's order is not the time order: put them at its end
		k := fmt.Sprintf("line#demo#new-%02d", i)
		fresh = append(fresh, k)
		items = append(items, record(k, now.Add(time.Duration(i)*time.Second)))
		recent.Add(k)
	}
	page := &Page{DB: fakeScan{items}, Table: "t", Recent: recent, Log: discard()}
	l, err := page.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Events) != MaxPageEvents {
		t.Fatalf("%d events, want %d", len(l.Events), MaxPageEvents)
	}
	for i, k := range fresh {
		if got := l.Events[len(fresh)-1-i].Key; got != k {
			t.Errorf("event %d is %s, want %s (the newest first)", len(fresh)-1-i, got, k)
		}
	}
	if !strings.Contains(l.Note, "partial") {
		t.Errorf("note %q, want it to say the list is partial", l.Note)
	}
	mux := http.NewServeMux()
	mux.Handle(PagePath, page)
	srv := newTestServer(t, mux)
	if body := get(t, srv+PagePath); !strings.Contains(body, `id="note"`) || !strings.Contains(body, "partial") {
		t.Error("the page shows no partial note")
	}
	resp, err := http.Get(srv + PagePath + "api/events")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if !strings.Contains(resp.Header.Get(NoteHeader), "partial") {
		t.Errorf("api/events %s: %q", NoteHeader, resp.Header.Get(NoteHeader))
	}

	// A small table: no note.
	small := &Page{DB: fakeScan{items[len(items)-10:]}, Table: "t", Recent: &Recent{}, Log: discard()}
	if l, err := small.List(context.Background()); err != nil || len(l.Events) != 10 || l.Note != "" {
		t.Errorf("small table: %d events, note %q, %v", len(l.Events), l.Note, err)
	}
}

func newTestServer(t *testing.T, h http.Handler) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := newServer(h, Timeouts{})
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return "http://" + ln.Addr().String()
}

// Recent keeps the newest keys, once each, at most Max.
func TestRecent(t *testing.T) {
	r := &Recent{Max: 3}
	for _, k := range []string{"a", "b", "c", "a", "d"} {
		r.Add(k)
	}
	if got := strings.Join(r.Newest(10), ","); got != "d,a,c" {
		t.Errorf("newest %s, want d,a,c", got)
	}
	if got := strings.Join(r.Newest(2), ","); got != "d,a" {
		t.Errorf("newest 2: %s", got)
	}
}

// Issue 16 polish: a sweep that did nothing is not logged (human or JSON);
// one that did is, with its duration in human units on a terminal.
func TestLogTapSweepsAndDurations(t *testing.T) {
	for _, human := range []bool{true, false} {
		var out bytes.Buffer
		log := slog.New(slog.NewJSONHandler(NewLogTap(&out, human, false), nil))
		idle := []any{"scanned", 0, "requeued", 0, "dead_lettered", 0, "resweeped", 0, "moved_on", 0, "ignored", 0,
			"errors", 0, "query_errors", 0, "interrupted", 0, "more", false, "elapsed", 1475992773 * time.Nanosecond}
		log.Info("sweep done", idle...)
		busy := append(append([]any{}, idle...), "requeued", 2)
		log.Info("sweep done", busy...)
		log.Info("event will be retried", "retry_after", 1500*time.Millisecond)
		lines := strings.Split(strings.TrimSpace(out.String()), "\n")
		if len(lines) != 2 {
			t.Fatalf("human=%v: %d lines, want 2 (the idle sweep dropped):\n%s", human, len(lines), out.String())
		}
		if human {
			if !strings.Contains(lines[0], "elapsed=1.476s") || strings.Contains(lines[0], "1475992773") {
				t.Errorf("sweep line %q: want elapsed=1.476s", lines[0])
			}
			if !strings.Contains(lines[1], "retry_after=1.5s") {
				t.Errorf("retry line %q: want retry_after=1.5s", lines[1])
			}
		} else if !json.Valid([]byte(lines[0])) {
			t.Errorf("not JSON: %s", lines[0])
		}
	}
}

// Issue 16 polish: "send myspace" and "send" alone are usage errors (exit 2
// in main) with the providers listed; -h is the full help, an exit 0.
func TestSendUsage(t *testing.T) {
	env := func(k string) string { return map[string]string{"HOOKWALL_ROOT": t.TempDir()}[k] }
	for _, args := range [][]string{{"myspace"}, {}, {"-id", "x"}, {"line", "-nope"}, {"line", "extra"}} {
		var out, errOut bytes.Buffer
		err := SendCommand(context.Background(), args, env, t.TempDir(), "", &out, &errOut)
		var ue *UsageError
		if !errors.As(err, &ue) {
			t.Errorf("send %v: %v, want a usage error", args, err)
		}
		if !strings.Contains(errOut.String(), "Providers: "+strings.Join(SendProviders(), ", ")) || !strings.Contains(errOut.String(), "-tenants") {
			t.Errorf("send %v: the usage text is missing:\n%s", args, errOut.String())
		}
	}
	for _, args := range [][]string{{"-h"}, {"--help"}, {"line", "-h"}} {
		var out, errOut bytes.Buffer
		err := SendCommand(context.Background(), args, env, t.TempDir(), "", &out, &errOut)
		if !errors.Is(err, flag.ErrHelp) || errOut.Len() != 0 || !strings.Contains(out.String(), "Usage: hookwall-run send") ||
			strings.Contains(out.String(), "name a provider") || !strings.HasSuffix(out.String(), "\n") {
			t.Errorf("send %v: %v\nstdout:\n%s\nstderr:\n%s", args, err, out.String(), errOut.String())
		}
	}
}

// runner.json is written whole (a rename), read back, and ignored when
// its runner is gone.
func TestDiscoveryFile(t *testing.T) {
	dir := t.TempDir()
	d := runfile.Info{PID: os.Getpid(), URL: "http://127.0.0.1:3456", TenantsFile: "/x/tenants.json", Tenants: []string{"demo"},
		Env: map[string]string{"TABLE_NAME": "t"}}
	path, err := runfile.Write(dir, d)
	if err != nil || path != filepath.Join(dir, DiscoveryFile) {
		t.Fatal(path, err)
	}
	var m map[string]any
	b, _ := os.ReadFile(path)
	if err := json.Unmarshal(b, &m); err != nil || m["url"] != d.URL || m["tenantsFile"] != d.TenantsFile || m["pid"] != float64(d.PID) {
		t.Errorf("runner.json %s: %v", b, err)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", fi.Mode().Perm())
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("temporary files left: %v", entries)
	}
	def, err := sendDefaults(func(k string) string {
		return map[string]string{"HOOKWALL_ROOT": dir, "HOOKWALL_RUN_DIR": dir}[k]
	}, dir, "")
	if err != nil || def.URL != d.URL || def.TenantsFile != d.TenantsFile {
		t.Errorf("send defaults %+v: %v, want the runner's URL and tenants", def, err)
	}
	d.PID = 1 << 30 // no such process
	if _, err := runfile.Write(dir, d); err != nil {
		t.Fatal(err)
	}
	if _, ok := readDiscovery(dir); ok {
		t.Error("a runner.json of a dead process is read")
	}
}
