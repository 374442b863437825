package skew

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Roles are the functions a release runs, by their directory under functions/.
var Roles = []string{Receiver, Processor, Compensator}

// The roles.
const (
	Receiver    = "receiver"
	Processor   = "processor"
	Compensator = "compensator"
)

// Build is a release's function binaries, by role.
type Build struct {
	Version string
	Bins    map[string]string
}

// BuildTree builds the functions of the Go module at src into out, for
// this machine and without the lambda.norpc tag (so that they serve the
// RPC mode [StartFunction] drives).
func BuildTree(ctx context.Context, version, src, out string) (Build, error) {
	b := Build{Version: version, Bins: map[string]string{}}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return b, fmt.Errorf("skew: build %s: %w", version, err)
	}
	args := []string{"build", "-trimpath", "-buildvcs=false", "-o", out + string(filepath.Separator)}
	for _, r := range Roles {
		args = append(args, "./functions/"+r)
		b.Bins[r] = filepath.Join(out, r)
	}
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = src
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if o, err := cmd.CombinedOutput(); err != nil {
		return b, fmt.Errorf("skew: build %s in %s: %w\n%s", version, src, err, o)
	}
	return b, nil
}

// BuildCommit builds the functions of commit of the repository at repo:
// its tree is written to work/src with git archive (its own go.mod and
// go.sum), then built as [BuildTree] into work/bin.
func BuildCommit(ctx context.Context, version, repo, commit, work string) (Build, error) {
	src, tar := filepath.Join(work, "src"), filepath.Join(work, "src.tar")
	if err := os.RemoveAll(src); err != nil {
		return Build{}, fmt.Errorf("skew: clean %s: %w", src, err)
	}
	if err := os.MkdirAll(src, 0o755); err != nil {
		return Build{}, fmt.Errorf("skew: %w", err)
	}
	for _, args := range [][]string{
		{"git", "-C", repo, "archive", "--format=tar", "--output=" + tar, commit},
		{"tar", "-x", "-f", tar, "-C", src},
	} {
		if o, err := exec.CommandContext(ctx, args[0], args[1:]...).CombinedOutput(); err != nil {
			return Build{}, fmt.Errorf("skew: %s of %s (commit %s; in a shallow clone, fetch it first: git fetch --unshallow, or git fetch origin tag v%s): %w\n%s",
				strings.Join(args[:2], " "), version, commit, version, err, o)
		}
	}
	return BuildTree(ctx, version, src, filepath.Join(work, "bin"))
}
