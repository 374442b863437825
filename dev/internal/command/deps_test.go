package command

import (
	"os/exec"
	"strings"
	"testing"
)

// The local tools' main helper imports the standard library only (a rule
// shared/base/webhook/deps_test.go kept while it was in the product module).
func TestImportsTheStandardLibraryOnly(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		if dep != "github.com/hookwall/hookwall/dev/internal/command" {
			t.Errorf("command depends on %s", dep)
		}
	}
}
