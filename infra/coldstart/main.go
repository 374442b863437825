package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"
)

// Result is one function's figures.
type Result struct {
	Function     string    `json:"function"`
	SizeArm64    int64     `json:"bootstrapBytesArm64"`
	SizeLocal    int64     `json:"bootstrapBytesLocal"`
	LocalArch    string    `json:"localArch"`
	InitMs       []float64 `json:"initMs"`
	InitMedianMs float64   `json:"initMedianMs"`
	InitMinMs    float64   `json:"initMinMs"`
	InitMaxMs    float64   `json:"initMaxMs"`
	RIEInitMs    float64   `json:"rieInitMs,omitempty"`
	WithinSize   bool      `json:"withinSizeBudget"`
	WithinInit   bool      `json:"withinInitTarget"`
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func main() {
	n := flag.Int("n", 10, "measured init runs per function (after one warm-up run)")
	fns := flag.String("functions", strings.Join(Functions, ","), "functions to measure")
	rie := flag.String("rie", "", "path of aws-lambda-rie: also report its init duration (INIT REPORT line, median of n runs)")
	asJSON := flag.Bool("json", false, "print JSON")
	keep := flag.String("out", "", "build into this directory (default: a temporary one, removed)")
	flag.Parse()

	wd, _ := os.Getwd()
	root, err := repoRoot(wd)
	if err != nil {
		fail(err)
	}
	dir := *keep
	if dir == "" {
		if dir, err = os.MkdirTemp("", "hookwall-coldstart-"); err != nil {
			fail(err)
		}
		defer os.RemoveAll(dir)
	}
	ctx := context.Background()
	var results []Result
	for _, fn := range strings.Split(*fns, ",") {
		arm, err := Build(ctx, root, fn, "arm64", dir)
		if err != nil {
			fail(err)
		}
		local, err := Build(ctx, root, fn, localArch(), dir)
		if err != nil {
			fail(err)
		}
		r := Result{Function: fn, SizeArm64: size(arm), SizeLocal: size(local), LocalArch: localArch()}
		ds, err := Inits(local, Env(root, fn), *n)
		if err != nil {
			fail(fmt.Errorf("%s: %w", fn, err))
		}
		for _, d := range ds {
			r.InitMs = append(r.InitMs, ms(d))
			r.InitMinMs = minNonZero(r.InitMinMs, ms(d))
			r.InitMaxMs = max(r.InitMaxMs, ms(d))
		}
		r.InitMedianMs = ms(Median(ds))
		r.WithinSize = r.SizeArm64 <= SizeBudget
		r.WithinInit = Median(ds) <= InitTarget
		if *rie != "" {
			var rs []time.Duration
			for range *n {
				v, log, err := RIEInit(*rie, local, Env(root, fn), payload(fn))
				if err != nil || v == 0 {
					fmt.Fprintf(os.Stderr, "coldstart: %s under the RIE: no INIT REPORT (%v); its log:\n%s\n", fn, err, log)
					continue
				}
				rs = append(rs, time.Duration(v*float64(time.Millisecond)))
			}
			r.RIEInitMs = ms(Median(rs))
		}
		results = append(results, r)
	}
	if *asJSON {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		enc.Encode(results)
		return
	}
	fmt.Printf("bootstrap size (linux/arm64, make build flags) and init (linux/%s, exec to first runtime/invocation/next, median of %d after a warm-up)\n", localArch(), *n)
	fmt.Printf("%-12s %14s %14s %10s %10s %10s %10s  %s\n", "function", "arm64 bytes", localArch()+" bytes", "init p50", "min", "max", "RIE p50", "budget (12 MB, 15 ms)")
	for _, r := range results {
		rieCol := "-"
		if r.RIEInitMs > 0 {
			rieCol = fmt.Sprintf("%.2f ms", r.RIEInitMs)
		}
		fmt.Printf("%-12s %14d %14d %7.2f ms %7.2f ms %7.2f ms %10s  size %s, init %s\n", r.Function, r.SizeArm64, r.SizeLocal,
			r.InitMedianMs, r.InitMinMs, r.InitMaxMs, rieCol, okText(r.WithinSize), okText(r.WithinInit))
	}
}

// payload is an event the RIE can hand the function: any JSON does, the
// measurement ends with the REPORT line whatever the handler answers.
func payload(fn string) string {
	if fn == "receiver" {
		return `{"version":"2.0","routeKey":"POST /webhooks/{provider}/{tenant}","rawPath":"/webhooks/line/demo","headers":{},"body":"{}","requestContext":{"http":{"method":"POST","path":"/webhooks/line/demo"}},"pathParameters":{"provider":"line","tenant":"demo"}}`
	}
	return `{"Records":[]}`
}

func size(path string) int64 {
	st, err := os.Stat(path)
	if err != nil {
		fail(err)
	}
	return st.Size()
}

func minNonZero(a, b float64) float64 {
	if a == 0 {
		return b
	}
	return min(a, b)
}

func okText(ok bool) string {
	if ok {
		return "ok"
	}
	return "OVER"
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "coldstart:", err)
	os.Exit(1)
}
