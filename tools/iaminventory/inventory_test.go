package iaminventory

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// repoRoot is the Hookwall repository this module sits in.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "functions", "receiver", "main.go")); err != nil {
		t.Fatalf("not the Hookwall repository: %v", err)
	}
	return root
}

// committed reads the committed iam/inventory.json.
func committed(t *testing.T, root string) (*Inventory, []byte) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, InventoryPath))
	if err != nil {
		t.Fatal(err)
	}
	inv, err := ParseInventory(data)
	if err != nil {
		t.Fatal(err)
	}
	return inv, data
}

// TestInventoryMatchesCode derives the inventory from the code and fails,
// naming each row, when a reachable call has no row in iam/inventory.json
// or a row is no longer reachable (regenerate with `make inventory`).
func TestInventoryMatchesCode(t *testing.T) {
	root := repoRoot(t)
	res, a, err := Generate(Options{Root: root})
	if err != nil {
		t.Fatal(err)
	}
	tm := a.Program.Timings
	t.Logf("load %v, ssa %v, cha %v, vta %v, per function %v", tm.Load, tm.SSA, tm.CHA, tm.VTA, tm.PerFunction)
	for _, p := range res.Problems {
		t.Errorf("binding: %s", p)
	}
	inv, data := committed(t, root)
	drift, moved := Diff(inv, res.Inventory)
	for _, d := range drift {
		t.Errorf("%s (regenerate: make inventory)", d)
	}
	for _, m := range moved { // an edit above a call: not a failure
		t.Logf("%s (regenerate: make inventory)", m)
	}
	if want, err := res.Inventory.Marshal(); err != nil {
		t.Fatal(err)
	} else if len(drift)+len(moved) == 0 && !bytes.Equal(data, want) {
		t.Errorf("%s is not as the generator writes it (regenerate: make inventory)", InventoryPath)
	}

	// What the analysis must find, and must not (iam/README.md's examples,
	// and the receiver, which never sweeps).
	has := func(function, op, resource string) bool {
		return slices.ContainsFunc(res.Inventory.Rows, func(r Row) bool {
			return r.Function == function && r.Operation == op && r.Resource == resource
		})
	}
	for _, want := range [][3]string{
		{"compensator", "dynamodb:BatchGetItem", "EventsTable"},
		{"compensator", "dynamodb:Scan", "EventsTable"},
		{"compensator", "dynamodb:Query", "EventsTable/index/sweep"},
		{"processor", "dynamodb:UpdateItem", "ApprovalsTable"},
		{"receiver", "sqs:SendMessageBatch", "EventsQueue"},
	} {
		if !has(want[0], want[1], want[2]) {
			t.Errorf("no row %v", want)
		}
	}
	for _, unwanted := range [][3]string{
		{"receiver", "dynamodb:Scan", "EventsTable"},
		{"receiver", "dynamodb:BatchGetItem", "EventsTable"},
		{"processor", "sqs:SendMessageBatch", "EventsQueue"}, // only through VTA's context-insensitivity (batch.Send)
	} {
		if has(unwanted[0], unwanted[1], unwanted[2]) {
			t.Errorf("row %v: the function does not make that call", unwanted)
		}
	}
}

// TestFixtureCallWithoutRow adds, through a load overlay (the tree is not
// touched), an SDK call to the receiver's queue code and removes the
// dead-letter send: the analysis must find the new call and fail without a
// binding, and with one, the check must name the new row as missing and
// the dead-letter rows as no longer reachable.
func TestFixtureCallWithoutRow(t *testing.T) {
	root := repoRoot(t)
	sendPath := filepath.Join(root, "shared", "aws", "queue", "send.go")
	dlqPath := filepath.Join(root, "shared", "aws", "queue", "dlq.go")
	send, dlq := readFile(t, sendPath), readFile(t, dlqPath)

	header := regexp.MustCompile(`(?m)^func \(q \*Queue\) Send\(ctx context\.Context, [^)]*\) error \{\n`)
	loc := header.FindStringIndex(send)
	if loc == nil {
		t.Fatal("fixture: shared/aws/queue/send.go has no func (q *Queue) Send(ctx context.Context, ...) error: update the fixture")
	}
	added := "\tif len(envs) == 0 {\n\t\t_, _ = q.client.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: &q.url}) // fixture\n\t}\n"
	line := strings.Count(send[:loc[1]], "\n") + 2
	send = send[:loc[1]] + added + send[loc[1]:]
	site := fmt.Sprintf("shared/aws/queue/send.go:%d (*queue.Queue).Send", line)

	call := regexp.MustCompile(`_, err := q\.client\.SendMessage\(ctx, &sqs\.SendMessageInput\{(?s:.*?)\n\t\}\)`)
	if !call.MatchString(dlq) {
		t.Fatal("fixture: shared/aws/queue/dlq.go has no q.client.SendMessage call: update the fixture")
	}
	dlq = call.ReplaceAllLiteralString(dlq, "var err error\n\t_, _ = attrs, sqs.SendMessageInput{}")
	// The other SendMessage, the put-off of a newer format's message, goes too.
	formatPath := filepath.Join(root, "shared", "aws", "queue", "format.go")
	formatSrc := readFile(t, formatPath)
	if !call.MatchString(formatSrc) {
		t.Fatal("fixture: shared/aws/queue/format.go has no q.client.SendMessage call: update the fixture")
	}
	formatSrc = call.ReplaceAllLiteralString(formatSrc, "var err error\n\t_, _, _ = attrs, group, sqs.SendMessageInput{}")

	rules, tmpl, err := ReadInputs(root)
	if err != nil {
		t.Fatal(err)
	}
	a, err := Analyze(Options{Root: root, Overlay: map[string][]byte{sendPath: []byte(send), dlqPath: []byte(dlq), formatPath: []byte(formatSrc)}})
	if err != nil {
		t.Fatal(err)
	}

	// Without a binding: the call is named, by function, operation and site.
	res := Build(a, rules, tmpl)
	for _, want := range []string{
		"receiver sqs:DeleteMessage at " + site + ": no binding",
		"compensator sqs:DeleteMessage at " + site + ": no binding",
		`binding {github.com/hookwall/hookwall/shared/aws/queue sqs:SendMessage} in iam/resources.json matches no reachable call site`,
	} {
		if !slices.ContainsFunc(res.Problems, func(p string) bool { return strings.Contains(p, want) }) {
			t.Errorf("problems lack %q; got:\n%s", want, strings.Join(res.Problems, "\n"))
		}
	}

	// With one: the inventory check names the missing and the stale rows.
	bound := *rules
	bound.Rules = slices.DeleteFunc(slices.Clone(rules.Rules), func(r Rule) bool {
		return r.Package == "github.com/hookwall/hookwall/shared/aws/queue" && r.Operation == "sqs:SendMessage"
	})
	bound.Rules = append(bound.Rules, Rule{Package: "github.com/hookwall/hookwall/shared/aws/queue", Operation: "sqs:DeleteMessage",
		Resources: []string{"EventsQueue"}, Why: "fixture"})
	res = Build(a, &bound, tmpl)
	if len(res.Problems) > 0 {
		t.Fatalf("problems with the fixture's binding: %s", strings.Join(res.Problems, "\n"))
	}
	inv, _ := committed(t, root)
	diff, _ := Diff(inv, res.Inventory)
	for _, want := range []string{
		"missing row: receiver sqs:DeleteMessage on EventsQueue is reachable but iam/inventory.json has no row for it (actions sqs:DeleteMessage; sites " + site + ")",
		"missing row: compensator sqs:DeleteMessage on EventsQueue",
		"stale row: processor sqs:SendMessage on EventsDeadLetterQueue is in iam/inventory.json but no longer reachable",
		`stale row: processor kms:GenerateDataKey on KmsKey when KmsKeyArn context {"kms:ViaService":"sqs"}`,
	} {
		if !slices.ContainsFunc(diff, func(d string) bool { return strings.HasPrefix(d, want) }) {
			t.Errorf("the check does not report %q; it reports:\n%s", want, strings.Join(diff, "\n"))
		}
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// TestSecurityDocFollowsTheInventory: docs/SECURITY.md's IAM section is the
// committed inventory, rendered (make inventory writes both).
func TestSecurityDocFollowsTheInventory(t *testing.T) {
	root := repoRoot(t)
	inv, _ := committed(t, root)
	doc := readFile(t, filepath.Join(root, SecurityDocPath))
	want, err := WithSecurityDoc(doc, inv)
	if err != nil {
		t.Fatal(err)
	}
	if doc != want {
		t.Errorf("%s's IAM section differs from %s: run make inventory", SecurityDocPath, InventoryPath)
	}
	// A row the document lacks is seen.
	inv.Rows = append(inv.Rows, Row{Function: "receiver", Operation: "dynamodb:Scan", Actions: []string{"dynamodb:Scan"}, Resource: "EventsTable", Sites: []string{"x.go:1 f"}})
	if again, _ := WithSecurityDoc(doc, inv); again == doc || !strings.Contains(again, "| `dynamodb:Scan` | `EventsTable` | always | `x.go:1 f` |") {
		t.Error("a new row did not change the IAM section")
	}
}
