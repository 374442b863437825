package chaos

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestParseEnvFile(t *testing.T) {
	text := "export AWS_ENDPOINT_URL_DYNAMODB=http://127.0.0.1:8100\n\n# comment\n" +
		"export QUEUE_URL=http://127.0.0.1:9424/000000000000/q?x=1\nPLAIN=v\ngarbage\n=novalue\n"
	got := parseEnvFile(text)
	want := []string{
		"AWS_ENDPOINT_URL_DYNAMODB=http://127.0.0.1:8100",
		"QUEUE_URL=http://127.0.0.1:9424/000000000000/q?x=1",
		"PLAIN=v",
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("parseEnvFile = %q, want %q", got, want)
	}
	if v := envValue(got, "QUEUE_URL"); v != "http://127.0.0.1:9424/000000000000/q?x=1" {
		t.Errorf("envValue(QUEUE_URL) = %q", v)
	}
	if v := envValue(append(got, "PLAIN=w"), "PLAIN"); v != "w" {
		t.Errorf("envValue: last assignment should win, got %q", v)
	}
	if v := envValue(got, "MISSING"); v != "" {
		t.Errorf("envValue(MISSING) = %q, want empty", v)
	}
}

func TestToxicJSON(t *testing.T) {
	body, err := toxicJSON("n1", Toxic{Type: "latency", Stream: Downstream, Toxicity: 0.5,
		Attributes: map[string]any{"latency": int64(250), "jitter": int64(10)}})
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatalf("unmarshal %s: %v", body, err)
	}
	want := map[string]any{"name": "n1", "type": "latency", "stream": "downstream", "toxicity": 0.5,
		"attributes": map[string]any{"latency": 250.0, "jitter": 10.0}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("toxicJSON = %v, want %v", got, want)
	}
	for _, bad := range []Toxic{
		{Type: "", Stream: Upstream, Toxicity: 1},
		{Type: "latency", Stream: "sideways", Toxicity: 1},
		{Type: "latency", Stream: Upstream, Toxicity: 1.5},
		{Type: "latency", Stream: Upstream, Toxicity: -0.1},
		{Type: "latency", Stream: Upstream, Toxicity: float32(math.NaN())},
	} {
		if _, err := toxicJSON("x", bad); err == nil {
			t.Errorf("toxicJSON(%+v): want error", bad)
		}
	}
}

func TestCheckPorts(t *testing.T) {
	if err := checkPorts(8100, 9424); err != nil {
		t.Errorf("checkPorts(8100, 9424) = %v", err)
	}
	for _, p := range [][2]int{{8000, 9424}, {8100, 9324}, {8100, 8100}, {0, 9424}, {8100, 70000}} {
		if err := checkPorts(p[0], p[1]); err == nil {
			t.Errorf("checkPorts(%d, %d): want error", p[0], p[1])
		}
	}
}

func TestTailFile(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "x.log")
	if err := os.WriteFile(f, []byte("1\n2\n3\n4\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := tailFile(f, 2); got != "3\n4" {
		t.Errorf("tailFile = %q", got)
	}
	if got := tailFile(filepath.Join(dir, "none"), 2); got != "(no output)" {
		t.Errorf("tailFile(missing) = %q", got)
	}
}

func TestFreePort(t *testing.T) {
	p, err := FreePort()
	if err != nil {
		t.Fatal(err)
	}
	if p <= 0 || p > 65535 {
		t.Fatalf("FreePort = %d", p)
	}
}

// procState returns the state letter of /proc/PID/stat (R, S, T, ...).
func procState(t *testing.T, pid int) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		t.Fatalf("read stat of %d: %v", pid, err)
	}
	s := string(data)
	rest := s[strings.LastIndex(s, ")")+2:]
	return rest[:1]
}

// waitState polls until pid's state satisfies ok (generous: loaded CI).
func waitState(t *testing.T, pid int, ok func(string) bool) string {
	t.Helper()
	var st string
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if st = procState(t, pid); ok(st) {
			return st
		}
	}
	return st
}

func TestPause(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cmd := exec.CommandContext(ctx, "sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatalf("start sleep: %v", err)
	}
	t.Cleanup(func() { cancel(); _ = cmd.Wait() })
	pid := cmd.Process.Pid

	resume, err := Pause(pid)
	if err != nil {
		t.Fatal(err)
	}
	// Pause returns once the process is stopped: no wait here.
	if n, err := runningThreads(pid); err != nil || n != 0 {
		t.Fatalf("when Pause returns: %d thread(s) not stopped (%v), want 0", n, err)
	}
	if err := resume(); err != nil {
		t.Fatal(err)
	}
	if st := waitState(t, pid, func(s string) bool { return s != "T" }); st == "T" {
		t.Fatal("after resume: still stopped")
	}
	if err := resume(); err != nil {
		t.Errorf("second resume: %v", err)
	}
	if _, err := Pause(0); err == nil {
		t.Error("Pause(0): want error")
	}
}

func TestEnvVia(t *testing.T) {
	s := &Stack{Env: []string{
		"AWS_ENDPOINT_URL_DYNAMODB=http://127.0.0.1:8100",
		"AWS_ENDPOINT_URL_SQS=http://127.0.0.1:9424",
		"QUEUE_URL=http://127.0.0.1:9424/000000000000/hookwall-events",
	}}
	h := &Harness{DynamoURL: "http://127.0.0.1:1111", SQSURL: "http://127.0.0.1:2222"}
	got := s.EnvVia(h)
	want := []string{
		"AWS_ENDPOINT_URL_DYNAMODB=http://127.0.0.1:1111",
		"AWS_ENDPOINT_URL_SQS=http://127.0.0.1:2222",
		"QUEUE_URL=http://127.0.0.1:9424/000000000000/hookwall-events",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("EnvVia = %q, want %q", got, want)
	}
	if s.Env[0] != "AWS_ENDPOINT_URL_DYNAMODB=http://127.0.0.1:8100" {
		t.Error("EnvVia modified the stack's Env")
	}
}
