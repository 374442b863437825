package storm

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/hookwall/hookwall/shared/state/store"
)

// The counting middleware observes; it must hand every answer to the caller
// as it is. A lost condition counts as an answer (not a failure) on the
// track, and does not make the delivery a claim.
func TestCounterPassesErrorsThrough(t *testing.T) {
	fail := true
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/x-amz-json-1.0")
		if fail {
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write([]byte(`{"__type":"com.amazonaws.dynamodb.v20120810#ConditionalCheckFailedException","message":"The conditional request failed"}`))
			return
		}
		_, _ = w.Write([]byte(`{}`))
	}))
	defer srv.Close()
	c := NewCounter()
	cfg, err := config.LoadDefaultConfig(context.Background(), c.Option("receiver"), config.WithRegion("us-east-1"),
		config.WithCredentialsProvider(credentials.NewStaticCredentialsProvider("test", "test", "")))
	if err != nil {
		t.Fatal(err)
	}
	db := dynamodb.NewFromConfig(cfg, func(o *dynamodb.Options) {
		o.BaseEndpoint = aws.String(srv.URL)
		o.DisableValidateResponseChecksum = true
	})
	lt := &liveTrack{}
	ctx := withTrack(context.Background(), lt)
	put := &dynamodb.PutItemInput{TableName: aws.String("t"), Item: map[string]types.AttributeValue{
		"pk": &types.AttributeValueMemberS{Value: "k"}, "sk": &types.AttributeValueMemberS{Value: store.SKEvent}}}
	_, err = db.PutItem(ctx, put)
	var ccf *types.ConditionalCheckFailedException
	if !errors.As(err, &ccf) {
		t.Fatalf("PutItem returned %v; want the ConditionalCheckFailedException the server sent", err)
	}
	tr := lt.snapshot()
	if tr.Claimed || tr.Failed != 0 || tr.Calls["PutItem"] != 1 {
		t.Errorf("after a lost condition: track %+v; want 1 PutItem, not claimed, not failed", tr)
	}
	fail = false
	if _, err := db.PutItem(ctx, put); err != nil {
		t.Fatal(err)
	}
	if tr := lt.snapshot(); !tr.Claimed || tr.Calls["PutItem"] != 2 {
		t.Errorf("after a successful PutItem: track %+v; want claimed", tr)
	}
	calls, errs := c.Calls()
	if calls["receiver"]["PutItem"] != 2 || errs["receiver"] != 0 {
		t.Errorf("counter %v errors %v; want 2 PutItem calls, no failure", calls, errs)
	}
}
