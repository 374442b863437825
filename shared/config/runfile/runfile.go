// Package runfile is runner.json, by which a running local runner (`make
// run`, dev/cmd/hookwall-run) tells other programs (the hookwall CLI,
// "hookwall-run send") where it is: its URL, tenants and environment. The
// runner writes it into its run directory when it is ready and removes it
// when it exits; readers use it only while its process is alive.
package runfile

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"syscall"
)

// Name is the file's name in the runner's run directory.
const Name = "runner.json"

// maxBytes bounds what Read reads.
const maxBytes = 1 << 20

// Info is the content of runner.json.
type Info struct {
	PID         int               `json:"pid"`
	URL         string            `json:"url"`
	TenantsFile string            `json:"tenantsFile"`
	Tenants     []string          `json:"tenants"`
	Env         map[string]string `json:"env"`
	// Path is where Read read it from (not in the file).
	Path string `json:"-"`
}

// ErrStale says runner.json names a process that is not running.
var ErrStale = errors.New("is not running")

// Write writes in to dir/runner.json atomically (a temporary file renamed
// over it), readable by its owner only: it may carry credentials. It
// returns the file's path.
func Write(dir string, in Info) (string, error) {
	b, err := json.MarshalIndent(in, "", "  ")
	if err != nil {
		return "", fmt.Errorf("runfile: %s: %w", Name, err)
	}
	f, err := os.CreateTemp(dir, "."+Name+".*")
	if err != nil {
		return "", fmt.Errorf("runfile: %s: %w", Name, err)
	}
	tmp := f.Name()
	_, werr := f.Write(append(b, '\n'))
	if err := errors.Join(werr, f.Close()); err != nil {
		_ = os.Remove(tmp)
		return "", fmt.Errorf("runfile: write %s: %w", Name, err)
	}
	path := filepath.Join(dir, Name)
	if err := os.Rename(tmp, path); err != nil {
		_ = os.Remove(tmp)
		return "", fmt.Errorf("runfile: %s: %w", Name, err)
	}
	return path, nil
}

// Read reads the runner.json at path: nil, nil when there is none; an
// error when it is unreadable, malformed, has no absolute http(s) URL, or
// names a process that is not running ([ErrStale]).
func Read(path string) (*Info, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	defer f.Close()
	var in Info
	if err := json.NewDecoder(io.LimitReader(f, maxBytes)).Decode(&in); err != nil {
		return nil, fmt.Errorf("%s: not a runner file: %w", path, err)
	}
	in.Path = path
	if u, err := url.Parse(in.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%s: url %q is not an absolute http(s) URL", path, in.URL)
	}
	if in.PID <= 0 || !Alive(in.PID) {
		return nil, fmt.Errorf("%s: pid %d %w; the runner stopped without removing the file", path, in.PID, ErrStale)
	}
	return &in, nil
}

// Alive reports whether a process pid exists (signal 0).
func Alive(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	err = p.Signal(syscall.Signal(0))
	return err == nil || errors.Is(err, syscall.EPERM)
}
