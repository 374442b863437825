package skew

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/hookwall/hookwall/dev/cmd/hookwall-run/localrun"
	"github.com/hookwall/hookwall/shared/config/tenants"
)

// serve serves the business target on a port of ports and returns its
// stop and the forward URL.
func serve(ports *Ports, target http.Handler) (func(), string, error) {
	port, err := ports.Take()
	if err != nil {
		return nil, "", err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
	if err != nil {
		ports.Give(port)
		return nil, "", fmt.Errorf("skew: the business target: %w", err)
	}
	srv := &http.Server{Handler: target, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	return func() { _ = srv.Close(); ports.Give(port) }, "http://" + ln.Addr().String() + "/business", nil
}

// demoTenant writes the local demo tenants document, forwarding to
// forwardURL, into dir and returns its demo tenant and the file.
func demoTenant(dir, forwardURL string) (*tenants.Tenant, string, error) {
	doc, err := localrun.DemoTenants(forwardURL)
	if err != nil {
		return nil, "", err
	}
	file := filepath.Join(dir, "tenants.json")
	if err := os.WriteFile(file, doc, 0o600); err != nil {
		return nil, "", fmt.Errorf("skew: write tenants: %w", err)
	}
	ts, err := tenants.Parse(doc)
	if err != nil {
		return nil, "", fmt.Errorf("skew: tenants: %w", err)
	}
	t, ok := ts.Tenant(localrun.DefaultTenant)
	if !ok {
		return nil, "", fmt.Errorf("skew: no tenant %q in the demo tenants", localrun.DefaultTenant)
	}
	return t, file, nil
}
