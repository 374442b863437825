package store

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/hookwall/hookwall/shared/webhook"
)

// StepRetention is how long a journal entry outlives the record's expiry at
// the time it was written, so the compensator and audits can still read the
// steps of a record kept a little longer on completion.
const StepRetention = 14 * 24 * time.Hour

// Journal entry attribute names (besides pk, sk, claimId and expiresAt).
const (
	AttrHandler     = "handler"
	AttrStep        = "step"
	AttrResult      = "result"
	AttrCompletedAt = "completedAt"
)

// step is one journal item: pk = event key, sk = STEP#<handler>#<step>.
type step struct {
	Key         string `dynamodbav:"pk"`
	SK          string `dynamodbav:"sk"`
	ClaimID     string `dynamodbav:"claimId"`
	Handler     string `dynamodbav:"handler"`
	Step        string `dynamodbav:"step"`
	Result      []byte `dynamodbav:"result,omitempty"`
	CompletedAt int64  `dynamodbav:"completedAt"` // epoch ms
	ExpiresAt   int64  `dynamodbav:"expiresAt"`   // epoch s (TTL)
}

// StepSK returns the sort key of a journal entry.
func StepSK(handler, step string) string { return SKStepPrefix + handler + "#" + step }

// SaveStep writes journal entry e beside the record of l, in one
// TransactWriteItems: a ConditionCheck that l still holds the record
// (leaseOwner, version, and the lease's status: PROCESSING for the
// processor's lease, COMPENSATING for the compensator's) and the Put of the
// entry, tagged with l's claim id. held is false when the lease is lost
// (nothing is written).
func (t *Table) SaveStep(ctx context.Context, l webhook.Lease, e webhook.JournalEntry) (bool, error) {
	now := t.now()
	base := now
	if l.ExpiresAt.After(now) {
		base = l.ExpiresAt
	}
	expires := base.Add(StepRetention)
	item, err := attributevalue.MarshalMap(step{
		Key: l.Key, SK: StepSK(e.Handler, e.Step), ClaimID: l.ClaimID, Handler: e.Handler, Step: e.Step,
		Result: e.Result, CompletedAt: e.CompletedAt.UnixMilli(), ExpiresAt: expires.Unix(),
	})
	if err != nil {
		return false, fmt.Errorf("store: journal %s: encode: %w", l.Key, err)
	}
	_, err = t.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{
		TransactItems: []types.TransactWriteItem{
			{ConditionCheck: &types.ConditionCheck{
				TableName:                &t.name,
				Key:                      recordKey(l.Key),
				ConditionExpression:      aws.String(fenceCondition),
				ExpressionAttributeNames: map[string]string{"#s": AttrStatus},
				ExpressionAttributeValues: map[string]types.AttributeValue{
					":owner":   avString(l.Owner),
					":version": avInt(l.Version),
					":leased":  avString(string(leasedStatus(l))),
				},
			}},
			{Put: &types.Put{TableName: &t.name, Item: item}},
		},
	})
	return fenced(err, "journal", l.Key+" "+e.Handler+"/"+e.Step)
}

// leasedStatus is the status l holds its record in (PROCESSING when unset).
func leasedStatus(l webhook.Lease) webhook.Status {
	if l.Status == "" {
		return webhook.StatusProcessing
	}
	return l.Status
}

// Journal returns the journal entries of l's claim: one strongly consistent
// Query (pk = key AND begins_with(sk, "STEP#")), filtered on the claim id so
// entries left by an earlier, expired claim of the same key are ignored.
// It pages only if the journal exceeds 1 MB.
func (t *Table) Journal(ctx context.Context, l webhook.Lease) ([]webhook.JournalEntry, error) {
	return t.Steps(ctx, l.Key, l.ClaimID)
}

// Steps returns the journal entries of key written under claimID, in sort
// key order (see [Table.Journal]).
func (t *Table) Steps(ctx context.Context, key, claimID string) ([]webhook.JournalEntry, error) {
	in := &dynamodb.QueryInput{
		TableName:              &t.name,
		KeyConditionExpression: aws.String("pk = :pk AND begins_with(sk, :prefix)"),
		FilterExpression:       aws.String("claimId = :claim"),
		ConsistentRead:         aws.Bool(true),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":pk":     avString(key),
			":prefix": avString(SKStepPrefix),
			":claim":  avString(claimID),
		},
	}
	var out []webhook.JournalEntry
	for {
		page, err := t.db.Query(ctx, in)
		if err != nil {
			return nil, fmt.Errorf("store: journal %s: %w", key, err)
		}
		for _, item := range page.Items {
			var s step
			if err := attributevalue.UnmarshalMap(item, &s); err != nil {
				return nil, fmt.Errorf("store: journal %s: decode: %w", key, err)
			}
			if s.Handler == "" || s.Step == "" { // written by another tool: read the sort key
				h, st, _ := strings.Cut(strings.TrimPrefix(s.SK, SKStepPrefix), "#")
				s.Handler, s.Step = h, st
			}
			out = append(out, webhook.JournalEntry{
				Handler: s.Handler, Step: s.Step, Result: s.Result, CompletedAt: time.UnixMilli(s.CompletedAt),
			})
		}
		if len(page.LastEvaluatedKey) == 0 {
			return out, nil
		}
		in.ExclusiveStartKey = page.LastEvaluatedKey
	}
}
