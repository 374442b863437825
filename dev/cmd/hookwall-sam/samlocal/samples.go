package samlocal

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/hookwall/hookwall/dev/cmd/hookwall-run/localrun"
)

// Sample is one event of events/: the function it is for and its file.
type Sample struct {
	Function string
	Path     string
}

// Samples lists the samples of eventsDir (events/): every
// <function>/*.json, where <function> is the function's name in lower
// case (receiver, processor, compensator), in the order a pipeline sees
// them: the receiver's first (they claim the events the processor's and
// compensator's samples name).
func Samples(eventsDir string) ([]Sample, error) {
	var out []Sample
	for _, fn := range Functions {
		dir := strings.ToLower(strings.TrimSuffix(fn, "Function"))
		files, err := filepath.Glob(filepath.Join(eventsDir, dir, "*.json"))
		if err != nil {
			return nil, fmt.Errorf("samlocal: samples: %w", err)
		}
		sort.Strings(files)
		for _, f := range files {
			out = append(out, Sample{Function: fn, Path: f})
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("samlocal: no samples in %s", eventsDir)
	}
	return out, nil
}

// SampleResult is what one `sam local invoke` of a sample gave.
type SampleResult struct {
	Sample
	// Answer is the function's answer (the last line SAM printed on stdout).
	Answer string
	// Took is the whole `sam local invoke`: the SAM CLI, the container and the function.
	Took time.Duration
	// Err says why the sample failed: SAM failed, the function failed, or
	// the receiver answered other than 2xx.
	Err error
}

// InvokeSamples is `make sam-invoke`: it prepares the stack as `make
// sam-local` does (without start-api and start-lambda), signs the
// receiver's samples anew (`make events` into the run directory, right
// before invoking them: their signatures carry the time) and runs `sam
// local invoke` on every sample of events/, the receiver's first. Each
// result is written to out as it comes; the error says how many failed.
func InvokeSamples(ctx context.Context, cfg Config, sys System, only []string) ([]SampleResult, error) {
	lk, err := localrun.AcquireLock(cfg.Run.RunDir, localrun.HolderSamInvoke)
	if err != nil {
		return nil, err
	}
	defer lk.Release()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	root := cfg.Run.Root

	// The samples' tenant forwards to a local target, as in make sam-local.
	fwdLn, forwardURL, err := localrun.ListenForward("")
	if err != nil {
		return nil, err
	}
	var servers localrun.Servers
	servers.ServeForward(fwdLn, filepath.Join(cfg.Run.RunDir, ForwardedFile), log)
	defer servers.Shutdown(ctx)
	doc, err := localrun.DemoTenants(forwardURL)
	if err != nil {
		return nil, err
	}

	st, err := Prepare(ctx, cfg, doc, log, sys.Stderr, sys.Setenv)
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, st.Close()) }()

	samples, err := Samples(filepath.Join(root, "events"))
	if err != nil {
		return nil, err
	}
	signed := filepath.Join(cfg.Run.RunDir, "events")
	var results []SampleResult
	var failed int
	// Signed samples carry their signing time (HOOKWALL_TIMESTAMP_TOLERANCE, 300 s):
	// they are signed anew before the first receiver sample and again when
	// the last signing is resignAfter old.
	var signedAt time.Time
	for _, s := range samples {
		if len(only) > 0 && !matchAny(only, s) {
			continue
		}
		path := s.Path
		if s.Function == Receiver {
			if time.Since(signedAt) > resignAfter {
				fmt.Fprintf(sys.Stderr, "sam-invoke: signing the receiver's samples anew (make events EVENTS_OUT=%s)\n", localrun.ShortPath(root, signed))
				cmd := exec.CommandContext(ctx, "make", "--no-print-directory", "events", "EVENTS_OUT="+signed)
				cmd.Dir = root
				if out, err := cmd.CombinedOutput(); err != nil {
					return results, fmt.Errorf("samlocal: make events: %w\n%s", err, out)
				}
				signedAt = time.Now()
			}
			path = filepath.Join(signed, "receiver", filepath.Base(s.Path))
		}
		r := invokeSample(ctx, st.SAM, s, path)
		results = append(results, r)
		status := "ok"
		if r.Err != nil {
			status = "FAILED: " + r.Err.Error()
			failed++
		}
		fmt.Fprintf(sys.Stdout, "sam-invoke: %-20s %-28s %6.2fs  %s  → %s\n", s.Function, localrun.ShortPath(root, s.Path),
			r.Took.Seconds(), status, shorten(r.Answer, 120))
	}
	if failed > 0 {
		return results, fmt.Errorf("samlocal: %d of %d samples failed", failed, len(results))
	}
	return results, nil
}

// resignAfter is how old signed samples may get before they are signed again.
const resignAfter = time.Minute

func matchAny(only []string, s Sample) bool {
	for _, o := range only {
		if strings.Contains(s.Path, o) || s.Function == o {
			return true
		}
	}
	return false
}

// invokeSample runs `sam local invoke <fn> -e path` and judges its answer.
func invokeSample(ctx context.Context, sam *SAM, s Sample, path string) SampleResult {
	r := SampleResult{Sample: s}
	cmd := sam.Command(ctx, "invoke", s.Function, "-e", path)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	r.Took = time.Since(start)
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	r.Answer = strings.TrimSpace(lines[len(lines)-1])
	switch {
	case err != nil:
		r.Err = fmt.Errorf("sam local invoke: %v: %s", err, tail(stderr.String(), 5))
	case r.Answer == "":
		r.Err = fmt.Errorf("no answer: %s", tail(stderr.String(), 5))
	default:
		r.Err = judge(s.Function, r.Answer)
	}
	return r
}

// judge reads a function's answer: a Lambda error payload fails every
// function; the receiver must answer 2xx; the processor's and
// compensator's partial batch responses must name no failed message.
func judge(function, answer string) error {
	var m map[string]any
	if err := json.Unmarshal([]byte(answer), &m); err != nil {
		if function == Compensator && answer == "null" {
			return nil
		}
		return fmt.Errorf("the answer is not JSON: %w", err)
	}
	if t, ok := m["errorType"]; ok {
		return fmt.Errorf("the function failed: %v: %v", t, m["errorMessage"])
	}
	switch function {
	case Receiver:
		code, _ := m["statusCode"].(float64)
		if code < 200 || code > 299 {
			return fmt.Errorf("the receiver answered %v: %v", m["statusCode"], m["body"])
		}
	default:
		if f, _ := m["batchItemFailures"].([]any); len(f) > 0 {
			return fmt.Errorf("%d message(s) reported as failed: %v", len(f), f)
		}
	}
	return nil
}

func shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
