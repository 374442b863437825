package templatetest

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

const (
	envJSONScript = "../../scripts/env-json.sh"
	ciRunPath     = "../../.ci/run"
)

// makeDefault is the Makefile's default for a `NAME ?= value` variable.
func makeDefault(t *testing.T, name string) string {
	t.Helper()
	mk, err := os.ReadFile(makefilePath)
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(name) + ` \?= (\S+)$`).FindSubmatch(mk)
	if m == nil {
		t.Fatalf("the Makefile has no %s ?= default", name)
	}
	return string(m[1])
}

// envJSON runs scripts/env-json.sh with the given settings (nothing else of
// the caller's environment that it reads).
func envJSON(t *testing.T, settings map[string]string) ([]byte, error) {
	t.Helper()
	cmd := exec.Command("bash", envJSONScript)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
	for k, v := range settings {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Logf("env-json.sh: %s", stderr.String())
	}
	return out, err
}

// The committed env.json is scripts/env-json.sh's output for the Makefile's
// default ports and names, byte for byte: neither drifts from the other or
// from the Makefile, and other ports give other endpoints (the
// `make env-json` file for sam local).
func TestEnvJSONIsGeneratedFromThePorts(t *testing.T) {
	defaults := map[string]string{}
	for _, name := range []string{"DDB_PORT", "SQS_PORT", "TABLE_NAME", "QUEUE_NAME", "DLQ_NAME"} {
		defaults[name] = makeDefault(t, name)
	}
	got, err := envJSON(t, defaults)
	if err != nil {
		t.Fatalf("scripts/env-json.sh: %v", err)
	}
	committed, err := os.ReadFile(envJSONPath)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, committed) {
		t.Errorf("env.json differs from scripts/env-json.sh's output for the Makefile's defaults %v: regenerate it with\n"+
			"  scripts/env-json.sh > env.json\ngot:\n%s\nwant:\n%s", defaults, committed, got)
	}

	other, err := envJSON(t, map[string]string{"DDB_PORT": "18000", "SQS_PORT": "19324", "QUEUE_NAME": "q", "DLQ_NAME": "q-dlq", "TABLE_NAME": "t"})
	if err != nil {
		t.Fatalf("scripts/env-json.sh with other ports: %v", err)
	}
	var env map[string]map[string]string
	if err := json.Unmarshal(other, &env); err != nil {
		t.Fatalf("scripts/env-json.sh's output is not JSON: %v\n%s", err, other)
	}
	want := map[string]string{
		"Parameters.AWS_ENDPOINT_URL_DYNAMODB": "http://127.0.0.1:18000",
		"Parameters.AWS_ENDPOINT_URL_SQS":      "http://127.0.0.1:19324",
		"Parameters.QUEUE_URL":                 "http://127.0.0.1:19324/000000000000/q",
		"Parameters.TABLE_NAME":                "t",
		"ProcessorFunction.DLQ_URL":            "http://127.0.0.1:19324/000000000000/q-dlq",
		"CompensatorFunction.DLQ_URL":          "http://127.0.0.1:19324/000000000000/q-dlq",
	}
	for path, v := range want {
		section, key, _ := strings.Cut(path, ".")
		if env[section][key] != v {
			t.Errorf("DDB_PORT=18000 SQS_PORT=19324: %s = %q, want %q", path, env[section][key], v)
		}
	}
	if strings.Contains(string(other), ":8000") || strings.Contains(string(other), ":9324") {
		t.Errorf("scripts/env-json.sh hard-codes a default port:\n%s", other)
	}

	for _, bad := range []map[string]string{{"DDB_PORT": "80a"}, {"SQS_PORT": "70000"}, {"QUEUE_NAME": `q"x`}} {
		if out, err := envJSON(t, bad); err == nil {
			t.Errorf("scripts/env-json.sh accepted %v:\n%s", bad, out)
		}
	}
}

// `make -n <target>` with the given variables: the commands make would run.
func makeDryRun(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command("make", append([]string{"-n", "-C", filepath.Join("..", "..")}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("make -n %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// `make sam-tools` and `make checkov-tools` say what they install, from
// where and that it takes minutes, and let pip show its progress.
func TestToolInstallsSayWhatTheyDo(t *testing.T) {
	for _, tc := range []struct {
		target, venvVar string
		packages        map[string]string // package: its version's Makefile variable
	}{
		{"sam-tools", "SAM_VENV", map[string]string{"aws-sam-cli": "SAM_CLI_VERSION", "cfn-lint": "CFN_LINT_VERSION"}},
		{"checkov-tools", "CHECKOV_VENV", map[string]string{"checkov": "CHECKOV_VERSION"}},
	} {
		t.Run(tc.target, func(t *testing.T) {
			wants := []string{"PyPI", "minutes"}
			for pkg, version := range tc.packages {
				wants = append(wants, pkg+"=="+makeDefault(t, version))
			}
			out := makeDryRun(t, tc.target, tc.venvVar+"="+t.TempDir())
			var echoes, pip []string
			for _, line := range strings.Split(out, "\n") {
				switch {
				case strings.HasPrefix(line, "echo "):
					echoes = append(echoes, line)
				case strings.Contains(line, "pip install"):
					pip = append(pip, line)
				}
			}
			said := strings.Join(echoes, "\n")
			for _, want := range wants {
				if !strings.Contains(said, want) {
					t.Errorf("make %s does not say %q before installing; it says:\n%s", tc.target, want, said)
				}
			}
			if len(pip) == 0 {
				t.Fatalf("make %s runs no pip install:\n%s", tc.target, out)
			}
			for _, line := range pip {
				if regexp.MustCompile(`\s(-q+|--quiet)(\s|$)`).MatchString(line) || strings.Contains(line, "--progress-bar off") {
					t.Errorf("make %s runs pip quietly (no progress for minutes): %s", tc.target, line)
				}
			}
		})
	}
}

// `make checkov` runs scripts/checkov.sh with the pinned checkov, and CI runs it.
func TestCheckovRunsInCI(t *testing.T) {
	out := makeDryRun(t, "checkov", "CHECKOV_VENV="+t.TempDir())
	if !strings.Contains(out, "scripts/checkov.sh") || !strings.Contains(out, "CHECKOV=") {
		t.Errorf("make checkov does not run scripts/checkov.sh with the venv's checkov:\n%s", out)
	}
	ci, err := os.ReadFile(ciRunPath)
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^make checkov\b`).Match(ci) {
		t.Error(".ci/run does not run make checkov")
	}
}

// `make sam-local` runs dev/cmd/hookwall-sam after installing the SAM CLI, and
// CI runs the container test.
func TestSAMLocalRunsInCI(t *testing.T) {
	out := makeDryRun(t, "sam-local", "SAM_VENV="+t.TempDir())
	if !strings.Contains(out, "./cmd/hookwall-sam") || !strings.Contains(out, "pip install") {
		t.Errorf("make sam-local does not install the SAM CLI and build dev/cmd/hookwall-sam:\n%s", out)
	}
	ci, err := os.ReadFile(ciRunPath)
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^make sam-local-test\b`).Match(ci) {
		t.Error(".ci/run does not run make sam-local-test")
	}
}
