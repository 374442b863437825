package localrun

import (
	"net/url"
	"path/filepath"

	"github.com/hookwall/hookwall/shared/config/runfile"
)

// DiscoveryFile is the file, in the run directory, by which other programs
// (the hookwall CLI, "hookwall-run send") find a running runner: package
// runfile's format, documented in the package documentation.
const DiscoveryFile = runfile.Name

// readDiscovery reads dir/runner.json; ok is false when there is none, it
// is not a runner file, or the runner that wrote it is gone.
func readDiscovery(dir string) (d *runfile.Info, ok bool) {
	d, err := runfile.Read(filepath.Join(dir, runfile.Name))
	return d, err == nil && d != nil
}

// loopbackURL reports whether u is an http(s) URL of a loopback host.
func loopbackURL(u string) bool {
	p, err := url.Parse(u)
	if err != nil {
		return false
	}
	switch p.Hostname() {
	case "127.0.0.1", "localhost", "::1":
		return true
	}
	return false
}
