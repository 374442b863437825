package store

import (
	"context"
	"fmt"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

const (
	// ProgressKeyPrefix starts the partition key of a delivery's progress
	// item: "DELIVERY#<id>". No event key starts with it (event keys start
	// with a lower-case provider name).
	ProgressKeyPrefix = "DELIVERY#"
	// SKProgress is the sort key of a progress item.
	SKProgress = "PROGRESS"
	// AttrDone is the progress item's bitmap of the events on their way.
	AttrDone = "done"
)

// Progress is what the attempts of one multi-event delivery have handed off
// so far: bit i of Done (Done[i/8] & 1<<(i%8)) is set when the delivery's
// i-th event, in the order its caller defines, has a message sent for it
// (or a record past RECEIVED). It lets a retry of a delivery too large for
// one attempt skip what earlier attempts did, instead of claiming it again
// and finding it RECEIVED. It is a hint: an event whose bit is missing is
// claimed as usual, and its duplicate claim answers for it.
type Progress struct {
	// Done is the bitmap of the events on their way.
	Done []byte
	// ExpiresAt is when the item stops counting (epoch seconds): no later
	// than the records of the events it marks.
	ExpiresAt int64
}

// Has reports whether bit i is set.
func (p Progress) Has(i int) bool {
	return i >= 0 && i/8 < len(p.Done) && p.Done[i/8]&(1<<(i%8)) != 0
}

// Set sets bit i, growing Done as needed.
func (p *Progress) Set(i int) {
	for len(p.Done) <= i/8 {
		p.Done = append(p.Done, 0)
	}
	p.Done[i/8] |= 1 << (i % 8)
}

func progressKey(id string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{
		AttrPK: &types.AttributeValueMemberS{Value: ProgressKeyPrefix + id},
		AttrSK: &types.AttributeValueMemberS{Value: SKProgress},
	}
}

// LoadProgress returns the progress saved for the delivery id (a strongly
// consistent read, so that a retry sees what the attempt before it saved),
// or the zero Progress when there is none or it has expired.
func (t *Table) LoadProgress(ctx context.Context, id string) (Progress, error) {
	out, err := t.db.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: &t.name, Key: progressKey(id), ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return Progress{}, fmt.Errorf("store: load progress %s: %w", id, err)
	}
	var p Progress
	if b, ok := out.Item[AttrDone].(*types.AttributeValueMemberB); ok {
		p.Done = b.Value
	}
	if n, ok := out.Item[AttrExpiresAt].(*types.AttributeValueMemberN); ok {
		p.ExpiresAt, _ = strconv.ParseInt(n.Value, 10, 64)
	}
	if p.ExpiresAt <= t.now().Unix() {
		return Progress{}, nil
	}
	return p, nil
}

// SaveProgress writes the progress of the delivery id, replacing what was
// there (one PutItem). Two attempts that save at once may lose each
// other's bits: that only costs a later retry the claims of those events.
func (t *Table) SaveProgress(ctx context.Context, id string, p Progress) error {
	item := progressKey(id)
	item[AttrDone] = &types.AttributeValueMemberB{Value: p.Done}
	item[AttrExpiresAt] = avInt(p.ExpiresAt)
	if _, err := t.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: &t.name, Item: item}); err != nil {
		return fmt.Errorf("store: save progress %s: %w", id, err)
	}
	return nil
}
