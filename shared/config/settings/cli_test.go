package settings

import (
	"os"
	"strings"
	"testing"
	"time"
)

var testCLIDefaults = CLIDefaults{DedupWindow: 36 * time.Hour}

func TestCLIReadsOnlyWhatItNeeds(t *testing.T) {
	s, err := LoadCLI(env(), CLINeeds{}, testCLIDefaults)
	if err != nil {
		t.Fatalf("nothing needed, nothing set: %v", err)
	}
	if s != (CLI{DedupWindow: 36 * time.Hour}) {
		t.Errorf("got %+v", s)
	}
	_, err = LoadCLI(env(), CLINeeds{Table: true, Queue: true, DLQ: true, Tenants: true}, testCLIDefaults)
	wantErrors(t, err, "TABLE_NAME is required", "QUEUE_URL is required", "DLQ_URL is required",
		"HOOKWALL_TENANTS_FILE", "TENANTS_SECRET_ARN")
}

func TestCLIReadsTheFunctionsNames(t *testing.T) {
	s, err := LoadCLI(env("TABLE_NAME", "hookwall-events", "QUEUE_URL", "http://127.0.0.1:9324/000000000000/q",
		"DLQ_URL", "http://127.0.0.1:9324/000000000000/dlq", "HOOKWALL_TENANTS_FILE", "t.json", "HOOKWALL_DEDUP_WINDOW", "48h"),
		CLINeeds{Table: true, Queue: true, DLQ: true, Tenants: true}, testCLIDefaults)
	if err != nil {
		t.Fatal(err)
	}
	want := CLI{TableName: "hookwall-events", QueueURL: "http://127.0.0.1:9324/000000000000/q",
		DLQURL: "http://127.0.0.1:9324/000000000000/dlq", TenantsFile: "t.json", DedupWindow: 48 * time.Hour}
	if s != want {
		t.Errorf("got %+v, want %+v", s, want)
	}
}

func TestCLIValidatesWhatIsSetEvenUnneeded(t *testing.T) {
	_, err := LoadCLI(env("TABLE_NAME", "a b", "QUEUE_URL", "127.0.0.1:9324/q", "HOOKWALL_TENANTS_FILE", "t.json",
		"TENANTS_SECRET_ARN", "arn:x", "HOOKWALL_DEDUP_WINDOW", "7d"), CLINeeds{}, testCLIDefaults)
	wantErrors(t, err, "TABLE_NAME", "QUEUE_URL", "only one of HOOKWALL_TENANTS_FILE", "HOOKWALL_DEDUP_WINDOW")
	// The command prefixes each line with its own name: no prefix here
	// (a "hookwall configuration:" one printed "hookwall: hookwall ...").
	for line := range strings.Lines(err.Error()) {
		if strings.Contains(line, "configuration:") || strings.HasPrefix(line, "hookwall") {
			t.Errorf("error line %q carries a prefix", line)
		}
	}
}

// TestConfigDocDocumentsCLIVariables holds docs/CONFIGURATION.md's
// "Environment (hookwall CLI)" table to what LoadCLI reads.
func TestConfigDocDocumentsCLIVariables(t *testing.T) {
	doc, err := os.ReadFile(docPath)
	if err != nil {
		t.Fatal(err)
	}
	const heading = "Environment (hookwall CLI)"
	documented := map[string]bool{}
	for _, row := range docTables(t, string(doc))[heading] {
		for _, name := range row[0] {
			documented[name] = true
		}
	}
	if len(documented) == 0 {
		t.Fatalf("%s has no table under %q", docName, "### "+heading)
	}
	rd := readsOf(func(r *reader) {
		loadCLI(r, CLINeeds{Table: true, Queue: true, DLQ: true, Tenants: true}, CLIDefaults{})
	})
	for _, name := range sorted(rd.current) {
		if !documented[name] {
			t.Errorf("the CLI reads %s, which %s's %q table does not document", name, docName, heading)
		}
	}
	for _, name := range sorted(documented) {
		if !rd.current[name] && !sdkVariable(name) {
			t.Errorf("%s's %q table documents %s, which the CLI does not read", docName, heading, name)
		}
	}
}
