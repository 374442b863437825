package processtest

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/hookwall/hookwall/shared/aws/awstest"
	"github.com/hookwall/hookwall/shared/engine/internal/testkit"
	"github.com/hookwall/hookwall/shared/state/store"
	"github.com/hookwall/hookwall/shared/state/store/memstore"
)

// EnvStore names the environment variable that picks where the kit keeps
// its tables: unset, empty or "memory" in memory (shared/state/store/memstore),
// so that a plain `go test` needs no services; "dynamodb" on fresh tables in
// DynamoDB Local (shared/aws/awstest, which fails the test with a hint when the
// local stack is not running). Any other value fails the test.
const EnvStore = testkit.EnvStore

// UseDynamoDB reports whether the kit's tables are in DynamoDB Local
// ([EnvStore] is "dynamodb"). It fails t on an unknown value.
func UseDynamoDB(t testing.TB) bool {
	t.Helper()
	return testkit.UseDynamoDB(t)
}

// Store is the events table as the kits use it: what the engines need,
// plus the receiver's claim and the reads the report is made of.
// *store.Table and *memstore.Store satisfy it.
type Store = testkit.Store

// NewStore returns an empty events table with the clock now: a
// memstore.Store, or with HOOKWALL_TEST_STORE=dynamodb a store.Table on a
// fresh table in DynamoDB Local, deleted when the test ends.
func NewStore(t testing.TB, now func() time.Time) Store {
	t.Helper()
	return testkit.NewStore(t, now)
}

// Table is a business team's own DynamoDB table as its handler
// ([store.UpdateItemAPI], for store.ApplyTransition) and its test (PutItem,
// GetItem) use it. *dynamodb.Client and *memstore.Table satisfy it.
type Table interface {
	store.UpdateItemAPI
	PutItem(ctx context.Context, in *dynamodb.PutItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error)
	GetItem(ctx context.Context, in *dynamodb.GetItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error)
}

// NewTable returns an empty business table whose primary key is the string
// attribute pk, and its name: a memstore.Table, or with
// HOOKWALL_TEST_STORE=dynamodb a fresh table in DynamoDB Local, deleted when
// the test ends. Pass both to the team's Register, as main passes the
// DynamoDB client and the table's name.
func NewTable(t testing.TB) (Table, string) {
	t.Helper()
	name := awstest.Name("team")
	if !UseDynamoDB(t) {
		return memstore.NewTable(name, "pk"), name
	}
	db := awstest.DynamoDB(t)
	ctx := context.Background()
	_, err := db.CreateTable(ctx, &dynamodb.CreateTableInput{
		TableName:            &name,
		BillingMode:          types.BillingModePayPerRequest,
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String("pk"), AttributeType: types.ScalarAttributeTypeS}},
		KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String("pk"), KeyType: types.KeyTypeHash}},
	})
	if err != nil {
		t.Fatalf("processtest: create table %s: %v", name, err)
	}
	t.Cleanup(func() { _, _ = db.DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: &name}) })
	w := dynamodb.NewTableExistsWaiter(db)
	if err := w.Wait(ctx, &dynamodb.DescribeTableInput{TableName: &name}, 30*time.Second); err != nil {
		t.Fatalf("processtest: wait for table %s: %v", name, err)
	}
	return db, name
}
