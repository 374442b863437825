package localrun

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/hookwall/hookwall/shared/config/tenants"
	"github.com/hookwall/hookwall/shared/protocol/providers"
)

// DemoForwardSecret signs what the demo tenant forwards (Standard
// Webhooks): made up, the same as infra/local/tenants.json's. Never use it
// anywhere real.
const DemoForwardSecret = "whsec_gaTG2ftU1oeRGcKSkQLETLLJ3aPA+Hbw"

// DemoTenants returns the demo tenants document: tenant "demo" with every
// provider of the registry, each with its made-up demo settings (the same
// as infra/local/tenants.json's, so the samples of `make events` verify
// against the runner too), forwarding every event to forwardURL signed
// with DemoForwardSecret.
func DemoTenants(forwardURL string) ([]byte, error) {
	demo := map[string]any{"forward": map[string]any{"url": forwardURL, "secret": DemoForwardSecret}}
	for _, p := range providers.All() {
		demo[p.Name] = p.Demo.Settings
	}
	doc := map[string]any{"tenants": map[string]any{DefaultTenant: demo}}
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("localrun: demo tenants: %w", err)
	}
	return append(b, '\n'), nil
}

// writeDemoTenants writes the demo document to dir/tenants.json (replacing
// the one of an earlier run: the forward target's port may differ) and
// returns its path.
func writeDemoTenants(dir, forwardURL string) (string, error) {
	b, err := DemoTenants(forwardURL)
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, "tenants.json")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		return "", fmt.Errorf("localrun: write demo tenants: %w", err)
	}
	return path, nil
}

// TenantsOf reads the tenants document at file for runner.json and the
// banner: its tenants' names and the providers of [DefaultTenant] (both
// nil when the document cannot be read, configured nil too when it has no
// such tenant).
func TenantsOf(file string) (names, configured []string) {
	doc, err := tenants.LoadFile(file)
	if err != nil {
		return nil, nil
	}
	if t, ok := doc.Tenant(DefaultTenant); ok {
		configured = t.Providers()
	}
	return doc.Names(), configured
}
