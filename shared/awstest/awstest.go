package awstest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
)

// Default local endpoints, used when AWS_ENDPOINT_URL_DYNAMODB /
// AWS_ENDPOINT_URL_SQS are not set.
const (
	DefaultDynamoDBEndpoint = "http://127.0.0.1:8000"
	DefaultSQSEndpoint      = "http://127.0.0.1:9324"
)

const hint = "start the local services with `make services-up` (or run `make test`)"

// Config returns an AWS config for the local services: static test
// credentials, region us-east-1 unless AWS_REGION says otherwise.
func Config(t testing.TB) aws.Config {
	t.Helper()
	region := os.Getenv("AWS_REGION")
	if region == "" {
		region = "us-east-1"
	}
	return aws.Config{
		Region:      region,
		Credentials: credentials.NewStaticCredentialsProvider("test", "test", ""),
	}
}

func endpoint(t testing.TB, env, def string) string {
	t.Helper()
	ep := os.Getenv(env)
	if ep == "" {
		ep = def
	}
	u, err := url.Parse(ep)
	if err != nil {
		t.Fatalf("%s=%q is not a URL: %v", env, ep, err)
	}
	conn, err := net.DialTimeout("tcp", u.Host, 2*time.Second)
	if err != nil {
		t.Fatalf("%s (%s) does not answer: %v; %s", env, ep, err, hint)
	}
	conn.Close()
	return ep
}

// DynamoDB returns a client for DynamoDB Local. Response checksum validation
// is off: DynamoDB Local sends no CRC32 on error replies (local-stack.md).
// Extra options (for example call-counting middleware) are applied last.
func DynamoDB(t testing.TB, opts ...func(*dynamodb.Options)) *dynamodb.Client {
	t.Helper()
	ep := endpoint(t, "AWS_ENDPOINT_URL_DYNAMODB", DefaultDynamoDBEndpoint)
	base := func(o *dynamodb.Options) {
		o.BaseEndpoint = aws.String(ep)
		o.DisableValidateResponseChecksum = true
	}
	return dynamodb.NewFromConfig(Config(t), append([]func(*dynamodb.Options){base}, opts...)...)
}

// SQS returns a client for the local SQS server.
func SQS(t testing.TB, opts ...func(*sqs.Options)) *sqs.Client {
	t.Helper()
	ep := endpoint(t, "AWS_ENDPOINT_URL_SQS", DefaultSQSEndpoint)
	base := func(o *sqs.Options) { o.BaseEndpoint = aws.String(ep) }
	return sqs.NewFromConfig(Config(t), append([]func(*sqs.Options){base}, opts...)...)
}

// UniqueName returns prefix plus a random suffix.
func UniqueName(prefix string) string {
	var b [5]byte
	_, _ = rand.Read(b[:])
	return prefix + "-" + hex.EncodeToString(b[:])
}

// CreateTable creates a fresh events table (pk/sk strings, on demand, TTL on
// expiresAt), waits until it exists, and deletes it when the test ends.
func CreateTable(t testing.TB, db *dynamodb.Client) string {
	t.Helper()
	ctx := context.Background()
	name := UniqueName("hookwall-test")
	_, err := db.CreateTable(ctx, &dynamodb.CreateTableInput{
		TableName:   aws.String(name),
		BillingMode: ddbtypes.BillingModePayPerRequest,
		AttributeDefinitions: []ddbtypes.AttributeDefinition{
			{AttributeName: aws.String("pk"), AttributeType: ddbtypes.ScalarAttributeTypeS},
			{AttributeName: aws.String("sk"), AttributeType: ddbtypes.ScalarAttributeTypeS},
		},
		KeySchema: []ddbtypes.KeySchemaElement{
			{AttributeName: aws.String("pk"), KeyType: ddbtypes.KeyTypeHash},
			{AttributeName: aws.String("sk"), KeyType: ddbtypes.KeyTypeRange},
		},
	})
	if err != nil {
		t.Fatalf("create table %s: %v; %s", name, err, hint)
	}
	if err := dynamodb.NewTableExistsWaiter(db).Wait(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(name)}, 30*time.Second); err != nil {
		t.Fatalf("wait for table %s: %v", name, err)
	}
	if _, err := db.UpdateTimeToLive(ctx, &dynamodb.UpdateTimeToLiveInput{
		TableName: aws.String(name),
		TimeToLiveSpecification: &ddbtypes.TimeToLiveSpecification{
			AttributeName: aws.String("expiresAt"), Enabled: aws.Bool(true),
		},
	}); err != nil {
		t.Fatalf("enable TTL on %s: %v", name, err)
	}
	t.Cleanup(func() {
		_, _ = db.DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: aws.String(name)})
	})
	return name
}

// Queues is a fresh main queue with its dead-letter queue.
type Queues struct {
	URL    string
	DLQURL string
}

// CreateQueues creates a fresh queue and its dead-letter queue (redrive after
// maxReceiveCount receives) with the given visibility timeout in seconds, and
// deletes both when the test ends.
func CreateQueues(t testing.TB, client *sqs.Client, visibilitySeconds, maxReceiveCount int) Queues {
	t.Helper()
	ctx := context.Background()
	name := UniqueName("hookwall-test")
	dlq, err := client.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(name + "-dlq")})
	if err != nil {
		t.Fatalf("create queue %s-dlq: %v; %s", name, err, hint)
	}
	attrs, err := client.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{
		QueueUrl: dlq.QueueUrl, AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameQueueArn},
	})
	if err != nil {
		t.Fatalf("dead-letter queue ARN: %v", err)
	}
	main, err := client.CreateQueue(ctx, &sqs.CreateQueueInput{
		QueueName: aws.String(name),
		Attributes: map[string]string{
			"VisibilityTimeout": fmt.Sprint(visibilitySeconds),
			"RedrivePolicy": fmt.Sprintf(`{"deadLetterTargetArn":%q,"maxReceiveCount":%d}`,
				attrs.Attributes[string(sqstypes.QueueAttributeNameQueueArn)], maxReceiveCount),
		},
	})
	if err != nil {
		t.Fatalf("create queue %s: %v", name, err)
	}
	t.Cleanup(func() {
		_, _ = client.DeleteQueue(context.Background(), &sqs.DeleteQueueInput{QueueUrl: main.QueueUrl})
		_, _ = client.DeleteQueue(context.Background(), &sqs.DeleteQueueInput{QueueUrl: dlq.QueueUrl})
	})
	return Queues{URL: aws.ToString(main.QueueUrl), DLQURL: aws.ToString(dlq.QueueUrl)}
}

// Drain receives every message currently visible in the queue (until a
// receive comes back empty), deleting none, and returns their bodies.
// Received messages stay invisible for visibilitySeconds.
func Drain(t testing.TB, client *sqs.Client, queueURL string, visibilitySeconds int32) []sqstypes.Message {
	t.Helper()
	var all []sqstypes.Message
	for {
		out, err := client.ReceiveMessage(context.Background(), &sqs.ReceiveMessageInput{
			QueueUrl: aws.String(queueURL), MaxNumberOfMessages: 10, WaitTimeSeconds: 0,
			VisibilityTimeout:           visibilitySeconds,
			AttributeNames:              []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameAll}, //nolint:staticcheck // local-aws-sqs needs the deprecated name
			MessageSystemAttributeNames: []sqstypes.MessageSystemAttributeName{sqstypes.MessageSystemAttributeNameAll},
			MessageAttributeNames:       []string{"All"},
		})
		if err != nil {
			t.Fatalf("receive from %s: %v", queueURL, err)
		}
		if len(out.Messages) == 0 {
			return all
		}
		all = append(all, out.Messages...)
	}
}
