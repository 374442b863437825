package main

import (
	"testing"

	"github.com/hookwall/hookwall/cmd/internal/settingsgen"
)

// The committed template.yaml and README.md list exactly the handler
// settings the team packages declare: a declaration added, changed or
// removed without `make generate` fails here.
func TestGeneratedFilesAreCurrent(t *testing.T) {
	settings, err := Declared()
	if err != nil {
		t.Fatal(err)
	}
	if len(settings) == 0 {
		t.Fatal("no handler setting declared: the example teams declare CRM_LEADS_URL and APPROVALS_TABLE")
	}
	drifted, err := settingsgen.Drift("../..", settings)
	if err != nil {
		t.Fatal(err)
	}
	if len(drifted) > 0 {
		t.Errorf("%v drifted from the handler settings the teams declare: run make generate (go run ./cmd/hookwall-gen)", drifted)
	}
}
