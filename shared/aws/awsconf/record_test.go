package awsconf

import (
	"bufio"
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	dbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	ebtypes "github.com/aws/aws-sdk-go-v2/service/eventbridge/types"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
)

const (
	testQueue = "http://127.0.0.1:9324/000000000000/q"
	testDLQ   = "http://127.0.0.1:9324/000000000000/q-dlq"
	testARN   = "arn:aws:secretsmanager:us-east-1:000000000000:secret:tenants"
)

// fakeAWS answers every call with an empty JSON object: enough for the
// JSON protocols of DynamoDB, SQS, EventBridge and Secrets Manager.
func fakeAWS(t *testing.T) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/x-amz-json-1.0")
		_, _ = w.Write([]byte(`{}`))
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func readRecords(t *testing.T, path string) []Record {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []Record
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		r, ok := ParseRecordLine(RecordLogPrefix + sc.Text())
		if !ok {
			t.Fatalf("%s: not a record line: %q", path, sc.Text())
		}
		out = append(out, r)
	}
	return out
}

// Every call of a recording configuration's clients is one record per
// resource it names, under the logical names, once per process.
func TestRecorderRecordsEachCallOnce(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "rec") // created by Load
	t.Setenv(RecordEnv, dir)
	t.Setenv("AWS_REGION", "us-east-1")
	t.Setenv("AWS_ACCESS_KEY_ID", "test")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "test")
	rec := Recorder{Function: "rectest", Names: map[string]string{"events": EventsTable, testQueue: EventsQueue,
		testDLQ: EventsDeadLetterQueue, "outcomes": OutcomesBus, testARN: TenantsSecret, "approvals": "ApprovalsTable", "": "Ignored"}}
	cfg, err := Load(context.Background(), quiet, rec)
	if err != nil {
		t.Fatal(err)
	}
	url := fakeAWS(t)
	ctx := context.Background()
	s := aws.String
	db := dynamodb.NewFromConfig(cfg, func(o *dynamodb.Options) { o.BaseEndpoint = s(url) })
	q := sqs.NewFromConfig(cfg, func(o *sqs.Options) { o.BaseEndpoint = s(url) })
	eb := eventbridge.NewFromConfig(cfg, func(o *eventbridge.Options) { o.BaseEndpoint = s(url) })
	sm := secretsmanager.NewFromConfig(cfg, func(o *secretsmanager.Options) { o.BaseEndpoint = s(url) })
	key := map[string]dbtypes.AttributeValue{"pk": &dbtypes.AttributeValueMemberS{Value: "k"}}
	calls := []func() error{
		func() error {
			_, err := db.GetItem(ctx, &dynamodb.GetItemInput{TableName: s("events"), Key: key})
			return err
		},
		func() error {
			_, err := db.GetItem(ctx, &dynamodb.GetItemInput{TableName: s("events"), Key: key})
			return err
		},
		func() error {
			_, err := db.Query(ctx, &dynamodb.QueryInput{TableName: s("events"), IndexName: s("sweep"), KeyConditionExpression: s("a = :a")})
			return err
		},
		func() error {
			_, err := db.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: map[string]dbtypes.KeysAndAttributes{
				"events": {Keys: []map[string]dbtypes.AttributeValue{key}}, "approvals": {Keys: []map[string]dbtypes.AttributeValue{key}}}})
			return err
		},
		func() error {
			_, err := db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []dbtypes.TransactWriteItem{
				{Put: &dbtypes.Put{TableName: s("events"), Item: key}},
				{Update: &dbtypes.Update{TableName: s("elsewhere"), Key: key, UpdateExpression: s("SET a = :a")}}}})
			return err
		},
		func() error {
			_, err := db.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: s("approvals"), Key: key})
			return err
		},
		func() error { _, err := db.ListTables(ctx, &dynamodb.ListTablesInput{}); return err },
		func() error {
			_, err := q.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: s(testQueue),
				Entries: []sqstypes.SendMessageBatchRequestEntry{{Id: s("1"), MessageBody: s("x")}}})
			return err
		},
		func() error {
			_, err := q.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: s(testDLQ), MessageBody: s("x")})
			return err
		},
		func() error {
			_, err := eb.PutEvents(ctx, &eventbridge.PutEventsInput{Entries: []ebtypes.PutEventsRequestEntry{
				{EventBusName: s("outcomes")}, {}}})
			return err
		},
		func() error {
			_, err := sm.GetSecretValue(ctx, &secretsmanager.GetSecretValueInput{SecretId: s(testARN)})
			return err
		},
	}
	for i, call := range calls {
		if err := call(); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	// A second configuration of the same function in the process shares
	// the set: its GetItem on the table is not written again.
	cfg2, err := Load(ctx, quiet, rec)
	if err != nil {
		t.Fatal(err)
	}
	db2 := dynamodb.NewFromConfig(cfg2, func(o *dynamodb.Options) { o.BaseEndpoint = s(url) })
	if _, err := db2.GetItem(ctx, &dynamodb.GetItemInput{TableName: s("events"), Key: key}); err != nil {
		t.Fatal(err)
	}

	path := filepath.Join(dir, "rectest-"+strconv.Itoa(os.Getpid())+".jsonl")
	got := readRecords(t, path)
	want := []Record{
		{"rectest", "dynamodb:GetItem", "EventsTable"},
		{"rectest", "dynamodb:Query", "EventsTable/index/sweep"},
		{"rectest", "dynamodb:BatchGetItem", "ApprovalsTable"},
		{"rectest", "dynamodb:BatchGetItem", "EventsTable"},
		{"rectest", "dynamodb:TransactWriteItems", "EventsTable"},
		{"rectest", "dynamodb:TransactWriteItems", "unknown:elsewhere"},
		{"rectest", "dynamodb:UpdateItem", "ApprovalsTable"},
		{"rectest", "dynamodb:ListTables", "*"},
		{"rectest", "sqs:SendMessageBatch", "EventsQueue"},
		{"rectest", "sqs:SendMessage", "EventsDeadLetterQueue"},
		{"rectest", "events:PutEvents", "OutcomesBus"},
		{"rectest", "events:PutEvents", "unknown:default"},
		{"rectest", "secretsmanager:GetSecretValue", "TenantsSecret"},
	}
	// BatchGetItem's tables come from a map: in either order.
	sortBatch := func(rs []Record) {
		slices.SortStableFunc(rs, func(a, b Record) int {
			if a.Operation == b.Operation && a.Operation == "dynamodb:BatchGetItem" {
				return strings.Compare(a.Resource, b.Resource)
			}
			return 0
		})
	}
	sortBatch(got)
	if !slices.Equal(got, want) {
		t.Errorf("records in %s:\n got  %v\n want %v", path, got, want)
	}
}

// Unset, Load adds no recording middleware (only the format stamp); a configuration of no function (a
// test's) records nothing either.
func TestRecorderOffAddsNothing(t *testing.T) {
	t.Setenv("AWS_REGION", "us-east-1")
	t.Setenv(RecordEnv, "")
	cfg, err := Load(context.Background(), nil, Recorder{Function: "processor"})
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.APIOptions) != 1 {
		t.Errorf("%d API options with %s unset, want 1 (the stamp)", len(cfg.APIOptions), RecordEnv)
	}
	t.Setenv(RecordEnv, t.TempDir())
	if cfg, err = Load(context.Background(), nil, Recorder{}); err != nil || len(cfg.APIOptions) != 1 {
		t.Errorf("Recorder{}: %d API options (%v), want 1 (the stamp)", len(cfg.APIOptions), err)
	}
	if cfg, err = Load(context.Background(), nil, Recorder{Function: "processor"}); err != nil || len(cfg.APIOptions) != 2 {
		t.Errorf("recording: %d API options (%v), want 2", len(cfg.APIOptions), err)
	}
}

func TestParseRecordLine(t *testing.T) {
	r, ok := ParseRecordLine(`2026/01/01 receiver | ` + RecordLogPrefix + `{"function":"receiver","operation":"sqs:SendMessage","resource":"EventsQueue"}`)
	if !ok || r != (Record{"receiver", "sqs:SendMessage", "EventsQueue"}) {
		t.Errorf("ParseRecordLine = %+v, %v", r, ok)
	}
	for _, bad := range []string{`{"function":"receiver"}`, RecordLogPrefix + `{"function":"receiver"}`, RecordLogPrefix + "{"} {
		if _, ok := ParseRecordLine(bad); ok {
			t.Errorf("ParseRecordLine(%q) accepted", bad)
		}
	}
}

var quiet = slog.New(slog.DiscardHandler)

// RecordEnv=log writes each record once, as a prefixed line on standard
// error (sam local's containers: the harness collects them from the output).
func TestRecorderLogMode(t *testing.T) {
	t.Setenv(RecordEnv, RecordLog)
	t.Setenv("AWS_REGION", "us-east-1")
	t.Setenv("AWS_ACCESS_KEY_ID", "test")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "test")
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := os.Stderr
	os.Stderr = w
	defer func() { os.Stderr = stderr }()
	cfg, err := Load(context.Background(), quiet, Recorder{Function: "logtest", Names: map[string]string{testQueue: EventsQueue}})
	if err != nil {
		t.Fatal(err)
	}
	q := sqs.NewFromConfig(cfg, func(o *sqs.Options) { o.BaseEndpoint = aws.String(fakeAWS(t)) })
	for range 2 {
		if _, err := q.DeleteMessage(context.Background(), &sqs.DeleteMessageInput{QueueUrl: aws.String(testQueue), ReceiptHandle: aws.String("r")}); err != nil {
			t.Fatal(err)
		}
	}
	os.Stderr = stderr
	w.Close()
	var lines []string
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	want := RecordLogPrefix + `{"function":"logtest","operation":"sqs:DeleteMessage","resource":"EventsQueue"}`
	if len(lines) != 1 || lines[0] != want {
		t.Errorf("standard error: %q, want one line %q", lines, want)
	}
}
