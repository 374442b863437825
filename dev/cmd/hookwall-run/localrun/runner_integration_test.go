//go:build integration

package localrun

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/hookwall/hookwall/dev/internal/localstack"
	"github.com/hookwall/hookwall/shared/aws/awstest"
	"github.com/hookwall/hookwall/shared/aws/bus"
	"github.com/hookwall/hookwall/shared/base/webhook"
)

// pollInterval is how often the tests look at what the runner subprocess
// did (its page, its files): it has no clock the tests could drive.
const pollInterval = 20 * time.Millisecond

// The runner binary, built once for the package's tests (with -race when
// the tests are).
var runnerBin = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "hookwall-run-test-")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "hookwall-run")
	args := []string{"build", "-o", bin}
	if raceEnabled {
		args = append(args, "-race")
	}
	out, err := exec.Command("go", append(args, Module+"/dev/cmd/hookwall-run")...).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go build: %v\n%s", err, out)
	}
	return bin, nil
})

func TestMain(m *testing.M) {
	code := m.Run()
	if bin, err := runnerBin(); err == nil {
		_ = os.RemoveAll(filepath.Dir(bin))
	}
	os.Exit(code)
}

// lockedBuffer is a bytes.Buffer safe for one writer and many readers.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// runner is hookwall-run started as a subprocess, as `make run` starts it.
type runner struct {
	t              *testing.T
	cmd            *exec.Cmd
	env            []string
	runDir         string
	stdout, stderr *lockedBuffer
	exited         chan struct{}
	base           string            // http://127.0.0.1:<port>
	commands       map[string]string // LINE, WeCom, Standard Webhooks, WeChat → printed command
}

// stackPorts are the local services' ports, from the AWS_ENDPOINT_URL_*
// variables `make test` sets (defaults otherwise).
func stackPorts() (ddb, sqs string) {
	port := func(env, def string) string {
		if u, err := url.Parse(os.Getenv(env)); err == nil && u.Port() != "" {
			return u.Port()
		}
		return def
	}
	return port("AWS_ENDPOINT_URL_DYNAMODB", "8000"), port("AWS_ENDPOINT_URL_SQS", "9324")
}

// startRunner runs hookwall-run with its own table and queues (created by
// services-up, deleted at the end), its own run directory and a free port,
// JSON logs, and extra (KEY=VALUE) on top; it waits for the banner.
func startRunner(t *testing.T, extra ...string) *runner {
	t.Helper()
	return startRunnerIn(t, t.TempDir(), extra...)
}

// startRunnerIn is startRunner on the run directory runDir.
func startRunnerIn(t *testing.T, runDir string, extra ...string) *runner {
	t.Helper()
	bin, err := runnerBin()
	if err != nil {
		t.Fatal(err)
	}
	ddbPort, sqsPort := stackPorts()
	name := awstest.Name("hw-run")
	r := &runner{t: t, runDir: runDir, stdout: &lockedBuffer{}, stderr: &lockedBuffer{}, exited: make(chan struct{})}
	r.env = append(filteredEnv(), "TABLE_NAME="+name, "QUEUE_NAME="+name, "DLQ_NAME="+name+"-dlq",
		"DDB_PORT="+ddbPort, "SQS_PORT="+sqsPort, "HOOKWALL_RUN_DIR="+r.runDir, "PORT=0", "HOOKWALL_RUN_LOG=json", "GORACE=halt_on_error=1")
	r.env = append(r.env, extra...)
	r.start(bin)
	t.Cleanup(func() { r.stop(); r.deleteStack() })
	r.waitReady(3 * time.Minute)
	return r
}

// filteredEnv is this process's environment without the variables the
// runner sets from its own configuration.
func filteredEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "TABLE_NAME", "QUEUE_NAME", "DLQ_NAME", "QUEUE_URL", "DLQ_URL", "PORT", "HOOKWALL_TENANTS_FILE", "TENANTS_SECRET_ARN",
			"FORWARD_URL", "HOOKWALL_RUN_DIR", "STACK_RUN_DIR", "EVENT_BUS_NAME", "AWS_ENDPOINT_URL_EVENTBRIDGE":
			continue
		}
		env = append(env, kv)
	}
	return env
}

func (r *runner) start(bin string) {
	r.cmd = exec.Command(bin)
	r.cmd.Env = r.env
	r.cmd.Stdout = r.stdout
	r.cmd.Stderr = r.stderr
	if err := r.cmd.Start(); err != nil {
		r.t.Fatal(err)
	}
	go func() { _ = r.cmd.Wait(); close(r.exited) }()
}

var (
	pageLine    = regexp.MustCompile(`(?m)^  page +(http://\S+)` + regexp.QuoteMeta(PagePath))
	commandLine = regexp.MustCompile(`(?m)^  (LINE|WeCom|Standard Webhooks|WeChat) +(\S.*)$`)
)

func (r *runner) waitReady(timeout time.Duration) {
	r.t.Helper()
	deadline := time.After(timeout)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		out := r.stderr.String()
		if strings.Contains(out, "\nStop: Ctrl-C") {
			m := pageLine.FindStringSubmatch(out)
			if m == nil {
				r.t.Fatalf("no page URL in the banner:\n%s", out)
			}
			r.base = m[1]
			r.commands = map[string]string{}
			for _, c := range commandLine.FindAllStringSubmatch(out, -1) {
				r.commands[c[1]] = c[2]
			}
			return
		}
		select {
		case <-r.exited:
			r.t.Fatalf("hookwall-run exited before it was ready: %v\nstderr:\n%s\nstdout:\n%s", r.cmd.ProcessState, out, r.stdout.String())
		case <-deadline:
			r.t.Fatalf("hookwall-run not ready after %s:\n%s", timeout, out)
		case <-tick.C:
		}
	}
}

// interrupt sends SIGINT (Ctrl-C) and waits for the runner to exit.
func (r *runner) interrupt(timeout time.Duration) {
	r.t.Helper()
	_ = r.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-r.exited:
	case <-time.After(timeout):
		_ = r.cmd.Process.Kill()
		r.t.Fatalf("hookwall-run still running %s after SIGINT:\n%s", timeout, r.stderr.String())
	}
}

func (r *runner) stop() {
	select {
	case <-r.exited:
		return
	default:
	}
	_ = r.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-r.exited:
	case <-time.After(30 * time.Second):
		_ = r.cmd.Process.Kill()
		<-r.exited
	}
	if r.t.Failed() {
		r.t.Logf("hookwall-run stderr:\n%s\nstdout (last 8 KiB):\n%s", r.stderr.String(), tail(r.stdout.String(), 8<<10))
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// deleteStack deletes the table and queues services-up created for this runner.
func (r *runner) deleteStack() {
	b, err := os.ReadFile(filepath.Join(r.runDir, "env.sh"))
	if err != nil {
		return
	}
	env := parseExports(b)
	ctx := context.Background()
	if t := env["TABLE_NAME"]; strings.HasPrefix(t, "hw-run-") {
		_, _ = awstest.DynamoDB(r.t).DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: aws.String(t)})
	}
	c := awstest.SQS(r.t)
	for _, k := range []string{"QUEUE_URL", "DLQ_URL"} {
		if u := env[k]; strings.Contains(u, "/hw-run-") {
			_, _ = c.DeleteQueue(ctx, &sqs.DeleteQueueInput{QueueUrl: aws.String(u)})
		}
	}
}

// send runs a printed command in a shell, from a directory outside the
// repository (the commands work from anywhere), and returns its output.
func (r *runner) send(label string) string {
	r.t.Helper()
	line, ok := r.commands[label]
	if !ok {
		r.t.Fatalf("no %s command in the banner:\n%s", label, r.stderr.String())
	}
	cmd := exec.Command("bash", "-c", line)
	cmd.Dir = r.t.TempDir()
	cmd.Env = filteredEnv()
	out, err := cmd.CombinedOutput()
	if err != nil {
		r.t.Fatalf("%s command %q: %v\n%s", label, line, err, out)
	}
	return string(out)
}

var idFlag = regexp.MustCompile(`-id (\S+)`)

// key returns the event key of a printed command's event.
func (r *runner) key(label string) string {
	r.t.Helper()
	m := idFlag.FindStringSubmatch(r.commands[label])
	if m == nil {
		r.t.Fatalf("no -id in %q", r.commands[label])
	}
	switch label {
	case "LINE":
		return "line#demo#" + m[1]
	case "WeCom":
		return "wecom#demo#msg:1000002:" + m[1]
	case "WeChat":
		return "wechat#demo#msg:" + m[1]
	default:
		return "standard#demo#" + m[1]
	}
}

// events reads the page's JSON list.
func (r *runner) events() []EventView {
	r.t.Helper()
	resp, err := http.Get(r.base + PagePath + "api/events")
	if err != nil {
		r.t.Fatal(err)
	}
	defer resp.Body.Close()
	var evs []EventView
	if err := json.NewDecoder(resp.Body).Decode(&evs); err != nil {
		r.t.Fatal(err)
	}
	return evs
}

func (r *runner) event(key string) (EventView, bool) {
	for _, ev := range r.events() {
		if ev.Key == key {
			return ev, true
		}
	}
	return EventView{}, false
}

// waitStatus waits until the event of key has status s.
func (r *runner) waitStatus(key string, s webhook.Status, timeout time.Duration) EventView {
	r.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ev, ok := r.event(key)
		if ok && ev.Status == s {
			return ev
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("event %s: %v (found %v), want %s within %s", key, ev.Status, ok, s, timeout)
		}
		select {
		case <-r.exited:
			r.t.Fatalf("hookwall-run exited: %v", r.cmd.ProcessState)
		case <-time.After(pollInterval):
		}
	}
}

// waitUntil polls cond until it holds, failing the test after timeout or
// when the runner exits.
func (r *runner) waitUntil(what string, timeout time.Duration, cond func() bool) {
	r.t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			r.t.Fatalf("%s: not within %s", what, timeout)
		}
		select {
		case <-r.exited:
			r.t.Fatalf("hookwall-run exited: %v", r.cmd.ProcessState)
		case <-time.After(pollInterval):
		}
	}
}

// logLines returns the JSON log lines about key with msg (any msg if empty).
func (r *runner) logLines(key, msg string) []map[string]any {
	var out []map[string]any
	sc := bufio.NewScanner(strings.NewReader(r.stdout.String()))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var m map[string]any
		if json.Unmarshal(sc.Bytes(), &m) != nil || m["event_key"] != key {
			continue
		}
		if msg == "" || m["msg"] == msg {
			out = append(out, m)
		}
	}
	return out
}

// countLines counts the JSON lines of a run-directory file whose field
// (a dotted path) equals want.
func (r *runner) countLines(file, path, want string) int {
	n := 0
	for _, l := range readLines(r.t, filepath.Join(r.runDir, file)) {
		var v any
		if json.Unmarshal([]byte(l), &v) != nil {
			continue
		}
		for _, k := range strings.Split(path, ".") {
			m, _ := v.(map[string]any)
			v = m[k]
		}
		if v == want {
			n++
		}
	}
	return n
}

// Must show 1: `make run`'s runner, then the printed LINE command: the event
// ends SUCCEEDED, reaches the forward target once, and is in the outcomes
// file and on the page, with its path in the logs; the same command again is
// answered success and processed no more. A second runner says one is
// running; Ctrl-C stops this one and leaves nothing behind.
func TestMakeRun(t *testing.T) {
	r := startRunner(t)
	for _, label := range []string{"LINE", "WeCom", "Standard Webhooks", "WeChat"} {
		if r.commands[label] == "" {
			t.Errorf("the banner prints no %s command:\n%s", label, r.stderr.String())
		}
	}
	key := r.key("LINE")
	if out := r.send("LINE"); !strings.Contains(out, "← 200 OK") {
		t.Fatalf("LINE command: %s", out)
	}
	ev := r.waitStatus(key, webhook.StatusSucceeded, 30*time.Second)
	// The outcome is published after the record is SUCCEEDED: wait for it
	// (and its log line) before counting, or a loaded machine fails the test.
	r.waitUntil("the outcome event and its log line", 30*time.Second, func() bool {
		if r.countLines(OutcomesFile, "detail.key", key) == 0 {
			return false
		}
		for _, l := range r.logLines(key, "") {
			if l[AttrStage] == StageOutcome {
				return true
			}
		}
		return false
	})

	if n := r.countLines(ForwardedFile, "key", key); n != 1 {
		t.Errorf("the forward target got the event %d times, want 1", n)
	}
	var f Forwarded
	for _, l := range readLines(t, filepath.Join(r.runDir, ForwardedFile)) {
		if json.Unmarshal([]byte(l), &f) == nil && f.Key == key {
			break
		}
	}
	if f.Signature != "ok" || f.IdempotencyKey == "" {
		t.Errorf("forwarded request %+v: want a good signature and an Idempotency-Key", f)
	}
	if n := r.countLines(OutcomesFile, "detail.key", key); n != 1 {
		t.Errorf("%d outcome events for the event, want 1", n)
	}
	if n := r.countLines(OutcomesFile, "detailType", bus.DetailTypeSucceeded); n != 1 {
		t.Errorf("%d succeeded outcome events, want 1", n)
	}
	html := get(t, r.base+PagePath)
	if !strings.Contains(html, `data-key="`+key+`" data-status="SUCCEEDED"`) {
		t.Errorf("the page does not list %s as SUCCEEDED", key)
	}
	for _, stage := range []string{StageClaimed, StageEnqueued, StageProcessing, StageForwarded, StageOutcome} {
		var n int
		for _, l := range r.logLines(key, "") {
			if l[AttrStage] == stage || (stage == StageClaimed && l["msg"] == "event claimed") {
				n++
			}
		}
		if n != 1 {
			t.Errorf("%d %s log lines for the event, want 1", n, stage)
		}
	}
	if n := len(r.logLines(key, "event succeeded")); n != 1 {
		t.Errorf("%d succeeded log lines, want 1", n)
	}

	// The same command again: answered success, not enqueued or processed.
	if out := r.send("LINE"); !strings.Contains(out, "← 200 OK") {
		t.Fatalf("LINE command again: %s", out)
	}
	if n := len(r.logLines(key, "duplicate delivery acknowledged")); n != 1 {
		t.Errorf("the receiver acknowledged %d duplicates, want 1", n)
	}
	// A barrier: once another event sent after it has gone all the way
	// through, anything the duplicate could have caused would have happened.
	other := r.key("WeCom")
	r.send("WeCom")
	r.waitStatus(other, webhook.StatusSucceeded, 30*time.Second)
	again, _ := r.event(key)
	if again.Version != ev.Version || again.Status != webhook.StatusSucceeded {
		t.Errorf("after the duplicate: version %d status %s, was %d %s", again.Version, again.Status, ev.Version, ev.Status)
	}
	if n := r.countLines(ForwardedFile, "key", key); n != 1 {
		t.Errorf("after the duplicate the forward target got it %d times, want 1", n)
	}
	if n := r.countLines(OutcomesFile, "detail.key", key); n != 1 {
		t.Errorf("after the duplicate: %d outcome events, want 1", n)
	}
	for _, stage := range []string{StageEnqueued, StageProcessing} {
		var n int
		for _, l := range r.logLines(key, "") {
			if l[AttrStage] == stage {
				n++
			}
		}
		if n != 1 {
			t.Errorf("after the duplicate: %d %s lines, want 1", n, stage)
		}
	}

	// A second runner on the same run directory says one runs.
	bin, _ := runnerBin()
	second := exec.Command(bin)
	second.Env = r.env
	out, err := second.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 ||
		!strings.Contains(string(out), fmt.Sprintf("already running (pid %d)", r.cmd.Process.Pid)) ||
		!strings.Contains(string(out), r.base+PagePath) {
		t.Errorf("second runner: %v\n%s", err, out)
	}

	// Ctrl-C: it stops, removes its lock and frees its port; the services
	// it did not start keep running.
	r.interrupt(30 * time.Second)
	if !r.cmd.ProcessState.Success() {
		t.Errorf("exit: %v\n%s", r.cmd.ProcessState, r.stderr.String())
	}
	if !strings.Contains(r.stderr.String(), "hookwall-run: stopped") {
		t.Errorf("no stopped line:\n%s", r.stderr.String())
	}
	if _, err := os.Stat(filepath.Join(r.runDir, LockFile)); !os.IsNotExist(err) {
		t.Errorf("lock file left behind: %v", err)
	}
	if c, err := net.DialTimeout("tcp", strings.TrimPrefix(r.base, "http://"), time.Second); err == nil {
		c.Close()
		t.Errorf("%s still accepts connections", r.base)
	}
	awstest.SQS(t) // the shared services still answer
}

// freePort returns a port nothing listens on (at the time of the call).
func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	_, port, _ := net.SplitHostPort(l.Addr().String())
	return port
}

// On a machine where the services are not running, the runner starts them
// (through scripts/services-up.sh, as `make run` on a fresh clone) and
// Ctrl-C stops them, by PID: nothing is left running. Its table starts
// empty, and so do its run files: an earlier run's lines are moved aside.
func TestMakeRunStopsTheServicesItStarted(t *testing.T) {
	stackDir, runDir := t.TempDir(), t.TempDir()
	const earlier = `{"detailType":"hookwall.event.succeeded","detail":{"key":"line#demo#EARLIER-RUN"}}` + "\n"
	for _, name := range []string{OutcomesFile, ForwardedFile} {
		if err := os.WriteFile(filepath.Join(runDir, name), []byte(earlier), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r := startRunnerIn(t, runDir, "STACK_RUN_DIR="+stackDir, "DDB_PORT="+freePort(t), "SQS_PORT="+freePort(t))
	if !strings.Contains(r.stderr.String(), "the local services included") {
		t.Errorf("the banner does not say the services stop with it:\n%s", r.stderr.String())
	}
	pids := map[string]int{}
	for _, svc := range localstack.Services() {
		n := svc.Name
		if pids[n] = localstack.LivePID(svc.PIDFile(stackDir)); pids[n] == 0 {
			t.Fatalf("%s: not running from %s", n, stackDir)
		}
	}
	key := r.key("Standard Webhooks")
	r.send("Standard Webhooks")
	r.waitStatus(key, webhook.StatusSucceeded, 60*time.Second)
	deadline := time.Now().Add(10 * time.Second)
	for r.countLines(OutcomesFile, "detailType", bus.DetailTypeSucceeded) == 0 && time.Now().Before(deadline) {
		time.Sleep(pollInterval) // polling a file the subprocess writes
	}
	for _, name := range []string{OutcomesFile, ForwardedFile} {
		now, err := os.ReadFile(filepath.Join(runDir, name))
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(now), "EARLIER-RUN") || len(now) == 0 {
			t.Errorf("%s holds an earlier run's line, or nothing of this run's:\n%s", name, now)
		}
		ext := filepath.Ext(name)
		prev, err := os.ReadFile(filepath.Join(runDir, strings.TrimSuffix(name, ext)+PreviousSuffix+ext))
		if err != nil || string(prev) != earlier {
			t.Errorf("the earlier run's %s was not kept aside: %q, %v", name, prev, err)
		}
	}

	r.interrupt(60 * time.Second)
	if !r.cmd.ProcessState.Success() {
		t.Errorf("exit: %v\n%s", r.cmd.ProcessState, r.stderr.String())
	}
	for n, pid := range pids {
		if state := procState(pid); state != "" && state != "Z" {
			t.Errorf("%s (pid %d) still running (state %s) after Ctrl-C", n, pid, state)
		}
		if _, err := os.Stat(filepath.Join(stackDir, n+".pid")); !os.IsNotExist(err) {
			t.Errorf("%s.pid left behind", n)
		}
	}
}

// procState returns the state letter of pid, or "" if there is no such process.
func procState(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return ""
	}
	if i := bytes.LastIndexByte(b, ')'); i >= 0 && i+2 < len(b) {
		return string(b[i+2])
	}
	return "?"
}

// The failure path through the runner: a business that refuses the event
// (400, permanent) makes it FAILED; the processor sends it to the
// dead-letter queue, the compensator (driven from it) finds nothing to undo
// and ends it DEAD, and both outcomes reach the outcomes file.
func TestMakeRunFailurePath(t *testing.T) {
	refuse := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "no", http.StatusBadRequest)
	}))
	defer refuse.Close()
	r := startRunner(t, "FORWARD_URL="+refuse.URL+"/refuse")
	key := r.key("LINE")
	r.send("LINE")
	ev := r.waitStatus(key, webhook.StatusDead, 60*time.Second)
	if !strings.Contains(ev.LastError, "nothing to compensate") || !strings.Contains(ev.LastError, "400") {
		t.Errorf("last error %q", ev.LastError)
	}
	var path []string
	for _, h := range ev.History {
		path = append(path, string(h.To)+"/"+h.Function)
	}
	if got := strings.Join(path, " "); !strings.Contains(got, "FAILED/processor") || !strings.Contains(got, "DEAD/compensator") {
		t.Errorf("history %s", got)
	}
	for _, dt := range []string{bus.DetailTypeFailed, "hookwall.event.dead"} {
		deadline := time.Now().Add(10 * time.Second)
		for r.countLines(OutcomesFile, "detailType", dt) == 0 && time.Now().Before(deadline) {
			time.Sleep(pollInterval) // polling a file the subprocess writes
		}
		if r.countLines(OutcomesFile, "detailType", dt) != 1 {
			t.Errorf("no %s outcome event", dt)
		}
	}
	for _, stage := range []string{StageDeadLettered, StageCompensating} {
		var n int
		for _, l := range r.logLines(key, "") {
			if l[AttrStage] == stage {
				n++
			}
		}
		if n != 1 {
			t.Errorf("%d %s lines, want 1", n, stage)
		}
	}
}

// A malformed handler setting is named before anything starts: the run
// exits 1 with the setting's name, and no local service was started (on a
// machine where none runs, `make run` would otherwise start both first).
func TestMakeRunRefusesAMalformedSettingBeforeStarting(t *testing.T) {
	bin, err := runnerBin()
	if err != nil {
		t.Fatal(err)
	}
	stackDir := t.TempDir()
	cmd := exec.Command(bin)
	cmd.Env = append(filteredEnv(), "HOOKWALL_RUN_DIR="+t.TempDir(), "STACK_RUN_DIR="+stackDir,
		"DDB_PORT="+freePort(t), "SQS_PORT="+freePort(t), "PORT=0", "CRM_LEADS_URL=127.0.0.1:9700")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-time.After(2 * time.Minute):
		_ = cmd.Process.Kill()
		t.Fatalf("still running after 2 min:\n%s", stderr.String())
	}
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Errorf("exit: %v, want 1", err)
	}
	if !strings.Contains(stderr.String(), "CRM_LEADS_URL: want an absolute http(s) URL") {
		t.Errorf("stderr does not name the setting:\n%s", stderr.String())
	}
	for _, svc := range localstack.Services() {
		// services-up.sh leaves its log in the stack directory even when
		// the runner stops the service again.
		for _, f := range []string{svc.PIDFile(stackDir), filepath.Join(stackDir, svc.Name+".log")} {
			if _, err := os.Stat(f); !os.IsNotExist(err) {
				t.Errorf("%s was started (%s) before the setting was checked", svc.Name, f)
			}
		}
	}
}

// The hookwall CLI binary, built once for the package's tests.
var cliBin = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "hookwall-cli-test-")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "hookwall")
	out, err := exec.Command("go", "build", "-o", bin, Module+"/cmd/hookwall").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go build: %v\n%s", err, out)
	}
	return bin, nil
})

// Under `make run`, the CLI's pause, resume and recover publish their
// operational events on the runner's bus, as the page's do: they reach
// the outcomes file. The CLI finds the runner by itself (runner.json), with
// no stack variable set.
func TestMakeRunCLIPublishesOperationalEvents(t *testing.T) {
	r := startRunner(t)
	bin, err := cliBin()
	if err != nil {
		t.Fatal(err)
	}
	cli := func(args ...string) {
		t.Helper()
		cmd := exec.Command(bin, args...)
		cmd.Env = append(filteredEnv(), "HOOKWALL_RUN_DIR="+r.runDir)
		for _, k := range []string{"AWS_ENDPOINT_URL_DYNAMODB", "AWS_ENDPOINT_URL_SQS", "AWS_ENDPOINT_URL_EVENTBRIDGE"} {
			cmd.Env = append(cmd.Env, k+"=") // the runner gives them
		}
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("hookwall %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	cli("pause", "tenant/"+DefaultTenant, "--reason", "scenario test")
	cli("resume", "tenant/"+DefaultTenant)
	cli("recover", "--since", "1h", "--status", "FAILED")
	for _, dt := range []string{bus.DetailTypeControlPaused, bus.DetailTypeControlResumed} {
		deadline := time.Now().Add(10 * time.Second)
		for r.countLines(OutcomesFile, "detailType", dt) == 0 && time.Now().Before(deadline) {
			time.Sleep(pollInterval) // polling a file the subprocess writes
		}
		if n := r.countLines(OutcomesFile, "detailType", dt); n != 1 {
			t.Errorf("%d %s events in %s, want 1", n, dt, OutcomesFile)
		}
	}
}
