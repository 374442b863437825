//go:build integration

package main

import (
	"context"
	"os"
	"testing"
	"time"
)

// TestBootstrapSize builds every function as `make build` does (linux/arm64,
// -tags lambda.norpc -trimpath -ldflags='-s -w', CGO_ENABLED=0) and fails
// when a bootstrap is over SizeBudget (12,000,000 bytes). The size is
// deterministic for a Go version and go.sum, so this is a regression guard.
func TestBootstrapSize(t *testing.T) {
	root := root(t)
	dir := t.TempDir()
	for _, fn := range Functions {
		t.Run(fn, func(t *testing.T) {
			bin, err := Build(context.Background(), root, fn, "arm64", dir)
			if err != nil {
				t.Fatal(err)
			}
			st, err := os.Stat(bin)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: bootstrap %d bytes (%.2f MB), budget %d, headroom %d bytes", fn, st.Size(), float64(st.Size())/1e6, SizeBudget, SizeBudget-st.Size())
			if st.Size() > SizeBudget {
				t.Errorf("%s: bootstrap is %d bytes, over the %d-byte budget (issue #11: ≤ 12 MB)", fn, st.Size(), SizeBudget)
			}
		})
	}
}

// BenchmarkInit reports each function's init (exec to its first
// runtime/invocation/next, local architecture) as ns/op and init-ms/op.
// A report, never a pass/fail:
//
//	go test -tags integration -run '^$' -bench Init -benchtime 10x ./infra/coldstart
func BenchmarkInit(b *testing.B) {
	root := root(b)
	dir := b.TempDir()
	for _, fn := range Functions {
		b.Run(fn, func(b *testing.B) {
			bin, err := Build(context.Background(), root, fn, localArch(), dir)
			if err != nil {
				b.Fatal(err)
			}
			a, err := newRuntimeAPI()
			if err != nil {
				b.Fatal(err)
			}
			defer a.close()
			env := Env(root, fn)
			if _, err := a.initOnce(bin, env, 10*time.Second); err != nil { // warm-up: page cache
				b.Fatal(err)
			}
			var total time.Duration
			b.ResetTimer()
			for range b.N {
				d, err := a.initOnce(bin, env, 10*time.Second)
				if err != nil {
					b.Fatal(err)
				}
				total += d
			}
			b.ReportMetric(float64(total.Microseconds())/1000/float64(b.N), "init-ms/op")
		})
	}
}

func root(tb testing.TB) string {
	tb.Helper()
	wd, err := os.Getwd()
	if err != nil {
		tb.Fatal(err)
	}
	r, err := repoRoot(wd)
	if err != nil {
		tb.Fatal(err)
	}
	return r
}
