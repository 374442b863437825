package memstore

import (
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/hookwall/hookwall/shared/state/store"
)

// indexCursor is where a page of a sparse index (sweep, held) ends, as the
// table's Query returns it: the last entry's key, the index's hash key and
// its range key (epoch milliseconds).
type indexCursor struct {
	// op names the call in errors ("stuck", "held"); method is its name
	// ("Stuck", "Held").
	op, method string
	// hashAttr and rangeAttr are the index's key attributes.
	hashAttr, rangeAttr string
}

// read returns the key and the range value of cursor (ok false for a nil
// cursor: the first page).
func (c indexCursor) read(cursor map[string]types.AttributeValue) (key string, at time.Time, ok bool, err error) {
	if cursor == nil {
		return "", time.Time{}, false, nil
	}
	k, kok := cursor[store.AttrPK].(*types.AttributeValueMemberS)
	a, aok := cursor[c.rangeAttr].(*types.AttributeValueMemberN)
	if !kok || !aok {
		return "", time.Time{}, false, fmt.Errorf("memstore: %s: the cursor is not one %s returned", c.op, c.method)
	}
	ms, err := strconv.ParseInt(a.Value, 10, 64)
	if err != nil {
		return "", time.Time{}, false, fmt.Errorf("memstore: %s: the cursor's %s: %w", c.op, c.rangeAttr, err)
	}
	return k.Value, time.UnixMilli(ms), true, nil
}

// next returns the cursor of a page whose last entry is key at in the
// index partition hash.
func (c indexCursor) next(key, hash string, at time.Time) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{
		store.AttrPK: &types.AttributeValueMemberS{Value: key},
		store.AttrSK: &types.AttributeValueMemberS{Value: store.SKEvent},
		c.hashAttr:   &types.AttributeValueMemberS{Value: hash},
		c.rangeAttr:  &types.AttributeValueMemberN{Value: strconv.FormatInt(at.UnixMilli(), 10)},
	}
}

// The memstore's sparse indexes.
var (
	sweepIndex = indexCursor{op: "stuck", method: "Stuck", hashAttr: store.AttrSweepShard, rangeAttr: store.AttrSweepAt}
	heldIndex  = indexCursor{op: "held", method: "Held", hashAttr: store.AttrHeldOn, rangeAttr: store.AttrHeldSince}
)

// page is the page of a listing whose entries after the cursor are found,
// sorted: at most limit of them, and the cursor next makes of the last one
// (nil when found fits: the listing ends there).
func page[E any](found []E, limit int32, next func(last E) map[string]types.AttributeValue) ([]E, map[string]types.AttributeValue, error) {
	if len(found) < int(limit) {
		return found, nil, nil
	}
	found = found[:limit]
	return found, next(found[len(found)-1]), nil
}
