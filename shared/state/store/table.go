package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Table is the events table. It is safe for concurrent use.
type Table struct {
	db         *dynamodb.Client
	name       string
	now        func() time.Time
	function   string
	keep       int64
	sweepAfter time.Duration
	hints      hints
}

// Config configures a Table.
type Config struct {
	// Client is the DynamoDB client (required).
	Client *dynamodb.Client
	// TableName is the events table (required).
	TableName string
	// Now is the clock (optional; default time.Now).
	Now func() time.Time
	// Function names the function that writes, in every history entry:
	// "receiver", "processor", "compensator", "sweeper" or "cli" (optional;
	// default: none).
	Function string
	// HistoryKeep is how many history entries a record keeps, the newest
	// (optional; default DefaultHistoryKeep).
	HistoryKeep int
	// SweepAfter is how long after a claim, a re-enqueue or a replay the
	// sweeper first looks at a record that is not terminal yet (optional;
	// default DefaultSweepAfter).
	SweepAfter time.Duration
}

// Defaults of [Config].
const (
	// DefaultHistoryKeep is the default number of history entries kept.
	DefaultHistoryKeep = 16
	// DefaultSweepAfter is the default delay before the sweeper looks at a
	// record.
	DefaultSweepAfter = 5 * time.Minute
)

// New returns the Table described by cfg.
func New(cfg Config) (*Table, error) {
	if cfg.Client == nil {
		return nil, errors.New("store: nil DynamoDB client")
	}
	if cfg.TableName == "" {
		return nil, errors.New("store: empty table name")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.HistoryKeep < 0 || cfg.SweepAfter < 0 {
		return nil, errors.New("store: negative HistoryKeep or SweepAfter")
	}
	if cfg.HistoryKeep == 0 {
		cfg.HistoryKeep = DefaultHistoryKeep
	}
	if cfg.SweepAfter == 0 {
		cfg.SweepAfter = DefaultSweepAfter
	}
	return &Table{db: cfg.Client, name: cfg.TableName, now: cfg.Now, function: cfg.Function,
		keep: int64(cfg.HistoryKeep), sweepAfter: cfg.SweepAfter}, nil
}

// Name returns the table name.
func (t *Table) Name() string { return t.name }

// Get reads the event record of key with a strongly consistent read. It
// returns nil if there is none or it has expired. The record carries its
// payload: a payload kept in its own item is read with a second strongly
// consistent GetItem. A missing payload item is an error wrapping
// [ErrPayloadMissing], returned with the record (its Payload nil), so
// that the caller may show or settle it ([Table.Bury]).
func (t *Table) Get(ctx context.Context, key string) (*Record, error) {
	out, err := t.db.GetItem(ctx, &dynamodb.GetItemInput{
		TableName:      &t.name,
		Key:            recordKey(key),
		ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return nil, fmt.Errorf("store: get %s: %w", key, err)
	}
	rec, err := decodeRecord(out.Item)
	if err != nil || rec == nil {
		return nil, err
	}
	if rec.Expired(t.now()) {
		return nil, nil
	}
	if err := t.fillPayload(ctx, rec); err != nil {
		if errors.Is(err, ErrPayloadMissing) {
			return rec, err // the record, without its payload: the caller may settle it
		}
		return nil, err
	}
	return rec, nil
}

func recordKey(key string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{
		AttrPK: &types.AttributeValueMemberS{Value: key},
		AttrSK: &types.AttributeValueMemberS{Value: SKEvent},
	}
}
