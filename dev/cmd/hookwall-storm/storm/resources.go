package storm

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	dbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/hookwall/hookwall/dev/cmd/hookwall-run/localrun"
)

// Resources are a storm's own table and queues, so that it never disturbs
// other users of the stack.
type Resources struct {
	Table, QueueURL, DLQURL, QueueARN, DLQARN string

	db *dynamodb.Client
	sq *sqs.Client
}

// Admin returns DynamoDB and SQS clients on the given endpoints (the
// stack's own, not a fault proxy), uncounted.
func Admin(ctx context.Context, ddbURL, sqsURL string) (*dynamodb.Client, *sqs.Client, error) {
	cfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("storm: AWS config: %w", err)
	}
	db := dynamodb.NewFromConfig(cfg, func(o *dynamodb.Options) {
		if ddbURL != "" {
			o.BaseEndpoint = aws.String(ddbURL)
		}
	})
	sq := sqs.NewFromConfig(cfg, func(o *sqs.Options) {
		if sqsURL != "" {
			o.BaseEndpoint = aws.String(sqsURL)
		}
	})
	return db, sq, nil
}

// CreateResources creates the table (pk/sk, the sweep and held GSIs, TTL on
// expiresAt, as scripts/services-up.sh) and the queues (the main one with a
// redrive policy to the DLQ after maxReceive receives, visibility seconds)
// named after prefix.
func CreateResources(ctx context.Context, db *dynamodb.Client, sq *sqs.Client, prefix string, visibility, maxReceive int) (*Resources, error) {
	r := &Resources{Table: "storm-" + prefix, db: db, sq: sq}
	s := func(v string) *string { return aws.String(v) }
	_, err := db.CreateTable(ctx, &dynamodb.CreateTableInput{
		TableName:   s(r.Table),
		BillingMode: dbtypes.BillingModePayPerRequest,
		AttributeDefinitions: []dbtypes.AttributeDefinition{
			{AttributeName: s("pk"), AttributeType: dbtypes.ScalarAttributeTypeS},
			{AttributeName: s("sk"), AttributeType: dbtypes.ScalarAttributeTypeS},
			{AttributeName: s("sweepShard"), AttributeType: dbtypes.ScalarAttributeTypeS},
			{AttributeName: s("sweepAt"), AttributeType: dbtypes.ScalarAttributeTypeN},
			{AttributeName: s("heldOn"), AttributeType: dbtypes.ScalarAttributeTypeS},
			{AttributeName: s("heldSince"), AttributeType: dbtypes.ScalarAttributeTypeN},
		},
		KeySchema: []dbtypes.KeySchemaElement{
			{AttributeName: s("pk"), KeyType: dbtypes.KeyTypeHash},
			{AttributeName: s("sk"), KeyType: dbtypes.KeyTypeRange},
		},
		GlobalSecondaryIndexes: []dbtypes.GlobalSecondaryIndex{{
			IndexName: s("sweep"),
			KeySchema: []dbtypes.KeySchemaElement{
				{AttributeName: s("sweepShard"), KeyType: dbtypes.KeyTypeHash},
				{AttributeName: s("sweepAt"), KeyType: dbtypes.KeyTypeRange},
			},
			Projection: &dbtypes.Projection{ProjectionType: dbtypes.ProjectionTypeKeysOnly},
		}, {
			IndexName: s("held"),
			KeySchema: []dbtypes.KeySchemaElement{
				{AttributeName: s("heldOn"), KeyType: dbtypes.KeyTypeHash},
				{AttributeName: s("heldSince"), KeyType: dbtypes.KeyTypeRange},
			},
			Projection: &dbtypes.Projection{ProjectionType: dbtypes.ProjectionTypeKeysOnly},
		}},
	})
	if err != nil {
		return nil, fmt.Errorf("storm: create table %s: %w", r.Table, err)
	}
	if _, err := db.UpdateTimeToLive(ctx, &dynamodb.UpdateTimeToLiveInput{TableName: s(r.Table),
		TimeToLiveSpecification: &dbtypes.TimeToLiveSpecification{Enabled: aws.Bool(true), AttributeName: s("expiresAt")}}); err != nil {
		return nil, fmt.Errorf("storm: TTL on %s: %w", r.Table, err)
	}
	dlq, err := sq.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: s("storm-" + prefix + "-dlq"),
		Attributes: map[string]string{"MaximumMessageSize": "1048576"}})
	if err != nil {
		return nil, fmt.Errorf("storm: create the DLQ: %w", err)
	}
	r.DLQURL = aws.ToString(dlq.QueueUrl)
	if r.DLQARN, err = localrun.QueueARN(ctx, sq, r.DLQURL); err != nil {
		return nil, err
	}
	redrive := `{"deadLetterTargetArn":"` + r.DLQARN + `","maxReceiveCount":` + strconv.Itoa(maxReceive) + `}`
	q, err := sq.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: s("storm-" + prefix),
		Attributes: map[string]string{"MaximumMessageSize": "1048576", "VisibilityTimeout": strconv.Itoa(visibility), "RedrivePolicy": redrive}})
	if err != nil {
		return nil, fmt.Errorf("storm: create the queue: %w", err)
	}
	r.QueueURL = aws.ToString(q.QueueUrl)
	if r.QueueARN, err = localrun.QueueARN(ctx, sq, r.QueueURL); err != nil {
		return nil, err
	}
	return r, nil
}

// Delete removes the table and the queues (best effort, bounded).
func (r *Resources) Delete() error {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, err1 := r.db.DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: aws.String(r.Table)})
	var err2, err3 error
	if r.QueueURL != "" {
		_, err2 = r.sq.DeleteQueue(ctx, &sqs.DeleteQueueInput{QueueUrl: aws.String(r.QueueURL)})
	}
	if r.DLQURL != "" {
		_, err3 = r.sq.DeleteQueue(ctx, &sqs.DeleteQueueInput{QueueUrl: aws.String(r.DLQURL)})
	}
	if err := errors.Join(err1, err2, err3); err != nil {
		return fmt.Errorf("storm: delete resources: %w", err)
	}
	return nil
}

// QueueDepth returns the approximate visible + in-flight messages of url.
func (r *Resources) QueueDepth(ctx context.Context, url string) int {
	out, err := r.sq.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: aws.String(url),
		AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameApproximateNumberOfMessages,
			sqstypes.QueueAttributeNameApproximateNumberOfMessagesNotVisible}})
	if err != nil {
		return -1
	}
	a, _ := strconv.Atoi(out.Attributes[string(sqstypes.QueueAttributeNameApproximateNumberOfMessages)])
	b, _ := strconv.Atoi(out.Attributes[string(sqstypes.QueueAttributeNameApproximateNumberOfMessagesNotVisible)])
	return a + b
}
