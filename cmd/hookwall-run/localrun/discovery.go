package localrun

import (
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
)

// DiscoveryFile is the file, in the run directory, by which other programs
// (the hookwall CLI, "hookwall-run send") find a running runner. Its JSON
// shape is documented in the package documentation; they read it with
// their own types.
const DiscoveryFile = "runner.json"

// DiscoveryEnv are the variables runner.json's "env" carries: what a
// program needs to reach the runner's table and queues.
var DiscoveryEnv = []string{
	"TABLE_NAME", "QUEUE_URL", "DLQ_URL", "AWS_ENDPOINT_URL_DYNAMODB", "AWS_ENDPOINT_URL_SQS",
	"AWS_REGION", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "HOOKWALL_TENANTS_FILE",
}

// discovery is runner.json (see the package documentation).
type discovery struct {
	PID         int               `json:"pid"`
	URL         string            `json:"url"`
	TenantsFile string            `json:"tenantsFile"`
	Tenants     []string          `json:"tenants"`
	Env         map[string]string `json:"env"`
}

// writeDiscovery writes d to dir/runner.json atomically (a temporary file
// renamed over it), readable by its owner only: it may carry credentials.
func writeDiscovery(dir string, d discovery) (string, error) {
	b, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		return "", fmt.Errorf("localrun: %s: %w", DiscoveryFile, err)
	}
	f, err := os.CreateTemp(dir, "."+DiscoveryFile+".*")
	if err != nil {
		return "", fmt.Errorf("localrun: %s: %w", DiscoveryFile, err)
	}
	tmp := f.Name()
	_, werr := f.Write(append(b, '\n'))
	cerr := f.Close()
	if werr != nil || cerr != nil {
		_ = os.Remove(tmp)
		return "", fmt.Errorf("localrun: write %s: %w", DiscoveryFile, firstErr(werr, cerr))
	}
	path := filepath.Join(dir, DiscoveryFile)
	if err := os.Rename(tmp, path); err != nil {
		_ = os.Remove(tmp)
		return "", fmt.Errorf("localrun: %s: %w", DiscoveryFile, err)
	}
	return path, nil
}

func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// readDiscovery reads dir/runner.json; ok is false when there is none, or
// when the runner that wrote it is gone (its PID is not alive).
func readDiscovery(dir string) (d discovery, ok bool) {
	b, err := os.ReadFile(filepath.Join(dir, DiscoveryFile))
	if err != nil || json.Unmarshal(b, &d) != nil || d.URL == "" {
		return discovery{}, false
	}
	if d.PID > 0 {
		if _, err := os.Stat(fmt.Sprintf("/proc/%d", d.PID)); err != nil {
			return discovery{}, false
		}
	}
	return d, true
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
