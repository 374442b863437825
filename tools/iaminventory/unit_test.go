package iaminventory

import (
	"slices"
	"strings"
	"testing"

	"github.com/hookwall/hookwall/tools/iaminventory/reach"
	"github.com/hookwall/hookwall/tools/iaminventory/samtmpl"
)

func TestActions(t *testing.T) {
	for _, c := range []struct {
		op    string
		items []string
		want  []string
	}{
		{"sqs:SendMessageBatch", nil, []string{"sqs:SendMessage"}},
		{"sqs:DeleteMessageBatch", nil, []string{"sqs:DeleteMessage"}},
		{"sqs:ChangeMessageVisibilityBatch", nil, []string{"sqs:ChangeMessageVisibility"}},
		{"events:PutEvents", nil, []string{"events:PutEvents"}},
		{"dynamodb:TransactWriteItems", []string{"ConditionCheck", "Put"}, []string{"dynamodb:ConditionCheckItem", "dynamodb:PutItem"}},
		{"dynamodb:TransactWriteItems", nil, []string{"dynamodb:ConditionCheckItem", "dynamodb:DeleteItem", "dynamodb:PutItem", "dynamodb:UpdateItem"}},
		{"dynamodb:BatchWriteItem", nil, []string{"dynamodb:DeleteItem", "dynamodb:PutItem"}},
		{"dynamodb:BatchWriteItem", []string{"PutRequest"}, []string{"dynamodb:PutItem"}},
	} {
		if got := Actions(c.op, c.items); !slices.Equal(got, c.want) {
			t.Errorf("Actions(%s, %v) = %v, want %v", c.op, c.items, got, c.want)
		}
	}
	if got := ServicePrefix("eventbridge"); got != "events" {
		t.Errorf("ServicePrefix(eventbridge) = %s", got)
	}
}

func TestBindMostSpecific(t *testing.T) {
	const store = "github.com/hookwall/hookwall/shared/state/store"
	const team = "github.com/hookwall/hookwall/functions/processor/handlers/approvals"
	rules := &Rules{Rules: []Rule{
		{Package: store, Operation: "dynamodb:*", Resources: []string{"EventsTable"}, Why: "w"},
		{Package: store, Operation: "dynamodb:Query", Index: "sweep", Resources: []string{"EventsTable/index/sweep"}, Why: "w"},
		{Package: store, Operation: "dynamodb:UpdateItem", Enclosing: "store.ApplyTransition", Callers: []string{team},
			Resources: []string{"ApprovalsTable"}, When: "ApprovalsTable", Why: "w"},
		{Package: "github.com/aws/aws-sdk-go-v2/credentials/...", Operation: "*", Exclude: true, Why: "w"},
	}}
	used := make([]bool, len(rules.Rules))
	bind := func(s reach.Site, op, index string) string {
		r, err := rules.bind(s, op, index, used)
		if err != nil {
			return err.Error()
		}
		if r.Exclude {
			return "excluded"
		}
		return strings.Join(r.Resources, ",")
	}
	site := func(enclosing string, callers ...string) reach.Site {
		return reach.Site{Function: "processor", Package: store, Enclosing: enclosing, File: "f.go", Line: 1, Callers: callers}
	}
	for _, c := range []struct {
		s           reach.Site
		op, index   string
		want        string
		description string
	}{
		{site("(*store.Table).Get"), "dynamodb:GetItem", "", "EventsTable", "the package's rule"},
		{site("store.queryIndex"), "dynamodb:Query", "sweep", "EventsTable/index/sweep", "an index needs its rule"},
		{site("store.queryIndex"), "dynamodb:Query", "held", "processor dynamodb:Query at f.go:1 store.queryIndex (index held): no binding in iam/resources.json", "an index without a rule"},
		{site("store.ApplyTransition", team), "dynamodb:UpdateItem", "", "ApprovalsTable", "the more specific rule wins"},
		{site("store.ApplyTransition", team, "github.com/x/crm"), "dynamodb:UpdateItem", "",
			"processor dynamodb:UpdateItem at f.go:1 store.ApplyTransition: called from github.com/x/crm, which binding " +
				"{github.com/hookwall/hookwall/shared/state/store dynamodb:UpdateItem enclosing=store.ApplyTransition callers=" + team + "} does not list: bind that caller's call",
			"a new caller needs its own binding"},
		{reach.Site{Package: "github.com/aws/aws-sdk-go-v2/credentials/stscreds"}, "sts:AssumeRole", "", "excluded", "a package pattern"},
	} {
		if got := bind(c.s, c.op, c.index); got != c.want {
			t.Errorf("%s: got %q, want %q", c.description, got, c.want)
		}
	}

	tie := &Rules{Rules: []Rule{
		{Package: store, Operation: "dynamodb:GetItem", Resources: []string{"A"}, Why: "w"},
		{Package: store, Operation: "dynamodb:GetItem", Resources: []string{"B"}, Why: "w"},
	}}
	if _, err := tie.bind(site("f"), "dynamodb:GetItem", "", make([]bool, 2)); err == nil || !strings.Contains(err.Error(), "equally specific") {
		t.Errorf("a tie: %v", err)
	}
}

func TestParseRulesStrict(t *testing.T) {
	for _, bad := range []string{
		`{"rules": [{"package": "p", "operation": "sqs:*", "resources": ["Q"], "why": "w", "enclosng": "x"}]}`,
		`{"rules": [{"package": "p", "operation": "sqs:*", "resources": ["Q"]}]}`,
		`{"rules": [{"package": "p", "operation": "sqs:*", "why": "w"}]}`,
		`{"rules": [{"operation": "sqs:*", "resources": ["Q"], "why": "w"}]}`,
	} {
		if _, err := ParseRules([]byte(bad)); err == nil {
			t.Errorf("ParseRules(%s) accepted it", bad)
		}
	}
}

// TestDiffNamesRows: a reachable row missing from the committed file, and a
// committed row no longer reachable, are each named.
func TestDiffNamesRows(t *testing.T) {
	row := func(fn, op, res string, sites ...string) Row {
		return Row{Function: fn, Operation: op, Actions: Actions(op, nil), Resource: res, Context: map[string]string{}, Sites: sites}
	}
	derived := &Inventory{GeneratedBy: GeneratedBy, Functions: []string{"receiver"}, Rows: merge([]Row{
		row("receiver", "dynamodb:GetItem", "EventsTable", "a.go:1 f"),
		row("receiver", "sqs:SendMessageBatch", "EventsQueue", "q.go:2 g"),
	})}
	old := &Inventory{GeneratedBy: GeneratedBy, Functions: []string{"receiver"}, Rows: merge([]Row{
		row("receiver", "dynamodb:GetItem", "EventsTable", "a.go:1 f", "a.go:9 h"),
		row("receiver", "dynamodb:Scan", "EventsTable", "s.go:3 k"),
	})}
	drift, moved := Diff(old, derived)
	got := strings.Join(drift, "\n")
	for _, want := range []string{
		"missing row: receiver sqs:SendMessageBatch on EventsQueue is reachable but iam/inventory.json has no row for it (actions sqs:SendMessage; sites q.go:2 g)",
		"stale row: receiver dynamodb:Scan on EventsTable is in iam/inventory.json but no longer reachable (sites s.go:3 k)",
		"row receiver dynamodb:GetItem on EventsTable: sites differ: new [], gone [a.go:9 h]",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("diff lacks %q:\n%s", want, got)
		}
	}
	if len(moved) > 0 {
		t.Errorf("moved: %v", moved)
	}
	if d, m := Diff(derived, derived); len(d)+len(m) > 0 {
		t.Errorf("no drift, yet: %v %v", d, m)
	}
	// A call that moved to another line is no drift, only worth a regeneration.
	shifted := &Inventory{GeneratedBy: GeneratedBy, Functions: []string{"receiver"}, Rows: merge([]Row{
		row("receiver", "dynamodb:GetItem", "EventsTable", "a.go:7 f"),
		row("receiver", "sqs:SendMessageBatch", "EventsQueue", "q.go:2 g"),
	})}
	if d, m := Diff(derived, shifted); len(d) > 0 || len(m) != 1 || !strings.Contains(m[0], "sites moved: now [a.go:7 f], was [a.go:1 f]") {
		t.Errorf("a moved site: drift %v, moved %v", d, m)
	}
}

// TestRoleRows: the poller's, the runtime's and KMS's rows of a small
// template.
func TestRoleRows(t *testing.T) {
	tmpl, err := samtmpl.Parse([]byte(`
Parameters:
  KeyArn: {Type: String, Default: ""}
Conditions:
  HasKey: !Not [!Equals [!Ref KeyArn, ""]]
Globals:
  Function:
    Tracing: Active
Resources:
  Table:
    Type: AWS::DynamoDB::Table
    Properties:
      SSESpecification: {SSEEnabled: true, KMSMasterKeyId: !If [HasKey, !Ref KeyArn, !Ref AWS::NoValue]}
  Queue:
    Type: AWS::SQS::Queue
    Properties:
      KmsMasterKeyId: !If [HasKey, !Ref KeyArn, !Ref AWS::NoValue]
  WorkerLogGroup:
    Type: AWS::Logs::LogGroup
  WorkerFunction:
    Type: AWS::Serverless::Function
    Properties:
      LoggingConfig: {LogGroup: !Ref WorkerLogGroup}
      Events:
        Poll: {Type: SQS, Properties: {Queue: !GetAtt Queue.Arn}}
        Tick: {Type: Schedule, Properties: {Schedule: rate(5 minutes)}}
`))
	if err != nil {
		t.Fatal(err)
	}
	code := []Row{{Function: "worker", Operation: "dynamodb:Query", Resource: "Table/index/byDate", Context: map[string]string{}}}
	rows, problems := roleRows([]string{"worker"}, code, tmpl)
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	var got []string
	for _, r := range merge(rows) {
		got = append(got, r.String())
	}
	want := []string{
		`worker kms:Decrypt on Key when KeyArn context {"kms:ViaService":"dynamodb"}`,
		`worker kms:Decrypt on Key when KeyArn context {"kms:ViaService":"sqs"}`,
		`worker kms:DescribeKey on Key when KeyArn context {"kms:ViaService":"dynamodb"}`,
		`worker kms:Encrypt on Key when KeyArn context {"kms:ViaService":"dynamodb"}`,
		`worker kms:GenerateDataKey on Key when KeyArn context {"kms:ViaService":"dynamodb"}`,
		`worker logs:CreateLogStream on WorkerLogGroup`,
		`worker logs:PutLogEvents on WorkerLogGroup`,
		`worker sqs:DeleteMessage on Queue`,
		`worker sqs:GetQueueAttributes on Queue`,
		`worker sqs:ReceiveMessage on Queue`,
		`worker xray:PutTelemetryRecords on *`,
		`worker xray:PutTraceSegments on *`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("rows:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if _, problems := roleRows([]string{"other"}, nil, tmpl); len(problems) != 1 {
		t.Errorf("a function missing from the template: %v", problems)
	}
}
