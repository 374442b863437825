package stamp

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/hookwall/hookwall/shared/base/format"
	"github.com/hookwall/hookwall/shared/base/release"
)

func TestUpdateExpressions(t *testing.T) {
	for expr, want := range map[string]string{
		"SET #a = :a":                "SET #hwfv = if_not_exists(#hwfv, :hwfv), #hwrel = :hwrel, #a = :a",
		"REMOVE #b SET #a = :a":      "REMOVE #b SET #hwfv = if_not_exists(#hwfv, :hwfv), #hwrel = :hwrel, #a = :a",
		"set #a = :a":                "set #hwfv = if_not_exists(#hwfv, :hwfv), #hwrel = :hwrel, #a = :a",
		"REMOVE #b":                  "SET #hwfv = if_not_exists(#hwfv, :hwfv), #hwrel = :hwrel REMOVE #b",
		"ADD #n :one":                "SET #hwfv = if_not_exists(#hwfv, :hwfv), #hwrel = :hwrel ADD #n :one",
		"SET #settle = :v REMOVE #x": "SET #hwfv = if_not_exists(#hwfv, :hwfv), #hwrel = :hwrel, #settle = :v REMOVE #x",
	} {
		in := &dynamodb.UpdateItemInput{UpdateExpression: aws.String(expr), ExpressionAttributeNames: map[string]string{"#a": "a"}}
		out := Input(in).(*dynamodb.UpdateItemInput)
		if got := aws.ToString(out.UpdateExpression); got != want {
			t.Errorf("%q: got %q, want %q", expr, got, want)
		}
		if aws.ToString(in.UpdateExpression) != expr || len(in.ExpressionAttributeNames) != 1 || in.ExpressionAttributeValues != nil {
			t.Errorf("%q: the caller's input was changed", expr)
		}
		if out.ExpressionAttributeNames[nameVersion] != format.AttrVersion || out.ExpressionAttributeNames["#a"] != "a" {
			t.Errorf("%q: names %v", expr, out.ExpressionAttributeNames)
		}
		if v, ok := out.ExpressionAttributeValues[valueRelease].(*types.AttributeValueMemberS); !ok || v.Value != release.Version {
			t.Errorf("%q: release value %v", expr, out.ExpressionAttributeValues[valueRelease])
		}
	}
}

func TestAnUpdateSettingAStampKeepsItsOwn(t *testing.T) {
	in := &dynamodb.UpdateItemInput{UpdateExpression: aws.String("SET #fv = :fv, #rel = :rel, #a = :a"),
		ExpressionAttributeNames: map[string]string{"#fv": format.AttrVersion, "#rel": format.AttrRelease, "#a": "a"}}
	out := Input(in).(*dynamodb.UpdateItemInput)
	if got := aws.ToString(out.UpdateExpression); got != aws.ToString(in.UpdateExpression) || len(out.ExpressionAttributeNames) != 3 {
		t.Errorf("got %q with names %v, want the update unchanged", got, out.ExpressionAttributeNames)
	}
	in.ExpressionAttributeNames = map[string]string{"#fv": format.AttrVersion, "#a": "a"}
	in.UpdateExpression = aws.String("SET #fv = :fv, #a = :a")
	out = Input(in).(*dynamodb.UpdateItemInput)
	if got := aws.ToString(out.UpdateExpression); got != "SET #hwrel = :hwrel, #fv = :fv, #a = :a" {
		t.Errorf("version set by the writer: got %q", got)
	}
}

func TestPutsAndTransactionsAreStamped(t *testing.T) {
	defer format.Override(format.Item, format.ItemVersion+1, 0)()
	item := map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "k"}}
	put := Input(&dynamodb.PutItemInput{Item: item}).(*dynamodb.PutItemInput)
	if v, ok := put.Item[format.AttrVersion].(*types.AttributeValueMemberN); !ok || v.Value != "3" {
		t.Errorf("put: version %v, want the overridden 3", put.Item[format.AttrVersion])
	}
	if len(item) != 1 {
		t.Error("the caller's item was changed")
	}
	tx := Input(&dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{Put: &types.Put{Item: item}},
		{Update: &types.Update{UpdateExpression: aws.String("SET #a = :a")}},
		{ConditionCheck: &types.ConditionCheck{ConditionExpression: aws.String("attribute_exists(pk)")}},
	}}).(*dynamodb.TransactWriteItemsInput)
	if _, ok := tx.TransactItems[0].Put.Item[format.AttrRelease]; !ok {
		t.Error("transaction put not stamped")
	}
	if got := aws.ToString(tx.TransactItems[1].Update.UpdateExpression); got != "SET #hwfv = if_not_exists(#hwfv, :hwfv), #hwrel = :hwrel, #a = :a" {
		t.Errorf("transaction update: %q", got)
	}
	if tx.TransactItems[2].ConditionCheck == nil {
		t.Error("condition check lost")
	}
	bw := Input(&dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{"t": {{PutRequest: &types.PutRequest{Item: item}}}}}).(*dynamodb.BatchWriteItemInput)
	if _, ok := bw.RequestItems["t"][0].PutRequest.Item[format.AttrVersion]; !ok {
		t.Error("batch put not stamped")
	}
	get := &dynamodb.GetItemInput{}
	if Input(get) != any(get) {
		t.Error("a read was changed")
	}
}
