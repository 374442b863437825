package localrun

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// Demo secrets: made up, the same as infra/local/tenants.json, so the
// samples of `make events` verify against the runner too. Never use them
// anywhere real.
const (
	DemoLINEChannelSecret = "5e1f0c1d6a2b4e9f8a7b6c5d4e3f2a10"
	DemoWXToken           = "HookwallLocalToken"
	DemoWeComAESKey       = "HookwallLocalDemoKeyNotASecret0123456789abc"
	DemoWeComCorpID       = "ww0000000000000001"
	DemoWeChatAppID       = "wx0000000000000001"
	DemoWeChatAESKey      = "HookwallLocalWeChatKeyNotASecret0123456789a"
	DemoStandardSecret    = "whsec_gaTG2ftU1oeRGcKSkQLETLLJ3aPA+Hbw"
	DemoForwardSecret     = DemoStandardSecret
)

// DemoTenants returns the demo tenants document: tenant "demo" with LINE,
// WeCom, WeChat (safe mode) and Standard Webhooks, forwarding every event to
// forwardURL signed with DemoForwardSecret.
func DemoTenants(forwardURL string) ([]byte, error) {
	doc := map[string]any{"tenants": map[string]any{DefaultTenant: map[string]any{
		"line":     map[string]any{"channelSecret": DemoLINEChannelSecret},
		"wecom":    map[string]any{"token": DemoWXToken, "encodingAESKey": DemoWeComAESKey, "corpId": DemoWeComCorpID},
		"wechat":   map[string]any{"token": DemoWXToken, "appId": DemoWeChatAppID, "encodingAESKey": DemoWeChatAESKey},
		"standard": map[string]any{"secrets": []string{DemoStandardSecret}},
		"forward":  map[string]any{"url": forwardURL, "secret": DemoForwardSecret},
	}}}
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
