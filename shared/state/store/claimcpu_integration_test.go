//go:build integration

package store

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/hookwall/hookwall/shared/aws/awstest"
)

// TestClaimServerCPU measures DynamoDB Local's CPU per call of a first
// delivery's claim written three ways, on new keys, in alternated blocks
// (issue 33 item 1): the claim as it is (one UpdateItem, every attribute
// if_not_exists and required by the condition), the claim before issue 20
// (a PutItem on attribute_not_exists(pk)), and claimPut (the PutItem on
// attribute_not_exists(pk) OR expiresAt < now that claims an expired record
// anew: the candidate for a first delivery's claim, docs/PERFORMANCE.md).
// It needs HOOKWALL_DDB_PID_FILE (services-up's ddb.pid) and is skipped
// without it; HOOKWALL_CLAIMCPU_N sets the calls per block (default 300),
// 3 rounds after one of warm-up. Every call must create its record.
func TestClaimServerCPU(t *testing.T) {
	pidFile := os.Getenv("HOOKWALL_DDB_PID_FILE")
	if pidFile == "" {
		t.Skip("HOOKWALL_DDB_PID_FILE not set (the ddb.pid of services-up)")
	}
	raw, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid := strings.TrimSpace(string(raw))
	n := 300
	if v, err := strconv.Atoi(os.Getenv("HOOKWALL_CLAIMCPU_N")); err == nil && v > 0 {
		n = v
	}
	db := awstest.DynamoDB(t)
	name := awstest.NewTable(t, db)
	ctx := context.Background()
	forms := []struct {
		name string
		call func(key string, item map[string]types.AttributeValue, now time.Time) error
	}{
		{"UpdateItem, if_not_exists per attribute (HEAD's claim)", func(key string, item map[string]types.AttributeValue, now time.Time) error {
			out, err := db.UpdateItem(ctx, claimUpdate(name, key, item, now, false))
			if err == nil && len(out.Attributes) != 0 {
				err = fmt.Errorf("found a record")
			}
			return err
		}},
		{"PutItem, attribute_not_exists(pk) (c77e49b's claim)", func(_ string, item map[string]types.AttributeValue, _ time.Time) error {
			_, err := db.PutItem(ctx, &dynamodb.PutItemInput{TableName: &name, Item: item,
				ConditionExpression:      aws.String("attribute_not_exists(#pk)"),
				ExpressionAttributeNames: map[string]string{"#pk": AttrPK}})
			return err
		}},
		{"PutItem, attribute_not_exists(pk) OR expiresAt < now (claimPut)", func(_ string, item map[string]types.AttributeValue, now time.Time) error {
			_, err := db.PutItem(ctx, claimPut(name, item, now))
			return err
		}},
	}
	cpu := func() float64 {
		b, err := os.ReadFile("/proc/" + pid + "/stat")
		if err != nil {
			t.Fatal(err)
		}
		f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
		u, _ := strconv.ParseFloat(f[11], 64)
		s, _ := strconv.ParseFloat(f[12], 64)
		return (u + s) * 10 // ms at 100 ticks/s
	}
	sums := make([]float64, len(forms))
	for round := range 4 { // round 0 warms the JIT up and is not counted
		for j := range forms {
			i := (j + round) % len(forms) // alternate which form goes first
			f := forms[i]
			items := make([]map[string]types.AttributeValue, n)
			keys := make([]string, n)
			for k := range n {
				ev := NewEvent{Key: fmt.Sprintf("line#demo#r%d-f%d-%d", round, i, k), Provider: "line", Tenant: "demo",
					EventType: "message", OccurredAt: time.Now(), PayloadHash: strings.Repeat("ab", 32),
					Payload: []byte(`{"type":"message","message":{"type":"text","id":"1","text":"hello there, how are you today?"}}`)}
				if err := ev.Prepare(); err != nil {
					t.Fatal(err)
				}
				if items[k], err = claimItem(&ev, ev.ClaimRecord(time.Now(), time.Hour, time.Minute, "receiver")); err != nil {
					t.Fatal(err)
				}
				keys[k] = ev.Key
			}
			now := time.Now()
			before := cpu()
			for k := range n {
				if err := f.call(keys[k], items[k], now); err != nil {
					t.Fatalf("%s: %v", f.name, err)
				}
			}
			ms := (cpu() - before) / float64(n)
			if round > 0 {
				sums[i] += ms
			}
			t.Logf("round %d: %s: %.3f ms of DynamoDB Local CPU per call", round+1, f.name, ms)
		}
	}
	for i, f := range forms {
		t.Logf("mean: %s: %.3f ms per call (%.2fx the first)", f.name, sums[i]/3, sums[i]/sums[0])
	}
}
