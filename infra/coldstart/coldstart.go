// Command coldstart measures each Lambda function's bootstrap size and init
// duration (issue #11, "Cold start and size").
//
//	go run ./infra/coldstart [-n 10] [-functions receiver,processor,compensator] [-rie PATH] [-json]
//
// Size: every functions/<name> is built as `make build` builds it
// (GOOS=linux GOARCH=arm64 CGO_ENABLED=0, -tags lambda.norpc -trimpath
// -ldflags='-s -w') and the bootstrap's bytes are reported against the
// 12 MB budget (12,000,000 bytes).
//
// Init: the same build for the local architecture is started n times under
// a minimal Lambda Runtime API served here on 127.0.0.1
// (AWS_LAMBDA_RUNTIME_API). Init is the time from exec to the bootstrap's
// first GET /2018-06-01/runtime/invocation/next, which is where Lambda's
// "Init Duration" ends too: process start, Go runtime, settings, tenants
// document, SDK clients, then lambda.Start. A POST to
// /runtime/init/error, or an exit before the first next, is a failure.
// The process is killed once it asks for its first event; no invocation is
// served. With -rie PATH, each function is also started n times under the
// AWS Lambda Runtime Interface Emulator (which starts the runtime on the
// first invoke) and the median of its own init measurement, the "INIT
// REPORT(durationMs: …)" log line (from starting the runtime to its first
// next, the same span), is shown next to ours. The RIE's REPORT line's
// "Init Duration" is not used: it measures nothing of the bootstrap (0.03 ms).
//
// Environment: what a function needs at init, as in env.json and the local
// stack (.local/run/env.sh of `make services-up`): TABLE_NAME, QUEUE_URL,
// DLQ_URL, the AWS_ENDPOINT_URL_* of the local stack, test credentials,
// HOOKWALL_TENANTS_FILE=infra/local/tenants.json (the local stand-in for
// TENANTS_SECRET_ARN: in AWS the init also pays one Secrets Manager
// GetSecretValue, which this does not measure). Nothing is called over the
// network during init, so the stack need not run.
//
// The integration test in this directory (go test -tags integration
// ./infra/coldstart) fails when a bootstrap is over the budget; the init
// times are reported, never asserted.
package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// SizeBudget is the largest acceptable bootstrap: 12 MB, read strictly as
// 12,000,000 bytes (12 MiB would allow 582,912 bytes more).
const SizeBudget = 12_000_000

// InitTarget is the init duration the issue aims for (reported, not asserted).
const InitTarget = 15 * time.Millisecond

// Functions are the Lambda functions of template.yaml, as functions/<name>.
var Functions = []string{"receiver", "processor", "compensator"}

// repoRoot finds the module root (the directory holding go.mod) from dir up.
func repoRoot(dir string) (string, error) {
	for d := dir; ; d = filepath.Dir(d) {
		if b, err := os.ReadFile(filepath.Join(d, "go.mod")); err == nil && strings.Contains(string(b), "module github.com/hookwall/hookwall") {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", errors.New("coldstart: no go.mod of github.com/hookwall/hookwall above " + dir)
		}
	}
}

// Build compiles functions/<fn> for goarch (linux) with the flags of `make
// build` into dir/<fn>-<goarch>/bootstrap and returns its path.
func Build(ctx context.Context, root, fn, goarch, dir string) (string, error) {
	out := filepath.Join(dir, fn+"-"+goarch, "bootstrap")
	cmd := exec.CommandContext(ctx, "go", "build", "-tags", "lambda.norpc", "-trimpath", "-ldflags=-s -w", "-o", out, "./functions/"+fn)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "GOOS=linux", "GOARCH="+goarch, "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build %s for %s: %v\n%s", fn, goarch, err, b)
	}
	return out, nil
}

// Env is the environment a function starts with, apart from
// AWS_LAMBDA_RUNTIME_API: env.json's values for the local stack, the tenants
// file, test credentials and the Lambda variables a runtime sees.
func Env(root, fn string) []string {
	env := []string{
		"PATH=" + os.Getenv("PATH"),
		"TABLE_NAME=hookwall-events",
		"QUEUE_URL=http://127.0.0.1:9324/000000000000/hookwall-events",
		"DLQ_URL=http://127.0.0.1:9324/000000000000/hookwall-events-dlq",
		"AWS_ENDPOINT_URL_DYNAMODB=http://127.0.0.1:8000",
		"AWS_ENDPOINT_URL_SQS=http://127.0.0.1:9324",
		"HOOKWALL_TENANTS_FILE=" + filepath.Join(root, "infra/local/tenants.json"),
		"LOG_LEVEL=info",
		"AWS_REGION=us-east-1",
		"AWS_DEFAULT_REGION=us-east-1",
		"AWS_ACCESS_KEY_ID=test",
		"AWS_SECRET_ACCESS_KEY=test",
		"AWS_LAMBDA_FUNCTION_NAME=hookwall-" + fn,
		"AWS_LAMBDA_FUNCTION_VERSION=$LATEST",
		"AWS_LAMBDA_FUNCTION_MEMORY_SIZE=128",
		"AWS_LAMBDA_LOG_GROUP_NAME=/aws/lambda/hookwall-" + fn,
		"AWS_LAMBDA_LOG_STREAM_NAME=coldstart",
		"AWS_EXECUTION_ENV=AWS_Lambda_provided.al2023",
		"_HANDLER=bootstrap",
		"TZ=:UTC",
	}
	if fn != "receiver" {
		env = append(env, "EVENT_BUS_NAME=")
	}
	return env
}

// runtimeAPI is a Lambda Runtime API that only waits for the first next.
type runtimeAPI struct {
	ln      net.Listener
	srv     *http.Server
	mu      sync.Mutex
	next    chan time.Time
	initErr chan string
}

func newRuntimeAPI() (*runtimeAPI, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	a := &runtimeAPI{ln: ln}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /2018-06-01/runtime/invocation/next", func(w http.ResponseWriter, r *http.Request) {
		at := time.Now()
		a.mu.Lock()
		ch := a.next
		a.mu.Unlock()
		select {
		case ch <- at:
		default:
		}
		<-r.Context().Done() // held until the process is killed
	})
	mux.HandleFunc("POST /2018-06-01/runtime/init/error", func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(io.LimitReader(r.Body, 4096))
		a.mu.Lock()
		ch := a.initErr
		a.mu.Unlock()
		select {
		case ch <- string(b):
		default:
		}
		w.WriteHeader(http.StatusAccepted)
	})
	a.srv = &http.Server{Handler: mux}
	go a.srv.Serve(ln)
	return a, nil
}

func (a *runtimeAPI) close() { a.srv.Close() }

// InitOnce starts bootstrap once and returns the time from exec to its first
// next request.
func (a *runtimeAPI) initOnce(bootstrap string, env []string, timeout time.Duration) (time.Duration, error) {
	next, initErr := make(chan time.Time, 1), make(chan string, 1)
	a.mu.Lock()
	a.next, a.initErr = next, initErr
	a.mu.Unlock()
	var out strings.Builder
	cmd := exec.Command(bootstrap)
	cmd.Dir = filepath.Dir(bootstrap)
	cmd.Env = append(slices.Clone(env), "AWS_LAMBDA_RUNTIME_API="+a.ln.Addr().String())
	cmd.Stdout, cmd.Stderr = &limited{w: &out, n: 8192}, &limited{w: &out, n: 8192}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() {
		_ = cmd.Process.Kill()
		<-exited
	}()
	select {
	case at := <-next:
		return at.Sub(start), nil
	case msg := <-initErr:
		return 0, fmt.Errorf("init error: %s; output: %s", msg, out.String())
	case err := <-exited:
		exited <- err
		return 0, fmt.Errorf("exited before its first next (%v); output: %s", err, out.String())
	case <-time.After(timeout):
		return 0, fmt.Errorf("no next request within %s; output: %s", timeout, out.String())
	}
}

type limited struct {
	mu sync.Mutex
	w  io.Writer
	n  int
}

func (l *limited) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.n > 0 {
		k := min(len(p), l.n)
		l.w.Write(p[:k])
		l.n -= k
	}
	return len(p), nil
}

// Inits starts bootstrap n times (after one unmeasured warm-up run that
// loads the binary into the page cache) and returns the durations.
func Inits(bootstrap string, env []string, n int) ([]time.Duration, error) {
	a, err := newRuntimeAPI()
	if err != nil {
		return nil, err
	}
	defer a.close()
	if _, err := a.initOnce(bootstrap, env, 10*time.Second); err != nil {
		return nil, err
	}
	ds := make([]time.Duration, 0, n)
	for range n {
		d, err := a.initOnce(bootstrap, env, 10*time.Second)
		if err != nil {
			return nil, err
		}
		ds = append(ds, d)
	}
	return ds, nil
}

// Median of ds (the mean of the middle two for an even count).
func Median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// rieInit is the RIE's own init measurement: from "Start runtime" to the
// runtime's first next ("INIT REPORT(durationMs: 9.056000)"). Its REPORT
// line's "Init Duration" is not that (it printed 0.03 ms beside it).
var rieInit = regexp.MustCompile(`INIT REPORT\(durationMs: ([0-9.]+)\)`)

// RIEInit starts bootstrap under the Runtime Interface Emulator at rie,
// invokes it once with payload and returns the init duration of its INIT
// REPORT line (0 if the RIE printed none) and the lines of its log read.
func RIEInit(rie, bootstrap string, env []string, payload string) (float64, string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, "", err
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	cmd := exec.Command(rie, "--log-level", "info", "--runtime-interface-emulator-address", "127.0.0.1:"+strconv.Itoa(port), bootstrap)
	cmd.Dir = filepath.Dir(bootstrap)
	cmd.Env = append(slices.Clone(env), "AWS_LAMBDA_FUNCTION_TIMEOUT=10")
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	if err := cmd.Start(); err != nil {
		return 0, "", err
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait(); pw.Close() }()
	lines := make(chan string, 256)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			default:
			}
		}
	}()
	url := fmt.Sprintf("http://127.0.0.1:%d/2015-03-31/functions/function/invocations", port)
	var resp *http.Response
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if resp, err = http.Post(url, "application/json", strings.NewReader(payload)); err == nil {
			break
		}
	}
	if err != nil {
		return 0, "", fmt.Errorf("rie: invoke: %w", err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	var log strings.Builder
	timeout := time.After(3 * time.Second)
	for {
		select {
		case l := <-lines:
			log.WriteString(l + "\n")
			if m := rieInit.FindStringSubmatch(l); m != nil {
				v, _ := strconv.ParseFloat(m[1], 64)
				return v, log.String(), nil
			}
			if strings.HasPrefix(strings.TrimSpace(l), "END RequestId") {
				return 0, log.String(), nil
			}
		case <-timeout:
			return 0, log.String(), nil
		}
	}
}

// localArch is the GOARCH the init runs use.
func localArch() string { return runtime.GOARCH }
