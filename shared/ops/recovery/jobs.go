package recovery

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/hookwall/hookwall/shared/aws/bus"
	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/state/store"
)

// DB is the part of the DynamoDB client the jobs use; *dynamodb.Client
// satisfies it.
type DB interface {
	GetItem(ctx context.Context, in *dynamodb.GetItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error)
	UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error)
	Query(ctx context.Context, in *dynamodb.QueryInput, optFns ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error)
	Scan(ctx context.Context, in *dynamodb.ScanInput, optFns ...func(*dynamodb.Options)) (*dynamodb.ScanOutput, error)
	TransactWriteItems(ctx context.Context, in *dynamodb.TransactWriteItemsInput, optFns ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error)
}

// Replayer sends a record back to RECEIVED ([store.Table.Replay]).
type Replayer interface {
	Replay(ctx context.Context, key string, opts store.ReplayOptions) (store.ReplayResult, error)
}

// Sender enqueues envelopes on the main queue ([queue.Queue.Send]); a
// [queue.SendError] names the ones not sent.
type Sender interface {
	Send(ctx context.Context, envs []webhook.Envelope) error
}

// Limiter hands out a target's tokens, one per call it may take
// (targets.Gate's Take): granted of n, and when the next token is due.
type Limiter interface {
	Take(ctx context.Context, target string, n int) (granted int, next time.Time, err error)
}

// Publisher publishes operational events (*bus.Publisher; a nil one
// publishes nothing).
type Publisher interface {
	PublishOps(ctx context.Context, ops []bus.Op) error
}

// Config configures [Jobs].
type Config struct {
	// DB is the DynamoDB client (required).
	DB DB
	// TableName is the events table, where the jobs live (required).
	TableName string
	// Store replays records (required).
	Store Replayer
	// Queue enqueues the replayed records (required).
	Queue Sender
	// Limiter rate-limits the replays by target (optional; nil: only each
	// job's Rate does, and a job must then have one).
	Limiter Limiter
	// Ops publishes hookwall.event.recovered (optional).
	Ops Publisher
	// Window is the dedup window: a replayed record is kept at least this
	// long (required, positive).
	Window time.Duration
	// Owner names this process in a job's lease (optional; default
	// host:pid:random).
	Owner string
	// Now is the clock (optional; default time.Now).
	Now func() time.Time
	// PageSize is how many table items one Scan page reads (optional;
	// default DefaultPageSize).
	PageSize int32
	// Lease is how long a run holds a job without saving (optional;
	// default DefaultLease).
	Lease time.Duration
	// Retain is how long a job is kept after its last change (optional;
	// default DefaultRetain).
	Retain time.Duration
}

// Defaults of [Config].
const (
	DefaultPageSize = 100
	DefaultLease    = time.Minute
	DefaultRetain   = 30 * 24 * time.Hour
)

// saveEvery is the longest a run goes without saving its cursor (which is
// also when it learns that the job was cancelled).
const saveEvery = time.Second

// Errors a caller branches on.
var (
	// ErrNotFound: no job with that id (or it expired).
	ErrNotFound = errors.New("recovery: no such job")
	// ErrBusy: another process runs the job (its lease holds).
	ErrBusy = errors.New("recovery: the job is running elsewhere")
	// ErrLost: the run lost its lease (another process took the job over).
	ErrLost = errors.New("recovery: the job's lease was lost")
)

// Jobs creates, runs, cancels and lists recovery jobs. It is safe for
// concurrent use.
type Jobs struct {
	cfg Config
}

// New returns the Jobs described by cfg.
func New(cfg Config) (*Jobs, error) {
	switch {
	case cfg.DB == nil || cfg.Store == nil || cfg.Queue == nil:
		return nil, errors.New("recovery: DB, Store and Queue are required")
	case cfg.TableName == "":
		return nil, errors.New("recovery: empty table name")
	case cfg.Window <= 0:
		return nil, errors.New("recovery: the window must be positive")
	case cfg.PageSize < 0 || cfg.Lease < 0 || cfg.Retain < 0:
		return nil, errors.New("recovery: negative PageSize, Lease or Retain")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.PageSize == 0 {
		cfg.PageSize = DefaultPageSize
	}
	if cfg.Lease == 0 {
		cfg.Lease = DefaultLease
	}
	if cfg.Retain == 0 {
		cfg.Retain = DefaultRetain
	}
	if cfg.Owner == "" {
		host, _ := os.Hostname()
		cfg.Owner = host + ":" + strconv.Itoa(os.Getpid()) + ":" + randomHex(4)
	}
	return &Jobs{cfg: cfg}, nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// Create stores a new job for f, capped at rate replays per second per
// target (0: the limiter's rate alone), created by by. It does not run it.
func (js *Jobs) Create(ctx context.Context, f Filter, rate float64, by string) (*Job, error) {
	f, err := f.normalized()
	if err != nil {
		return nil, fmt.Errorf("recovery: %w", err)
	}
	if rate < 0 || (rate == 0 && js.cfg.Limiter == nil) {
		return nil, errors.New("recovery: a job needs a positive rate when no limiter is configured")
	}
	now := js.cfg.Now().UTC()
	id := now.Format("20060102-150405") + fmt.Sprintf("%03d", now.Nanosecond()/1e6) + "-" + randomHex(3)
	j := &Job{ID: id, Filter: f, Rate: rate, State: StateInterrupted,
		By: by, CreatedAt: now, UpdatedAt: now}
	av, err := toItem(j, now.Add(js.cfg.Retain))
	if err != nil {
		return nil, fmt.Errorf("recovery: %w", err)
	}
	entry := map[string]types.AttributeValue{
		attrPK:        &types.AttributeValueMemberS{Value: ListKey},
		attrSK:        &types.AttributeValueMemberS{Value: j.ID},
		attrExpiresAt: &types.AttributeValueMemberN{Value: strconv.FormatInt(now.Add(js.cfg.Retain).Unix(), 10)},
	}
	_, err = js.cfg.DB.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{Put: &types.Put{TableName: &js.cfg.TableName, Item: av, ConditionExpression: aws.String("attribute_not_exists(pk)")}},
		{Put: &types.Put{TableName: &js.cfg.TableName, Item: entry}},
	}})
	if err != nil {
		return nil, fmt.Errorf("recovery: create job %s: %w", j.ID, err)
	}
	return j, nil
}

// Get returns the job id, or ErrNotFound.
func (js *Jobs) Get(ctx context.Context, id string) (*Job, error) {
	out, err := js.cfg.DB.GetItem(ctx, &dynamodb.GetItemInput{TableName: &js.cfg.TableName, Key: jobKey(id), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return nil, fmt.Errorf("recovery: get job %s: %w", id, err)
	}
	j, err := fromItem(out.Item)
	if err != nil {
		return nil, fmt.Errorf("recovery: job %s: %w", id, err)
	}
	if j == nil || js.expired(out.Item) {
		return nil, fmt.Errorf("%w: %s", ErrNotFound, id)
	}
	return j, nil
}

// expired reports whether an item's TTL has passed (TTL deletion lags).
func (js *Jobs) expired(av map[string]types.AttributeValue) bool {
	n, ok := av[attrExpiresAt].(*types.AttributeValueMemberN)
	if !ok {
		return false
	}
	v, err := strconv.ParseInt(n.Value, 10, 64)
	return err == nil && v < js.cfg.Now().Unix()
}

// List returns the newest jobs, at most limit, newest first.
func (js *Jobs) List(ctx context.Context, limit int) ([]*Job, error) {
	out, err := js.cfg.DB.Query(ctx, &dynamodb.QueryInput{
		TableName: &js.cfg.TableName, KeyConditionExpression: aws.String("pk = :jobs"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":jobs": &types.AttributeValueMemberS{Value: ListKey}},
		ScanIndexForward:          aws.Bool(false), Limit: aws.Int32(int32(max(1, min(limit, 1000)))),
	})
	if err != nil {
		return nil, fmt.Errorf("recovery: list jobs: %w", err)
	}
	var jobs []*Job
	for _, it := range out.Items {
		sk, _ := it[attrSK].(*types.AttributeValueMemberS)
		if sk == nil || js.expired(it) {
			continue
		}
		j, err := js.Get(ctx, sk.Value)
		if errors.Is(err, ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		jobs = append(jobs, j)
	}
	return jobs, nil
}

// Cancel marks the job cancelled: a process running it stops at its next
// save (within about a second), leaving it resumable. It returns the job
// and whether this call cancelled it (false: it was already cancelled or
// done).
func (js *Jobs) Cancel(ctx context.Context, id string) (*Job, bool, error) {
	now := js.cfg.Now()
	out, err := js.cfg.DB.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: &js.cfg.TableName, Key: jobKey(id),
		UpdateExpression:         aws.String("SET #state = :cancelled, #updatedAt = :now"),
		ConditionExpression:      aws.String("attribute_exists(pk) AND #state IN (:running, :interrupted)"),
		ExpressionAttributeNames: map[string]string{"#state": attrState, "#updatedAt": attrUpdatedAt},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":cancelled": avS(string(StateCancelled)), ":running": avS(string(StateRunning)),
			":interrupted": avS(string(StateInterrupted)), ":now": avN(now.UnixMilli()),
		},
		ReturnValues: types.ReturnValueAllNew, ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	})
	if err != nil {
		j, err := js.refusal("cancel", id, err)
		return j, false, err
	}
	j, err := fromItem(out.Attributes)
	if err != nil {
		return nil, false, fmt.Errorf("recovery: job %s: %w", id, err)
	}
	return j, true, nil
}

// refusal decodes the job item a conditional write on job id (op) was
// refused for: the write's error when it failed otherwise, ErrNotFound when
// there is no job (or it expired).
func (js *Jobs) refusal(op, id string, err error) (*Job, error) {
	old, ok := conditionFailed(err)
	if !ok {
		return nil, fmt.Errorf("recovery: %s job %s: %w", op, id, err)
	}
	j, err := fromItem(old)
	switch {
	case err != nil:
		return nil, fmt.Errorf("recovery: job %s: %w", id, err)
	case j == nil || js.expired(old):
		return nil, fmt.Errorf("%w: %s", ErrNotFound, id)
	}
	return j, nil
}

func conditionFailed(err error) (map[string]types.AttributeValue, bool) {
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		return ccf.Item, true
	}
	return nil, false
}

func avS(s string) types.AttributeValue { return &types.AttributeValueMemberS{Value: s} }
func avN(n int64) types.AttributeValue {
	return &types.AttributeValueMemberN{Value: strconv.FormatInt(n, 10)}
}
