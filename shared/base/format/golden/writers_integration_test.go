//go:build integration

package golden_test

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/hookwall/hookwall/shared/aws/awstest"
	"github.com/hookwall/hookwall/shared/aws/queue"
	"github.com/hookwall/hookwall/shared/base/format"
	"github.com/hookwall/hookwall/shared/base/format/golden"
	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/ops/recovery"
	"github.com/hookwall/hookwall/shared/state/store"
	"github.com/hookwall/hookwall/shared/state/targets"
	"github.com/hookwall/hookwall/shared/state/targets/targetsdb"
)

// shapeOf names the shape of an item by its keys.
func shapeOf(pk, sk string) string {
	switch {
	case sk == store.SKEvent:
		return "record"
	case strings.HasPrefix(sk, store.SKPayloadPrefix):
		return "payload"
	case strings.HasPrefix(sk, store.SKStepPrefix):
		return "step"
	case strings.HasPrefix(sk, store.SKCursorPrefix):
		return "cursor"
	case sk == store.SKProgress:
		return "progress"
	case sk == recovery.SKJob:
		return "job"
	case pk == "JOBS":
		return "jobindex"
	case sk == "BREAKER":
		return "breaker"
	case sk == "BUCKET":
		return "bucket"
	case strings.HasPrefix(sk, "PAUSE#"):
		return "pause"
	case strings.HasPrefix(sk, "TARGET#"):
		return "target"
	}
	return "unknown:" + pk + "/" + sk
}

// Every item shape the code writes, written by today's code on DynamoDB
// Local, and every message shape sent to the local SQS server, matches its
// golden fixture (HOOKWALL_UPDATE_FORMATS=1 writes them).
func TestWritersMatchTheGoldenFixtures(t *testing.T) {
	ctx := context.Background()
	db := awstest.DynamoDB(t)
	name := awstest.NewTable(t, db)
	sqsc := awstest.SQS(t)
	qs := awstest.NewQueues(t, sqsc, 5, 30*time.Second)
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	clock := func() time.Time { return now }

	st, err := store.New(store.Config{Client: db, TableName: name, Function: "receiver", Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	q, err := queue.New(queue.Config{Client: sqsc, URL: qs.URL})
	if err != nil {
		t.Fatal(err)
	}
	dlq, err := queue.New(queue.Config{Client: sqsc, URL: qs.DLQURL})
	if err != nil {
		t.Fatal(err)
	}
	small := store.NewEvent{Key: "line#acme#ev1", Provider: "line", Tenant: "acme", EventType: "message", OccurredAt: now,
		PayloadHash: "h1", Payload: []byte(`{"text":"hi"}`), TraceID: "trace-1"}
	res, err := st.Claim(ctx, small, time.Hour)
	if err != nil {
		t.Fatalf("claim: %v", err)
	}
	large := small
	large.Key, large.PayloadHash = "line#acme#ev2", "h2"
	noise := make([]byte, 3*store.InlineRecordBytes) // incompressible: the payload gets its own item
	_, _ = rand.Read(noise)
	large.Payload = []byte(`{"text":"` + base64.StdEncoding.EncodeToString(noise) + `"}`)
	if err := large.Prepare(); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Claim(ctx, large, time.Hour); err != nil {
		t.Fatalf("claim a large event: %v", err)
	}
	acq, err := st.Acquire(ctx, small.Key, "golden", now.Add(time.Minute))
	if err != nil || acq.Outcome != webhook.Acquired {
		t.Fatalf("acquire: %+v, %v", acq, err)
	}
	if ok, err := st.SaveSteps(ctx, acq.Lease, []webhook.JournalEntry{{Handler: "h", Step: "charge", Result: []byte(`{}`), CompletedAt: now}}); err != nil || !ok {
		t.Fatalf("save steps: %v, %v", ok, err)
	}
	big := []byte(`"` + strings.Repeat("y", 2*store.RecordStepBytes) + `"`) // too large for the record: a journal item
	if ok, err := st.SaveSteps(ctx, acq.Lease, []webhook.JournalEntry{{Handler: "h", Step: "refund", Result: big, CompletedAt: now}}); err != nil || !ok {
		t.Fatalf("save a large step: %v, %v", ok, err)
	}
	if err := st.SaveProgress(ctx, "golden", store.Progress{Done: []byte{1}, ExpiresAt: now.Add(time.Hour).Unix()}); err != nil {
		t.Fatalf("save progress: %v", err)
	}
	if _, err := st.AdvanceSweepCursor(ctx, 3, now.Add(-time.Minute)); err != nil {
		t.Fatalf("advance cursor: %v", err)
	}
	tt, err := targetsdb.New(targetsdb.TableConfig{Client: db, TableName: name})
	if err != nil {
		t.Fatal(err)
	}
	sub := targets.Subject{Handler: "h", Tenant: "acme", Target: "api.example"}
	adm, err := tt.Admit(ctx, sub)
	if err != nil {
		t.Fatalf("admit: %v", err)
	}
	if _, err := tt.Report(ctx, adm, sub, true); err != nil {
		t.Fatalf("report: %v", err)
	}
	if err := tt.SetRate(ctx, sub.Target, 5); err != nil {
		t.Fatalf("set rate: %v", err)
	}
	if _, _, err := tt.Take(ctx, sub.Target, 1); err != nil {
		t.Fatalf("take: %v", err)
	}
	if err := tt.Pause(ctx, targets.Scope{Kind: "tenant", Name: "acme"}, "golden", "a test"); err != nil {
		t.Fatalf("pause: %v", err)
	}
	jobs, err := recovery.New(recovery.Config{DB: db, TableName: name, Store: st, Queue: q, Window: time.Hour, Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := jobs.Create(ctx, recovery.Filter{Since: now.Add(-time.Hour), Until: now}, 1, "golden"); err != nil {
		t.Fatalf("create job: %v", err)
	}

	items := scan(t, db, name)
	seen := map[string]map[string]types.AttributeValue{}
	fields := map[string]map[string]string{}
	for _, it := range items {
		pk, sk := str(it["pk"]), str(it["sk"])
		shape := shapeOf(pk, sk)
		if strings.HasPrefix(shape, "unknown:") {
			t.Errorf("an item of no known shape: %s", shape)
			continue
		}
		if v, ok := it[format.AttrVersion].(*types.AttributeValueMemberN); !ok || v.Value != "2" {
			t.Errorf("%s: format version %v, want 2", shape, it[format.AttrVersion])
		}
		if fields[shape] == nil {
			fields[shape] = map[string]string{}
		}
		for k, v := range golden.ItemFields(it) { // the union over the shape's items
			fields[shape][k] = v
		}
		if len(it) > len(seen[shape]) {
			seen[shape] = it
		}
	}
	for _, shape := range []string{"record", "payload", "step", "cursor", "progress", "job", "jobindex", "breaker", "bucket", "pause", "target"} {
		if seen[shape] == nil {
			t.Errorf("no %s item written", shape)
			continue
		}
		sample := seen[shape]
		if shape == "payload" || shape == "step" {
			sample = trimmed(sample)
		}
		golden.Check(t, shape, format.Item, fields[shape], golden.ItemJSON(sample))
	}

	env := res.Record.Envelope()
	if err := q.Send(ctx, []webhook.Envelope{env}); err != nil {
		t.Fatalf("send: %v", err)
	}
	if err := dlq.SendDeadLetter(ctx, env.Key, []byte(`{"key":"`+env.Key+`"}`), "a test"); err != nil {
		t.Fatalf("dead letter: %v", err)
	}
	checkMessage(t, sqsc, qs.URL, "message")
	checkMessage(t, sqsc, qs.DLQURL, "deadletter")
}

// checkMessage receives one message from url and checks its body and
// attributes against shape's fixture.
func checkMessage(t *testing.T, c *sqs.Client, url, shape string) {
	t.Helper()
	ms, err := awstest.Receive(context.Background(), c, url, 1, 5*time.Second)
	if err != nil || len(ms) != 1 {
		t.Fatalf("receive %s: %d messages, %v", shape, len(ms), err)
	}
	m := ms[0]
	fields, err := golden.JSONFields([]byte(aws.ToString(m.Body)), "payload")
	if err != nil {
		t.Fatal(err)
	}
	attrs := map[string]string{}
	for name, a := range m.MessageAttributes {
		fields["attributes."+name] = aws.ToString(a.DataType)
		attrs[name] = aws.ToString(a.StringValue)
	}
	if attrs[format.MessageAttrVersion] != "2" {
		t.Errorf("%s: format attribute %q, want 2", shape, attrs[format.MessageAttrVersion])
	}
	golden.Check(t, shape, format.Message, fields, map[string]any{"body": json.RawMessage(aws.ToString(m.Body)), "attributes": attrs})
}

func scan(t *testing.T, db *dynamodb.Client, name string) []map[string]types.AttributeValue {
	t.Helper()
	var out []map[string]types.AttributeValue
	p := dynamodb.NewScanPaginator(db, &dynamodb.ScanInput{TableName: &name, ConsistentRead: aws.Bool(true)})
	for p.HasMorePages() {
		page, err := p.NextPage(context.Background())
		if err != nil {
			t.Fatalf("scan: %v", err)
		}
		out = append(out, page.Items...)
	}
	return out
}

func str(v types.AttributeValue) string {
	if s, ok := v.(*types.AttributeValueMemberS); ok {
		return s.Value
	}
	return ""
}

// trimmed is item with its long strings and binaries cut, for a sample.
func trimmed(item map[string]types.AttributeValue) map[string]types.AttributeValue {
	out := make(map[string]types.AttributeValue, len(item))
	for k, v := range item {
		switch v := v.(type) {
		case *types.AttributeValueMemberS:
			if len(v.Value) > 64 {
				v = &types.AttributeValueMemberS{Value: v.Value[:64] + "…"}
			}
			out[k] = v
		case *types.AttributeValueMemberB:
			out[k] = &types.AttributeValueMemberB{Value: v.Value[:min(len(v.Value), 32)]}
		default:
			out[k] = v
		}
	}
	return out
}
