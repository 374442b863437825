package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hookwall/hookwall/shared/config/runfile"
)

// deadPID returns the pid of a process that has ended (and been waited for).
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatalf("run true: %v", err)
	}
	return cmd.Process.Pid
}

// localTenants is the repository's local tenants document (demo, demo-plain).
func localTenants(t *testing.T) string {
	t.Helper()
	p, err := filepath.Abs("../../infra/local/tenants.json")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// writeRunner writes dir/runner.json for r and returns dir.
func writeRunner(t *testing.T, dir string, r runfile.Info) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, runfile.Name), b, 0o600); err != nil {
		t.Fatal(err)
	}
	return dir
}

// runnerEnv is a runner's environment for the fixture's fake stack.
func runnerEnvFor(t *testing.T) map[string]string {
	return map[string]string{"TABLE_NAME": "runner-events", "QUEUE_URL": "http://sqs.test/runner/main",
		"DLQ_URL": "http://sqs.test/runner/dlq", "AWS_REGION": "us-east-1", "AWS_ACCESS_KEY_ID": "test",
		"AWS_SECRET_ACCESS_KEY": "test", "AWS_ENDPOINT_URL_DYNAMODB": "http://127.0.0.1:8000",
		"AWS_ENDPOINT_URL_SQS": "http://127.0.0.1:9324", "HOOKWALL_TENANTS_FILE": localTenants(t)}
}

// bareFixture is a fixture whose environment names nothing but the run
// directory, as for a newcomer who only ran `make run`.
func bareFixture(runDir string) *fixture {
	fx := newFixture()
	fx.env = map[string]string{"HOOKWALL_RUN_DIR": runDir}
	return fx
}

func TestRunnerCandidates(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "go.mod"), []byte("module github.com/hookwall/hookwall\n\ngo 1.26\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	deep := filepath.Join(root, "cmd", "hookwall")
	if err := os.MkdirAll(deep, 0o755); err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(root, ".local", "bin", "hookwall")
	env := func(kv ...string) func(string) string {
		return func(k string) string {
			if i := slices.Index(kv, k); i >= 0 && i%2 == 0 {
				return kv[i+1]
			}
			return ""
		}
	}
	inRoot := filepath.Join(root, ".local", "run", runfile.Name)
	// From a subdirectory of the repository, and next to the binary (the same file: once).
	if got := runnerCandidates(env(), deep, exe); !slices.Equal(got, []string{inRoot}) {
		t.Errorf("from %s: %q, want %q", deep, got, inRoot)
	}
	// Outside any repository: only next to the binary.
	outside := t.TempDir()
	if got := runnerCandidates(env(), outside, "/opt/hookwall/bin/hookwall"); !slices.Equal(got, []string{"/opt/hookwall/run/runner.json"}) {
		t.Errorf("outside: %q", got)
	}
	// A directory holding .local/run/runner.json counts without go.mod.
	writeRunner(t, filepath.Join(outside, ".local", "run"), runfile.Info{PID: 1, URL: "http://127.0.0.1:1"})
	sub := filepath.Join(outside, "x")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if got := runnerCandidates(env(), sub, ""); !slices.Equal(got, []string{filepath.Join(outside, ".local", "run", runfile.Name)}) {
		t.Errorf("under a run directory: %q", got)
	}
	// HOOKWALL_RUN_DIR alone when set (relative to the working directory).
	if got := runnerCandidates(env("HOOKWALL_RUN_DIR", "elsewhere"), deep, exe); !slices.Equal(got, []string{filepath.Join(deep, "elsewhere", runfile.Name)}) {
		t.Errorf("HOOKWALL_RUN_DIR: %q", got)
	}
}

func TestRunnerGivesTheEnvironment(t *testing.T) {
	runDir := writeRunner(t, t.TempDir(), runfile.Info{PID: os.Getpid(), URL: "http://127.0.0.1:3999", Tenants: []string{"demo"}, Env: runnerEnvFor(t)})
	fx := bareFixture(runDir)
	fx.store.put(failedRecord("line#demo#F1", testNow))
	code, out, errOut := fx.run(t, "events", "list", "--status", "FAILED")
	want(t, code, out, errOut, exitOK, []string{"line#demo#F1", "1 event(s) FAILED"},
		[]string{"note: using the runner at http://127.0.0.1:3999 (" + filepath.Join(runDir, runfile.Name) + ")"})
	if fx.settings.TableName != "runner-events" {
		t.Errorf("TABLE_NAME %q, want the runner's", fx.settings.TableName)
	}
	if n := strings.Count(errOut, "using the runner"); n != 1 {
		t.Errorf("the runner noted %d times, want once:\n%s", n, errOut)
	}

	// The environment's stack wins: none of the runner's variables, no note.
	fx = newFixture()
	fx.env["HOOKWALL_RUN_DIR"] = runDir
	code, out, errOut = fx.run(t, "events", "list")
	want(t, code, out, errOut, exitOK, nil, nil)
	if fx.settings.TableName != "events" || strings.Contains(errOut, "runner") {
		t.Errorf("TABLE_NAME %q, stderr %q: want the environment's and no word of the runner", fx.settings.TableName, errOut)
	}
}

func TestRunnerAWSOverrides(t *testing.T) {
	runDir := writeRunner(t, t.TempDir(), runfile.Info{PID: os.Getpid(), URL: "http://127.0.0.1:3999", Env: runnerEnvFor(t)})
	env := map[string]string{"HOOKWALL_RUN_DIR": runDir, "AWS_REGION": "eu-west-1"}
	a := newApp(&strings.Builder{}, &strings.Builder{}, func(k string) string { return env[k] })
	a.wd, a.exe = "", ""
	got := a.awsOverrides()
	if got["AWS_REGION"] != "" || got["AWS_ENDPOINT_URL_DYNAMODB"] != "http://127.0.0.1:8000" || got["AWS_ACCESS_KEY_ID"] != "test" {
		t.Errorf("overrides %v: want the runner's endpoints and credentials, not its region (the environment sets one)", got)
	}
	env["AWS_ENDPOINT_URL_DYNAMODB"] = "https://dynamodb.eu-west-1.amazonaws.com"
	a = newApp(&strings.Builder{}, &strings.Builder{}, func(k string) string { return env[k] })
	a.wd, a.exe = "", ""
	if got := a.awsOverrides(); len(got) != 0 {
		t.Errorf("overrides %v with a stack in the environment, want none", got)
	}
}

func TestStaleRunnerIsIgnored(t *testing.T) {
	runDir := writeRunner(t, t.TempDir(), runfile.Info{PID: deadPID(t), URL: "http://127.0.0.1:3999", Env: runnerEnvFor(t)})
	fx := bareFixture(runDir)
	code, out, errOut := fx.run(t, "events", "list")
	want(t, code, out, errOut, exitUsage, nil, []string{"hookwall: TABLE_NAME is required", "(ignored " + filepath.Join(runDir, runfile.Name) + ": pid", "is not running; the runner stopped without removing the file", "make run"})
	if strings.Contains(errOut, "using the runner") || fx.opens != 0 {
		t.Errorf("a stale runner.json was used:\n%s", errOut)
	}
	// Malformed: ignored too, saying why.
	if err := os.WriteFile(filepath.Join(runDir, runfile.Name), []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = bareFixture(runDir).run(t, "dlq", "peek")
	want(t, code, out, errOut, exitUsage, nil, []string{"hookwall: DLQ_URL is required", "(ignored " + filepath.Join(runDir, runfile.Name) + ": not a runner file"})
}

// receiver is an httptest receiver that records the paths it is sent.
func receiver(t *testing.T) (*httptest.Server, *[]string) {
	var paths []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		paths = append(paths, r.URL.Path)
		fmt.Fprint(w, "ok")
	}))
	t.Cleanup(srv.Close)
	return srv, &paths
}

func TestSendAndSignFindTheRunner(t *testing.T) {
	srv, paths := receiver(t)
	runDir := writeRunner(t, t.TempDir(), runfile.Info{PID: os.Getpid(), URL: srv.URL, TenantsFile: localTenants(t), Tenants: []string{"demo", "demo-plain"}})
	body := writeBody(t, "line.json", `{"destination":"U1","events":[]}`)

	// send: to the runner, signed with its tenants, without --url or HOOKWALL_TENANTS_FILE.
	code, out, errOut := bareFixture(runDir).run(t, "send", "line", "--tenant", "demo", "--body", body)
	want(t, code, out, errOut, exitOK, []string{"HTTP/1.1 200 OK\nok\n"}, []string{"note: using the runner at " + srv.URL})
	if !slices.Equal(*paths, []string{"/webhooks/line/demo"}) {
		t.Errorf("the runner received %q", *paths)
	}

	// sign: the printed curl command targets the runner.
	code, out, errOut = bareFixture(runDir).run(t, "sign", "line", "--tenant", "demo", "--body", body)
	want(t, code, out, errOut, exitOK, []string{"curl -sS -i -X POST '" + srv.URL + "/webhooks/line/demo'"}, nil)

	// Flags and the environment win; the runner then goes unmentioned.
	other, otherPaths := receiver(t)
	fx := bareFixture(runDir)
	fx.env["HOOKWALL_TENANTS_FILE"] = localTenants(t)
	code, out, errOut = fx.run(t, "send", "line", "--tenant", "demo", "--body", body, "--url", other.URL)
	want(t, code, out, errOut, exitOK, []string{"200 OK"}, nil)
	if len(*otherPaths) != 1 || len(*paths) != 1 || strings.Contains(errOut, "runner") {
		t.Errorf("--url %v, runner %v, stderr %q: want --url alone, and no word of the runner", *otherPaths, *paths, errOut)
	}

	// No runner: the default URL, and a tenants document is required as before.
	code, out, errOut = bareFixture(t.TempDir()).run(t, "sign", "line", "--tenant", "demo", "--body", body)
	want(t, code, out, errOut, exitUsage, nil, []string{"hookwall: HOOKWALL_TENANTS_FILE or TENANTS_SECRET_ARN is required", "make run"})
	fx = newFixture()
	fx.env["HOOKWALL_RUN_DIR"] = t.TempDir()
	code, out, errOut = fx.run(t, "sign", "line", "--tenant", "demo", "--body", body)
	want(t, code, out, errOut, exitOK, []string{"'" + defaultBase + "/webhooks/line/demo'"}, nil)
}

func TestRunnerTenantsCheckTheListing(t *testing.T) {
	// The runner's tenants, when the environment names no stack.
	runDir := writeRunner(t, t.TempDir(), runfile.Info{PID: os.Getpid(), URL: "http://127.0.0.1:3999", Tenants: []string{"demo"}, Env: runnerEnvFor(t)})
	code, out, errOut := bareFixture(runDir).run(t, "events", "list", "--tenant", "nosuch")
	want(t, code, out, errOut, exitRefused, nil, []string{`no tenant "nosuch" in the local runner's tenants (` + filepath.Join(runDir, runfile.Name) + `) (tenants: demo)`})
}
