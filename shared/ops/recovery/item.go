package recovery

import (
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/hookwall/hookwall/shared/base/webhook"
)

// Attribute names of a job item (pk, sk and expiresAt are the table's own).
const (
	attrPK          = "pk"
	attrSK          = "sk"
	attrExpiresAt   = "expiresAt"
	attrState       = "state"
	attrOwner       = "owner"
	attrLeaseUntil  = "leaseUntil"
	attrUpdatedAt   = "updatedAt"
	attrFinishedAt  = "finishedAt"
	attrCursorPK    = "cursorPK"
	attrCursorSK    = "cursorSK"
	attrTotal       = "total"
	attrCounted     = "counted"
	attrScanned     = "scanned"
	attrReplayed    = "replayed"
	attrSkipped     = "skipped"
	attrMissing     = "missing"
	attrNotEnqueued = "notEnqueued"
	attrOpsFailed   = "opsNotPublished"
	attrLastError   = "lastError"
	attrDetached    = "detached"
	attrWhy         = "why"
)

// item is a job as stored; times are epoch milliseconds but expiresAt
// (epoch seconds, the table's TTL).
type item struct {
	PK          string   `dynamodbav:"pk"`
	SK          string   `dynamodbav:"sk"`
	Since       int64    `dynamodbav:"since"`
	Until       int64    `dynamodbav:"until"`
	Statuses    []string `dynamodbav:"statuses"`
	Tenant      string   `dynamodbav:"tenant,omitempty"`
	Handler     string   `dynamodbav:"handler,omitempty"`
	Rate        float64  `dynamodbav:"rate,omitempty"`
	State       string   `dynamodbav:"state"`
	Total       int      `dynamodbav:"total"`
	Counted     bool     `dynamodbav:"counted"`
	Scanned     int      `dynamodbav:"scanned"`
	Replayed    int      `dynamodbav:"replayed"`
	Skipped     int      `dynamodbav:"skipped"`
	Missing     int      `dynamodbav:"missing"`
	NotEnqueued int      `dynamodbav:"notEnqueued"`
	OpsFailed   int      `dynamodbav:"opsNotPublished,omitempty"`
	CursorPK    string   `dynamodbav:"cursorPK,omitempty"`
	CursorSK    string   `dynamodbav:"cursorSK,omitempty"`
	By          string   `dynamodbav:"by,omitempty"`
	Owner       string   `dynamodbav:"owner,omitempty"`
	LeaseUntil  int64    `dynamodbav:"leaseUntil,omitempty"`
	CreatedAt   int64    `dynamodbav:"createdAt"`
	UpdatedAt   int64    `dynamodbav:"updatedAt"`
	FinishedAt  int64    `dynamodbav:"finishedAt,omitempty"`
	LastError   string   `dynamodbav:"lastError,omitempty"`
	Why         string   `dynamodbav:"why,omitempty"`
	Detached    bool     `dynamodbav:"detached,omitempty"`
	ExpiresAt   int64    `dynamodbav:"expiresAt"`
}

func jobKey(id string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{
		attrPK: &types.AttributeValueMemberS{Value: KeyPrefix + id},
		attrSK: &types.AttributeValueMemberS{Value: SKJob},
	}
}

func ms(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

func fromMS(v int64) time.Time {
	if v == 0 {
		return time.Time{}
	}
	return time.UnixMilli(v).UTC()
}

// toItem encodes j, to expire at expires.
func toItem(j *Job, expires time.Time) (map[string]types.AttributeValue, error) {
	it := item{PK: KeyPrefix + j.ID, SK: SKJob, Since: ms(j.Filter.Since), Until: ms(j.Filter.Until),
		Tenant: j.Filter.Tenant, Handler: j.Filter.Handler, Rate: j.Rate, State: string(j.State),
		Total: j.Counts.Total, Counted: j.Counts.Counted, Scanned: j.Counts.Scanned, Replayed: j.Counts.Replayed,
		Skipped: j.Counts.Skipped, Missing: j.Counts.Missing, NotEnqueued: j.Counts.NotEnqueued, OpsFailed: j.Counts.OpsNotPublished,
		CursorPK: j.Cursor, CursorSK: j.cursorSK, By: j.By, Owner: j.Owner, LeaseUntil: ms(j.LeaseUntil),
		CreatedAt: ms(j.CreatedAt), UpdatedAt: ms(j.UpdatedAt), FinishedAt: ms(j.FinishedAt), LastError: j.LastError,
		Why: j.Why, Detached: j.Detached, ExpiresAt: expires.Unix()}
	for _, s := range j.Filter.Statuses {
		it.Statuses = append(it.Statuses, string(s))
	}
	av, err := attributevalue.MarshalMap(it)
	if err != nil {
		return nil, fmt.Errorf("encode job %s: %w", j.ID, err)
	}
	return av, nil
}

// fromItem decodes a job item; nil for none.
func fromItem(av map[string]types.AttributeValue) (*Job, error) {
	if len(av) == 0 {
		return nil, nil
	}
	var it item
	if err := attributevalue.UnmarshalMap(av, &it); err != nil {
		return nil, fmt.Errorf("decode job: %w", err)
	}
	id, ok := strings.CutPrefix(it.PK, KeyPrefix)
	if !ok {
		return nil, fmt.Errorf("decode job: pk %q is not a job's", it.PK)
	}
	j := &Job{ID: id, Rate: it.Rate, State: State(it.State),
		Filter: Filter{Since: fromMS(it.Since), Until: fromMS(it.Until), Tenant: it.Tenant, Handler: it.Handler},
		Counts: Counts{Total: it.Total, Counted: it.Counted, Scanned: it.Scanned, Replayed: it.Replayed,
			Skipped: it.Skipped, Missing: it.Missing, NotEnqueued: it.NotEnqueued, OpsNotPublished: it.OpsFailed},
		Cursor: it.CursorPK, cursorSK: it.CursorSK, By: it.By, Owner: it.Owner, LeaseUntil: fromMS(it.LeaseUntil),
		CreatedAt: fromMS(it.CreatedAt), UpdatedAt: fromMS(it.UpdatedAt), FinishedAt: fromMS(it.FinishedAt),
		LastError: it.LastError, Why: it.Why, Detached: it.Detached}
	for _, s := range it.Statuses {
		j.Filter.Statuses = append(j.Filter.Statuses, webhook.Status(s))
	}
	return j, nil
}
