package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const inventory = `{"generated_by": "make inventory", "functions": ["receiver", "processor"], "rows": [
 {"function": "receiver", "operation": "dynamodb:UpdateItem", "actions": ["dynamodb:UpdateItem"], "resource": "EventsTable", "when": "", "context": {}, "sites": []},
 {"function": "receiver", "operation": "sqs:SendMessage", "actions": ["sqs:SendMessage"], "resource": "EventsQueue", "when": "", "context": {}, "sites": []},
 {"function": "processor", "operation": "dynamodb:Query", "actions": ["dynamodb:Query"], "resource": "EventsTable/index/sweep", "when": "", "context": {}, "sites": []},
 {"function": "processor", "operation": "sqs:ReceiveMessage", "actions": ["sqs:ReceiveMessage"], "resource": "EventsQueue", "when": "", "context": {}, "sites": []}
]}`

func write(t *testing.T, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestRecordsWithinTheInventory(t *testing.T) {
	dir := t.TempDir()
	inv := filepath.Join(dir, "inventory.json")
	write(t, inv, inventory)
	rec := filepath.Join(dir, "rec")
	if err := os.Mkdir(rec, 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(rec, "receiver-1.jsonl"), `{"function":"receiver","operation":"dynamodb:UpdateItem","resource":"EventsTable"}
{"function":"receiver","operation":"sqs:SendMessage","resource":"EventsQueue"}
`)
	write(t, filepath.Join(rec, "receiver-2.jsonl"), `{"function":"receiver","operation":"dynamodb:UpdateItem","resource":"EventsTable"}`+"\n")
	var out strings.Builder
	ok, err := run(&out, inv, rec, false)
	if err != nil || !ok {
		t.Fatalf("run = %v, %v:\n%s", ok, err, out.String())
	}
	for _, want := range []string{"2 distinct (function, operation, resource) recorded across 2 files; 0 not in", "2 of the inventory's 4 distinct (function, operation, resource) (4 rows) never exercised"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}

	// A call the inventory lacks, and one on a resource the function's
	// configuration does not name: each reported with its file.
	bad := filepath.Join(rec, "processor-3.jsonl")
	write(t, bad, `{"function":"processor","operation":"dynamodb:Query","resource":"EventsTable/index/held"}
{"function":"processor","operation":"dynamodb:Query","resource":"EventsTable/index/sweep"}
{"function":"processor","operation":"sqs:SendMessage","resource":"unknown:http://127.0.0.1:9324/000000000000/other"}
`)
	out.Reset()
	ok, err = run(&out, inv, rec, false)
	if err != nil || ok {
		t.Fatalf("run = %v, %v, want a failed check:\n%s", ok, err, out.String())
	}
	for _, want := range []string{
		"MISSING  processor dynamodb:Query EventsTable/index/held  (recorded in " + bad + ")",
		"MISSING  processor sqs:SendMessage unknown:http://127.0.0.1:9324/000000000000/other  (recorded in " + bad + ")",
		"5 distinct (function, operation, resource) recorded across 3 files; 2 not in",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}

	// A malformed line is an error, naming it; no records at all too.
	write(t, bad, "not json\n")
	if _, err := run(&out, inv, rec, false); err == nil || !strings.Contains(err.Error(), bad+":1") {
		t.Errorf("malformed line: %v", err)
	}
	if _, err := run(&out, inv, t.TempDir(), false); err == nil {
		t.Error("an empty record directory passed")
	}
}
