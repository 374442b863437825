package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/hookwall/hookwall/shared/base/repo"
	"github.com/hookwall/hookwall/shared/config/runfile"
)

// stackVariables name a stack: when the environment sets any of them, it
// describes the stack to use, and the runner's environment is left alone
// (a table name from AWS never meets the runner's local endpoints).
var stackVariables = []string{"TABLE_NAME", "QUEUE_URL", "DLQ_URL", "AWS_ENDPOINT_URL_DYNAMODB", "AWS_ENDPOINT_URL_SQS"}

// awsVariables are the AWS SDK's own variables the runner's environment may
// give; the SDK reads the process environment itself, so openAWS applies them.
var awsVariables = []string{"AWS_REGION", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN",
	"AWS_ENDPOINT_URL_DYNAMODB", "AWS_ENDPOINT_URL_SQS", "AWS_ENDPOINT_URL_EVENTBRIDGE"}

// runnerCandidates returns where runner.json may be, in order:
// $HOOKWALL_RUN_DIR alone when it is set; else the run directory of the
// repository holding wd (the first directory at or above wd with this
// module's go.mod or a .local/run/runner.json), then the one next to the
// executable (make run builds into <root>/.local/bin).
func runnerCandidates(getenv func(string) string, wd, exe string) []string {
	if dir := getenv("HOOKWALL_RUN_DIR"); dir != "" {
		if !filepath.IsAbs(dir) && wd != "" {
			dir = filepath.Join(wd, dir)
		}
		return []string{filepath.Join(dir, runfile.Name)}
	}
	var out []string
	if wd != "" {
		for d := filepath.Clean(wd); ; d = filepath.Dir(d) {
			p := filepath.Join(d, ".local", "run", runfile.Name)
			if repo.IsRoot(d) || fileExists(p) {
				out = append(out, p)
				break
			}
			if filepath.Dir(d) == d {
				break
			}
		}
	}
	if exe != "" {
		p := filepath.Join(filepath.Dir(exe), "..", "run", runfile.Name)
		if p = filepath.Clean(p); !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// runner returns the running local runner, looked for once; nil when none
// runs. Why none was usable is kept for the configuration hint.
func (a *app) runner() *runfile.Info {
	if a.runnerLooked {
		return a.runnerFound
	}
	a.runnerLooked = true
	for _, p := range runnerCandidates(a.getenv, a.wd, a.exe) {
		r, err := runfile.Read(p)
		if err != nil {
			a.runnerProblem = err
			continue
		}
		if r != nil {
			a.runnerFound, a.runnerProblem = r, nil
			return r
		}
	}
	return nil
}

// usedRunner says once, on stderr, that values come from the runner.
func (a *app) usedRunner(r *runfile.Info) {
	if a.runnerNoted {
		return
	}
	a.runnerNoted = true
	fmt.Fprintf(a.stderr, "note: using the runner at %s (%s)\n", r.URL, r.Path)
}

// explicitStack reports whether the environment names a stack itself.
func (a *app) explicitStack() bool {
	for _, k := range stackVariables {
		if a.getenv(k) != "" {
			return true
		}
	}
	return false
}

// runnerEnv returns the runner's value of the variable k when the
// environment leaves it, and every stack variable, unset ("" otherwise).
func (a *app) runnerEnv(k string) string {
	if a.getenv(k) != "" || a.explicitStack() {
		return ""
	}
	r := a.runner()
	if r == nil || r.Env[k] == "" {
		return ""
	}
	a.usedRunner(r)
	return r.Env[k]
}

// runnerTenantsFile returns the runner's tenants document when the
// environment names none ("" otherwise).
func (a *app) runnerTenantsFile() string {
	if a.getenv("HOOKWALL_TENANTS_FILE") != "" || a.getenv("TENANTS_SECRET_ARN") != "" {
		return ""
	}
	r := a.runner()
	if r == nil {
		return ""
	}
	f := r.Env["HOOKWALL_TENANTS_FILE"]
	if f == "" {
		f = r.TenantsFile
	}
	if f != "" {
		a.usedRunner(r)
	}
	return f
}

// runnerURL returns the runner's receiver URL, or def when none runs.
func (a *app) runnerURL(def string) string {
	if r := a.runner(); r != nil {
		a.usedRunner(r)
		return strings.TrimRight(r.URL, "/")
	}
	return def
}

// lookupEnv returns a getenv for the settings: the environment, and for
// what it leaves unset the runner's environment (tenants: its tenants
// document, when withTenants).
func (a *app) lookupEnv(withTenants bool) func(string) string {
	return func(k string) string {
		if v := a.getenv(k); v != "" {
			return v
		}
		switch k {
		case "HOOKWALL_TENANTS_FILE":
			if withTenants {
				return a.runnerTenantsFile()
			}
			return ""
		case "TENANTS_SECRET_ARN":
			return ""
		}
		return a.runnerEnv(k)
	}
}

// awsOverrides returns the AWS SDK variables the runner gives and the
// environment leaves unset, for openAWS to apply.
func (a *app) awsOverrides() map[string]string {
	out := map[string]string{}
	for _, k := range awsVariables {
		if v := a.runnerEnv(k); v != "" {
			out[k] = v
		}
	}
	return out
}
