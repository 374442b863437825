//go:build integration

package localrun

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/hookwall/hookwall/shared/aws/awstest"
	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/config/runfile"
	"github.com/hookwall/hookwall/shared/state/store"
)

// These tests use the contracts' literal names (runner.json, the note
// header, function "page"), as a user or another program sees them.

// sendCLI runs "hookwall-run send args..." as the quick start does, from
// the repository's root, with the runner's run directory (so that it finds
// the runner, on its own port, through runner.json).
func (r *runner) sendCLI(args ...string) (string, error) {
	r.t.Helper()
	bin, err := runnerBin()
	if err != nil {
		r.t.Fatal(err)
	}
	cmd := exec.Command(bin, append([]string{"send"}, args...)...)
	cmd.Dir = repoRoot(r.t)
	cmd.Env = append(filteredEnv(), "HOOKWALL_RUN_DIR="+r.runDir)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := FindRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

var againLine = regexp.MustCompile(`(?m)^  (\S+) send line -id (\S+) -at (\d+)(.*)$`)

// request sends method path with Host host (and Origin origin when set) to
// the runner and returns the status and body.
func (r *runner) request(method, path, host, origin string, body io.Reader, header ...string) (int, string) {
	r.t.Helper()
	req, err := http.NewRequest(method, r.base+path, body)
	if err != nil {
		r.t.Fatal(err)
	}
	req.Host = host
	if origin != "" {
		req.Header.Set("Origin", origin)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		r.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// Must show 2 of issue 16: the quick start, step by step, against a runner
// started as `make run` starts it.
//  1. the runner is up and has written runner.json;
//  2. `hookwall-run send line` (no flags: it finds the runner) is answered
//     200 and prints the command that sends the same event again, which is
//     answered 200 and not processed again;
//  3. the page's API lists the event SUCCEEDED with its history and steps;
//     a replay from the page is recorded as function "page";
//  4. the events API answers GET /events/line/demo/<id>;
//  5. Ctrl-C stops it and removes runner.json.
//
// On the way, the page's API and the events API refuse a foreign Host
// (DNS rebinding), and nothing is replayed by such a request.
func TestQuickStart(t *testing.T) {
	r := startRunner(t)
	port := strings.TrimPrefix(r.base, "http://127.0.0.1:")

	// 1. runner.json
	b, err := os.ReadFile(filepath.Join(r.runDir, "runner.json"))
	if err != nil {
		t.Fatalf("runner.json: %v", err)
	}
	var disc runfile.Info
	if err := json.Unmarshal(b, &disc); err != nil {
		t.Fatalf("runner.json %s: %v", b, err)
	}
	if disc.PID != r.cmd.Process.Pid || disc.URL != r.base || !filepath.IsAbs(disc.TenantsFile) ||
		strings.Join(disc.Tenants, ",") != "demo" {
		t.Errorf("runner.json %s", b)
	}
	for _, k := range []string{"TABLE_NAME", "QUEUE_URL", "DLQ_URL", "AWS_ENDPOINT_URL_DYNAMODB", "AWS_ENDPOINT_URL_SQS",
		"AWS_REGION", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "HOOKWALL_TENANTS_FILE"} {
		if disc.Env[k] == "" {
			t.Errorf("runner.json env has no %s: %s", k, b)
		}
	}

	// 2. send line; then the printed command again: a duplicate.
	out, err := r.sendCLI("line")
	if err != nil || !strings.Contains(out, "← 200 OK") {
		t.Fatalf("send line: %v\n%s", err, out)
	}
	m := againLine.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("send line prints no command to send it again:\n%s", out)
	}
	id, key := m[2], "line#demo#"+m[2]
	ev := r.waitStatus(key, webhook.StatusSucceeded, 30*time.Second)
	again := exec.Command("bash", "-c", strings.TrimSpace(m[0]))
	again.Dir, again.Env = repoRoot(t), append(filteredEnv(), "HOOKWALL_RUN_DIR="+r.runDir)
	if out, err := again.CombinedOutput(); err != nil || !strings.Contains(string(out), "← 200 OK") {
		t.Fatalf("the same event again (%s): %v\n%s", m[0], err, out)
	}
	r.waitUntil("the duplicate's log line", 10*time.Second, func() bool {
		return len(r.logLines(key, "duplicate delivery acknowledged")) == 1
	})
	if now, _ := r.event(key); now.Version != ev.Version {
		t.Errorf("the duplicate changed the record: version %d, was %d", now.Version, ev.Version)
	}

	// 3. the page: SUCCEEDED with history and steps.
	if len(ev.History) < 3 || len(ev.Steps) == 0 {
		t.Errorf("page event: history %v steps %v", ev.History, ev.Steps)
	}
	if html := get(t, r.base+PagePath); !strings.Contains(html, `data-key="`+key+`" data-status="SUCCEEDED"`) {
		t.Errorf("the page does not list %s as SUCCEEDED", key)
	}

	// DNS rebinding: a foreign Host reads nothing and replays nothing.
	for _, host := range []string{"attacker.example:" + port, "attacker.example"} {
		if code, body := r.request(http.MethodGet, PagePath+"api/events", host, "", nil); code != http.StatusMisdirectedRequest || strings.Contains(body, key) {
			t.Errorf("GET api/events with Host %s: %d %.100q, want 421", host, code, body)
		}
		form := strings.NewReader(url.Values{"key": {key}}.Encode())
		if code, _ := r.request(http.MethodPost, PagePath+"replay", host, "http://"+host, form,
			"Content-Type", "application/x-www-form-urlencoded", "X-Hookwall-Replay", "1"); code != http.StatusMisdirectedRequest {
			t.Errorf("POST replay with Host %s: %d, want 421", host, code)
		}
		if code, _ := r.request(http.MethodGet, "/events/line/demo/"+url.PathEscape(id), host, "", nil); code != http.StatusMisdirectedRequest {
			t.Errorf("GET the events API with Host %s: %d, want 421", host, code)
		}
	}
	if now, _ := r.event(key); now.Version != ev.Version {
		t.Fatalf("a request with a foreign Host replayed the event: version %d, was %d", now.Version, ev.Version)
	}

	// Replay from the page (as its button does): recorded as function page.
	form := strings.NewReader(url.Values{"key": {key}}.Encode())
	if code, body := r.request(http.MethodPost, PagePath+"replay", "127.0.0.1:"+port, r.base, form,
		"Content-Type", "application/x-www-form-urlencoded", "X-Hookwall-Replay", "1"); code != 200 {
		t.Fatalf("replay: %d %s", code, body)
	}
	after := r.waitReplayed(key, ev.Version)
	var fns []string
	for _, h := range after.History {
		fns = append(fns, h.Function)
	}
	if !strings.Contains(strings.Join(fns, " "), "page") || strings.Contains(strings.Join(fns, " "), "cli") {
		t.Errorf("history functions %v: want the replay recorded as page", fns)
	}

	// 4. the events API.
	code, body := r.request(http.MethodGet, "/events/line/demo/"+url.PathEscape(id), "127.0.0.1:"+port, "", nil)
	if code != 200 || !strings.Contains(body, key) || !strings.Contains(body, "SUCCEEDED") {
		t.Errorf("GET /events/line/demo/%s: %d %.300s", id, code, body)
	}
	if code, _ := r.request(http.MethodGet, "/events/line/demo/never-sent", "localhost:"+port, "", nil); code != http.StatusNotFound {
		t.Errorf("GET an unknown event: %d, want 404", code)
	}

	// A body over the receiver's limit (1 MiB by default): 413, not read.
	big := strings.NewReader(strings.Repeat("x", 2<<20))
	if code, _ := r.request(http.MethodPost, "/webhooks/line/demo", "127.0.0.1:"+port, "", big); code != http.StatusRequestEntityTooLarge {
		t.Errorf("a 2 MiB body: %d, want 413", code)
	}

	// 5. Ctrl-C: runner.json goes with it.
	r.interrupt(30 * time.Second)
	if _, err := os.Stat(filepath.Join(r.runDir, "runner.json")); !os.IsNotExist(err) {
		t.Errorf("runner.json left behind: %v", err)
	}
	if out, err := r.sendCLI("line"); err == nil || strings.Contains(out, r.base) {
		t.Errorf("send after the runner stopped: %v\n%s", err, out)
	}
}

// "hookwall-run send myspace" is a usage error (exit 2, the providers
// listed); -h is the help (exit 0, on stdout).
func TestSendExitCodes(t *testing.T) {
	bin, err := runnerBin()
	if err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) (int, string, string) {
		cmd := exec.Command(bin, args...)
		cmd.Dir = t.TempDir()
		cmd.Env = append(filteredEnv(), "HOOKWALL_RUN_DIR="+t.TempDir())
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return code, stdout.String(), stderr.String()
	}
	for _, args := range [][]string{{"send", "myspace"}, {"send"}, {"nonsense"}} {
		if code, _, stderr := run(args...); code != 2 || !strings.Contains(stderr, strings.Join(SendProviders(), ", ")) {
			t.Errorf("%v: exit %d, stderr:\n%s", args, code, stderr)
		}
	}
	for _, args := range [][]string{{"send", "-h"}, {"help"}} {
		code, stdout, stderr := run(args...)
		if code != 0 || !strings.Contains(stdout, "Usage: hookwall-run") || strings.Contains(stdout+stderr, "name a provider first") {
			t.Errorf("%v: exit %d\nstdout:\n%s\nstderr:\n%s", args, code, stdout, stderr)
		}
	}
}

// Issue 16 item 4: in a table of 12,000 items (more than the 5,000 one listing scans), ten new events all
// show in the page's newest list, and the page says the list is partial.
func TestPageNewestInALargeTable(t *testing.T) {
	r := startRunner(t)
	env := parseExports(must(os.ReadFile(filepath.Join(r.runDir, "env.sh"))))
	db := awstest.DynamoDB(t)
	seed(t, db, env["TABLE_NAME"], 12000)

	var keys []string
	for range 10 {
		out, err := r.sendCLI("line")
		m := againLine.FindStringSubmatch(out)
		if err != nil || m == nil {
			t.Fatalf("send line: %v\n%s", err, out)
		}
		keys = append(keys, "line#demo#"+m[2])
	}
	for _, k := range keys {
		r.waitStatus(k, webhook.StatusSucceeded, 60*time.Second)
	}
	resp, err := http.Get(r.base + PagePath + "api/events")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var evs []EventView
	if err := json.NewDecoder(resp.Body).Decode(&evs); err != nil {
		t.Fatal(err)
	}
	for i, k := range keys {
		if j := indexOf(evs, k); j != len(keys)-1-i {
			t.Errorf("event %s is at %d of the list, want %d (newest first)", k, j, len(keys)-1-i)
		}
	}
	if note := resp.Header.Get("X-Hookwall-Note"); !strings.Contains(note, "partial") {
		t.Errorf("note %q, want it to say the list is partial", note)
	}
	if html := get(t, r.base+PagePath); !strings.Contains(html, `id="note"`) {
		t.Error("the page shows no note")
	}
}

func indexOf(evs []EventView, key string) int {
	for i, ev := range evs {
		if ev.Key == key {
			return i
		}
	}
	return -1
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}

// seed writes n old SUCCEEDED records into table (BatchWriteItem, 25 at a
// time, a few writers).
func seed(t *testing.T, db *dynamodb.Client, table string, n int) {
	t.Helper()
	now := time.Now()
	var reqs []types.WriteRequest
	for i := range n {
		item, err := attributevalue.MarshalMap(store.Record{Key: fmt.Sprintf("line#demo#seed-%05d", i), SK: store.SKEvent,
			Status: webhook.StatusSucceeded, Provider: "line", Tenant: "demo", Version: 3,
			ReceivedAt: now.Add(-time.Hour).UnixMilli() + int64(i), ExpiresAt: now.Add(time.Hour).Unix()})
		if err != nil {
			t.Fatal(err)
		}
		reqs = append(reqs, types.WriteRequest{PutRequest: &types.PutRequest{Item: item}})
	}
	batches := make(chan []types.WriteRequest)
	errs := make(chan error, 4)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for b := range batches {
				for len(b) > 0 {
					out, err := db.BatchWriteItem(context.Background(), &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{table: b}})
					if err != nil {
						select {
						case errs <- err:
						default:
						}
						break
					}
					b = out.UnprocessedItems[table]
				}
			}
		})
	}
	for i := 0; i < len(reqs); i += 25 {
		batches <- reqs[i:min(i+25, len(reqs))]
	}
	close(batches)
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		t.Fatalf("seed %s: %v", table, err)
	}
}
