package localrun

import (
	"bytes"
	"strings"
	"testing"

	"github.com/hookwall/hookwall/shared/protocol/provider/line"
	"github.com/hookwall/hookwall/shared/protocol/providers"
)

// The banner offers every provider of the registry with the demo tenants,
// and with the user's own document the providers its tenant configures.
func TestBannerOffersTheRegistry(t *testing.T) {
	show := func(b banner) string {
		var out bytes.Buffer
		b.base, b.tenants = "http://127.0.0.1:3999", "/nowhere/tenants.json"
		printBanner(System{Stderr: &out, Executable: "/x/hookwall-run", WorkDir: t.TempDir()}, Config{}, b)
		return out.String()
	}
	demo := show(banner{demo: true})
	if !strings.Contains(demo, "/webhooks/{"+strings.Join(providers.Names(), ",")+"}/demo") {
		t.Errorf("the receiver line lacks the registry's providers:\n%s", demo)
	}
	for _, p := range providers.All() {
		if !strings.Contains(demo, p.Label) || !strings.Contains(demo, " send "+p.Name+" -id ") {
			t.Errorf("the demo banner offers no %s command:\n%s", p.Name, demo)
		}
	}
	own := show(banner{configured: []string{line.Name}})
	if !strings.Contains(own, " send line -id ") || strings.Contains(own, " send wecom ") {
		t.Errorf("with a tenant configuring line only, the banner should offer line alone:\n%s", own)
	}
}
