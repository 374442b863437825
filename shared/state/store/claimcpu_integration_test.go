//go:build integration

package store

import (
	"context"
	"fmt"
	"os"
	"slices"
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
		{"UpdateItem, if_not_exists per attribute (issue 20's claim, until issue 33)", func(key string, item map[string]types.AttributeValue, now time.Time) error {
			out, err := db.UpdateItem(ctx, issue20ClaimUpdate(name, key, item, now, false))
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
		{"PutItem, attribute_not_exists(pk) OR expiresAt < now (claimPut: the claim since issue 33)", func(_ string, item map[string]types.AttributeValue, now time.Time) error {
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

// issue20ClaimUpdate is the claim's UpdateItem of issue 20 to 33 (kept here
// to measure it against the PutItem that replaced it): of item, the record of key a claim
// creates at now (see Claim): each attribute but the key and the count set
// with if_not_exists and required to exist when the record does, the
// count added, the previous item returned. With requireRecord it only
// counts: its condition holds only for a live record of the same payload,
// so it never creates one.
func issue20ClaimUpdate(table, key string, item map[string]types.AttributeValue, now time.Time, requireRecord bool) *dynamodb.UpdateItemInput {
	names := map[string]string{"#d": AttrDeliveries, "#last": AttrLastDeliveryAt}
	values := map[string]types.AttributeValue{
		":zero": avInt(0), ":one": avInt(1), ":last": item[AttrLastDeliveryAt], ":now": avInt(now.Unix()),
	}
	attrs := claimSets(item)
	set := make([]string, 0, len(attrs)+2)
	exist := make([]string, 0, len(attrs)+1)
	for i, a := range attrs {
		n, v := fmt.Sprintf("#a%d", i), fmt.Sprintf(":a%d", i)
		names[n], values[v] = a, item[a]
		set = append(set, fmt.Sprintf("%s = if_not_exists(%s, %s)", n, n, v))
		exist = append(exist, "attribute_exists("+n+")")
		switch a {
		case AttrClaimID:
			exist = append(exist, n+" <> "+v)
		case AttrPayloadHash:
			exist = append(exist, n+" = "+v)
		case AttrExpiresAt:
			exist = append(exist, n+" >= :now")
		}
	}
	set = append(set, "#d = if_not_exists(#d, :zero) + :one", "#last = :last")
	exist = append(exist, "attribute_exists(#d)")
	cond := strings.Join(exist, " AND ")
	if !requireRecord {
		names["#pk"] = AttrPK
		cond = "attribute_not_exists(#pk) OR (" + cond + ")"
	}
	return &dynamodb.UpdateItemInput{
		TableName:                           &table,
		Key:                                 recordKey(key),
		UpdateExpression:                    aws.String("SET " + strings.Join(set, ", ")),
		ConditionExpression:                 aws.String(cond),
		ExpressionAttributeNames:            names,
		ExpressionAttributeValues:           values,
		ReturnValues:                        types.ReturnValueAllOld,
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	}
}

// claimSets returns the attributes of item, the record a claim creates,
// that the claim's write sets with if_not_exists and requires of a live
// record (see [Table.Claim]): all but the key and the count, sorted (a
// stable expression).
func claimSets(item map[string]types.AttributeValue) []string {
	attrs := make([]string, 0, len(item))
	for a := range item {
		switch a {
		case AttrPK, AttrSK, AttrDeliveries, AttrLastDeliveryAt:
		default:
			attrs = append(attrs, a)
		}
	}
	slices.Sort(attrs)
	return attrs
}
