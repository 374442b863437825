package webhook_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestImportRules enforces the layering of style.md §2.1: imports flow
// functions/* → shared/* → shared/webhook; the domain, the providers and the
// processor core import no AWS SDK; obs imports nothing of ours.
func TestImportRules(t *testing.T) {
	const mod = "github.com/hookwall/hookwall/"
	rules := []struct {
		pkg       string
		forbidden []string // import path prefixes
		allowOurs []string // our packages it may import (nil: any)
	}{
		{"shared/webhook", []string{"github.com/"}, []string{}},
		{"shared/obs", []string{"github.com/aws/"}, []string{}},
		{"shared/provider/line", []string{"github.com/aws/"}, []string{"shared/webhook"}},
		{"shared/provider/standard", []string{"github.com/aws/"}, []string{"shared/webhook"}},
		{"shared/provider/wxcrypto", []string{"github.com/aws/"}, []string{"shared/webhook"}},
		{"shared/provider/xmljson", []string{"github.com/aws/"}, []string{"shared/webhook"}},
		{"shared/provider/wxmsg", []string{"github.com/aws/"}, []string{"shared/webhook", "shared/provider/wxcrypto", "shared/provider/xmljson"}},
		{"shared/provider/wecom", []string{"github.com/aws/"}, []string{"shared/webhook", "shared/provider/wxcrypto", "shared/provider/wxmsg", "shared/provider/xmljson"}},
		{"shared/provider/wechat", []string{"github.com/aws/"}, []string{"shared/webhook", "shared/provider/wxcrypto", "shared/provider/wxmsg", "shared/provider/xmljson"}},
		{"shared/process", []string{"github.com/aws/"}, nil},
		{"shared/config", nil, []string{}},
	}
	for _, r := range rules {
		out, err := exec.Command("go", "list", "-deps", mod+r.pkg).Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", r.pkg, err)
		}
		for _, dep := range strings.Fields(string(out)) {
			if dep == mod+r.pkg {
				continue
			}
			for _, f := range r.forbidden {
				if strings.HasPrefix(dep, f) && !(strings.HasPrefix(dep, mod) && allowed(dep, r.allowOurs, mod)) {
					t.Errorf("%s depends on %s", r.pkg, dep)
				}
			}
			if strings.HasPrefix(dep, mod) && !allowed(dep, r.allowOurs, mod) {
				t.Errorf("%s imports %s, which it must not", r.pkg, dep)
			}
		}
	}
}

func allowed(dep string, ours []string, mod string) bool {
	if ours == nil {
		return true
	}
	for _, o := range ours {
		if dep == mod+o {
			return true
		}
	}
	return false
}
