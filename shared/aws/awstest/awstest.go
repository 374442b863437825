package awstest

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	dbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/aws/smithy-go/middleware"

	"github.com/hookwall/hookwall/shared/aws/stamp"
)

// Default local endpoints, used when the AWS_ENDPOINT_URL_* variables are unset.
const (
	DefaultDynamoDBEndpoint = "http://127.0.0.1:8000"
	DefaultSQSEndpoint      = "http://127.0.0.1:9324"
)

const hint = "is the local stack up? run `make services-up` (DynamoDB Local on 127.0.0.1:8000, SQS on 127.0.0.1:9324)"

func endpoint(env, def string) string {
	if v := os.Getenv(env); v != "" {
		return v
	}
	return def
}

// Config returns the AWS config of the local stack.
func Config() aws.Config {
	return aws.Config{
		Region:      "us-east-1",
		Credentials: credentials.NewStaticCredentialsProvider("test", "test", ""),
		APIOptions:  []func(*middleware.Stack) error{stamp.Install}, // as awsconf.Load
	}
}

// DynamoDB returns a client for DynamoDB Local (response checksums off: the
// local server omits them on errors), after checking that it answers.
func DynamoDB(t testing.TB, optFns ...func(*dynamodb.Options)) *dynamodb.Client {
	t.Helper()
	url := endpoint("AWS_ENDPOINT_URL_DYNAMODB", DefaultDynamoDBEndpoint)
	opts := append([]func(*dynamodb.Options){func(o *dynamodb.Options) {
		o.BaseEndpoint = aws.String(url)
		o.DisableValidateResponseChecksum = true
	}}, optFns...)
	db := dynamodb.NewFromConfig(Config(), opts...)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if _, err := db.ListTables(ctx, &dynamodb.ListTablesInput{Limit: aws.Int32(1)}); err != nil {
		t.Fatalf("DynamoDB at %s does not answer: %v; %s", url, err, hint)
	}
	return db
}

// SQS returns a client for the local SQS server, after checking that it answers.
func SQS(t testing.TB) *sqs.Client {
	t.Helper()
	url := endpoint("AWS_ENDPOINT_URL_SQS", DefaultSQSEndpoint)
	c := sqs.NewFromConfig(Config(), func(o *sqs.Options) { o.BaseEndpoint = aws.String(url) })
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if _, err := c.ListQueues(ctx, &sqs.ListQueuesInput{MaxResults: aws.Int32(1)}); err != nil {
		t.Fatalf("SQS at %s does not answer: %v; %s", url, err, hint)
	}
	return c
}

// Name returns prefix followed by "-" and a random suffix (26 characters
// of A–Z and 2–7, crypto/rand.Text), unique per call.
func Name(prefix string) string {
	return prefix + "-" + rand.Text()
}

// NewTable creates a uniquely named events-shaped table (pk, sk strings;
// on-demand; the sparse GSIs "sweep" on sweepShard (S) and sweepAt (N) and
// "held" on heldOn (S) and heldSince (N), KEYS_ONLY, as in the template) and deletes it when the test ends. It
// returns the name.
func NewTable(t testing.TB, db *dynamodb.Client) string {
	t.Helper()
	name := Name("hw-" + sanitize(t.Name()))
	ctx := context.Background()
	_, err := db.CreateTable(ctx, &dynamodb.CreateTableInput{
		TableName:   &name,
		BillingMode: dbtypes.BillingModePayPerRequest,
		AttributeDefinitions: []dbtypes.AttributeDefinition{
			{AttributeName: aws.String("pk"), AttributeType: dbtypes.ScalarAttributeTypeS},
			{AttributeName: aws.String("sk"), AttributeType: dbtypes.ScalarAttributeTypeS},
			{AttributeName: aws.String("sweepShard"), AttributeType: dbtypes.ScalarAttributeTypeS},
			{AttributeName: aws.String("sweepAt"), AttributeType: dbtypes.ScalarAttributeTypeN},
			{AttributeName: aws.String("heldOn"), AttributeType: dbtypes.ScalarAttributeTypeS},
			{AttributeName: aws.String("heldSince"), AttributeType: dbtypes.ScalarAttributeTypeN},
		},
		KeySchema: []dbtypes.KeySchemaElement{
			{AttributeName: aws.String("pk"), KeyType: dbtypes.KeyTypeHash},
			{AttributeName: aws.String("sk"), KeyType: dbtypes.KeyTypeRange},
		},
		GlobalSecondaryIndexes: []dbtypes.GlobalSecondaryIndex{{
			IndexName: aws.String("sweep"),
			KeySchema: []dbtypes.KeySchemaElement{
				{AttributeName: aws.String("sweepShard"), KeyType: dbtypes.KeyTypeHash},
				{AttributeName: aws.String("sweepAt"), KeyType: dbtypes.KeyTypeRange},
			},
			Projection: &dbtypes.Projection{ProjectionType: dbtypes.ProjectionTypeKeysOnly},
		}, {
			IndexName: aws.String("held"),
			KeySchema: []dbtypes.KeySchemaElement{
				{AttributeName: aws.String("heldOn"), KeyType: dbtypes.KeyTypeHash},
				{AttributeName: aws.String("heldSince"), KeyType: dbtypes.KeyTypeRange},
			},
			Projection: &dbtypes.Projection{ProjectionType: dbtypes.ProjectionTypeKeysOnly},
		}},
	})
	if err != nil {
		t.Fatalf("create table %s: %v; %s", name, err, hint)
	}
	w := dynamodb.NewTableExistsWaiter(db)
	if err := w.Wait(ctx, &dynamodb.DescribeTableInput{TableName: &name}, 30*time.Second); err != nil {
		t.Fatalf("wait for table %s: %v", name, err)
	}
	t.Cleanup(func() { _, _ = db.DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: &name}) })
	return name
}

// maxMessageSize is the queues' MaximumMessageSize, as in the template and
// the local stack.
const maxMessageSize = "1048576"

// Queues are a main queue and its dead-letter queue.
type Queues struct {
	URL, DLQURL string
}

// NewQueues creates a uniquely named queue with a dead-letter queue
// (RedrivePolicy maxReceiveCount) and the given visibility timeout, and
// deletes both when the test ends.
func NewQueues(t testing.TB, c *sqs.Client, maxReceiveCount int, visibility time.Duration) Queues {
	t.Helper()
	ctx := context.Background()
	base := Name("hw-" + sanitize(t.Name()))
	dlq, err := c.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(base + "-dlq"), Attributes: map[string]string{
		string(sqstypes.QueueAttributeNameMaximumMessageSize): maxMessageSize,
	}})
	if err != nil {
		t.Fatalf("create queue: %v; %s", err, hint)
	}
	attrs, err := c.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{
		QueueUrl: dlq.QueueUrl, AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameQueueArn},
	})
	if err != nil {
		t.Fatalf("dead-letter queue ARN: %v", err)
	}
	redrive, _ := json.Marshal(map[string]any{
		"deadLetterTargetArn": attrs.Attributes[string(sqstypes.QueueAttributeNameQueueArn)],
		"maxReceiveCount":     maxReceiveCount,
	})
	q, err := c.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(base), Attributes: map[string]string{
		string(sqstypes.QueueAttributeNameMaximumMessageSize): maxMessageSize,
		string(sqstypes.QueueAttributeNameVisibilityTimeout):  fmt.Sprint(int(visibility / time.Second)),
		string(sqstypes.QueueAttributeNameRedrivePolicy):      string(redrive),
	}})
	if err != nil {
		t.Fatalf("create queue: %v", err)
	}
	t.Cleanup(func() {
		_, _ = c.DeleteQueue(context.Background(), &sqs.DeleteQueueInput{QueueUrl: q.QueueUrl})
		_, _ = c.DeleteQueue(context.Background(), &sqs.DeleteQueueInput{QueueUrl: dlq.QueueUrl})
	})
	return Queues{URL: aws.ToString(q.QueueUrl), DLQURL: aws.ToString(dlq.QueueUrl)}
}

// Receive receives up to max messages with every system and message
// attribute (both the deprecated AttributeNames and
// MessageSystemAttributeNames, which the local server needs), waiting up to wait.
func Receive(ctx context.Context, c *sqs.Client, url string, max int32, wait time.Duration) ([]sqstypes.Message, error) {
	out, err := c.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{
		QueueUrl:                    &url,
		MaxNumberOfMessages:         max,
		WaitTimeSeconds:             int32(wait / time.Second),
		AttributeNames:              []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameAll}, //nolint:staticcheck // needed by the local server
		MessageSystemAttributeNames: []sqstypes.MessageSystemAttributeName{sqstypes.MessageSystemAttributeNameAll},
		MessageAttributeNames:       []string{"All"},
	})
	if err != nil {
		return nil, err
	}
	return out.Messages, nil
}

func sanitize(s string) string {
	s = strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-':
			return r
		}
		return '-'
	}, s)
	if len(s) > 40 {
		s = s[:40]
	}
	return s
}

// OpCounter counts SDK operations by name (GetItem, UpdateItem, Query, ...),
// once per call whatever the SDK's own retries.
type OpCounter struct {
	mu sync.Mutex
	n  map[string]int
}

// DynamoDBOption installs the counter on a DynamoDB client.
func (c *OpCounter) DynamoDBOption(o *dynamodb.Options) {
	o.APIOptions = append(o.APIOptions, c.install)
}

// Install installs the counter on a client's middleware stack: pass it to
// config.WithAPIOptions to count every client of an AWS config.
func (c *OpCounter) Install(stack *middleware.Stack) error { return c.install(stack) }

func (c *OpCounter) install(stack *middleware.Stack) error {
	return stack.Initialize.Add(middleware.InitializeMiddlewareFunc("hookwall-op-counter",
		func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
			c.mu.Lock()
			if c.n == nil {
				c.n = map[string]int{}
			}
			c.n[middleware.GetOperationName(ctx)]++
			c.mu.Unlock()
			return next.HandleInitialize(ctx, in)
		}), middleware.After)
}

// Take returns the counts since the last Take and resets them.
func (c *OpCounter) Take() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.n
	c.n = map[string]int{}
	if n == nil {
		n = map[string]int{}
	}
	return n
}
