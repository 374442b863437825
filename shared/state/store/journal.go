package store

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/hookwall/hookwall/shared/base/webhook"
)

// The journal lives in the event record while it is small: each entry is an
// attribute of the record, "step#<handler>#<step>", written by one
// conditional UpdateItem fenced on the lease like every other write of the
// attempt (leaseOwner, version, status). The fence and the entry are one
// write on one item, so an entry is written only while the lease holds, as
// the transaction that used to check the record and put a STEP item made
// sure, at half its write units. The record's `stepBytes` counts the bytes
// its entries take; an entry that would take it over [RecordStepBytes], or a
// result too large for it, goes to a journal item of its own (sk =
// STEP#<handler>#<step>, tagged with the claim id) through that
// transaction, as before. Entries in the record go with the record: a new
// claim of an expired key replaces the whole item, and a replay with fresh
// steps removes them.

// StepRetention is how long a journal item (sk = STEP#…) outlives the
// record's expiry at the time it was written, so the compensator and audits
// can still read the steps of a record kept a little longer on completion.
// Entries kept in the record live as long as the record.
const StepRetention = 14 * 24 * time.Hour

// Journal entry attribute names (besides pk, sk, claimId and expiresAt) of
// a journal item.
const (
	AttrHandler     = "handler"
	AttrStep        = "step"
	AttrResult      = "result"
	AttrCompletedAt = "completedAt"
	// AttrRun is the entry's run ([webhook.JournalEntry.Run]), absent for
	// run 0.
	AttrRun = "run"
)

// Journal entries kept in the event record.
const (
	// AttrStepPrefix starts the name of a journal entry kept in the event
	// record: "step#<handler>#<step>". Its value is completedAt (a number,
	// epoch ms) when the step returned no result and is its run 0, else a
	// map {t: completedAt, r: result (binary, when there is one), n: run
	// (a number, when not 0: [webhook.JournalEntry.Run])}.
	AttrStepPrefix = "step#"
	// AttrStepBytes is the record's running count of the bytes its journal
	// entries take (DynamoDB's item sizing: name and value); absent while
	// there are none.
	AttrStepBytes = "stepBytes"
	// RecordStepBytes bounds the journal entries [Table.SaveSteps] keeps in
	// the record, in bytes: a one-step handler's entry takes about 30 (its
	// name and a time), so a handler's usual steps fit while a record with
	// an inline payload stays near one write unit; a large result or a
	// long journal goes to journal items instead. [Table.CompleteSteps]
	// may add one more batch of at most this size, so the entries never
	// take more than twice this.
	RecordStepBytes = 256
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
	Run         int64  `dynamodbav:"run,omitempty"`
	ExpiresAt   int64  `dynamodbav:"expiresAt"` // epoch s (TTL)
}

// StepSK returns the sort key of a journal item.
func StepSK(handler, step string) string { return SKStepPrefix + handler + "#" + step }

// StepAttr returns the name of a journal entry's attribute in the record.
func StepAttr(handler, step string) string { return AttrStepPrefix + handler + "#" + step }

// stepValue is the stored value of e in the record: the time alone for run
// 0 without a result (as every entry was before runs were counted).
func stepValue(e webhook.JournalEntry) types.AttributeValue {
	at := avInt(e.CompletedAt.UnixMilli())
	if len(e.Result) == 0 && e.Run == 0 {
		return at
	}
	m := map[string]types.AttributeValue{"t": at}
	if len(e.Result) > 0 {
		m["r"] = &types.AttributeValueMemberB{Value: e.Result}
	}
	if e.Run != 0 {
		m["n"] = avInt(int64(e.Run))
	}
	return &types.AttributeValueMemberM{Value: m}
}

// stepsSize is what entries add to a record, by DynamoDB's item sizing.
func stepsSize(entries []webhook.JournalEntry) int {
	n := 0
	for _, e := range entries {
		n += len(StepAttr(e.Handler, e.Step)) + valueSize(stepValue(e))
	}
	return n
}

// RecordSteps returns the journal entries kept in a record item (its claim's;
// nil for none), in sort key order.
func RecordSteps(item map[string]types.AttributeValue) ([]webhook.JournalEntry, error) {
	var out []webhook.JournalEntry
	for name, av := range item {
		rest, ok := strings.CutPrefix(name, AttrStepPrefix)
		if !ok {
			continue
		}
		h, s, _ := strings.Cut(rest, "#")
		e := webhook.JournalEntry{Handler: h, Step: s}
		var ms int64
		switch v := av.(type) {
		case *types.AttributeValueMemberN:
			if err := attributevalue.Unmarshal(v, &ms); err != nil {
				return nil, fmt.Errorf("store: journal entry %s: %w", name, err)
			}
		case *types.AttributeValueMemberM:
			var sv struct {
				T int64  `dynamodbav:"t"`
				R []byte `dynamodbav:"r"`
				N int    `dynamodbav:"n"`
			}
			if err := attributevalue.Unmarshal(v, &sv); err != nil {
				return nil, fmt.Errorf("store: journal entry %s: %w", name, err)
			}
			ms, e.Result, e.Run = sv.T, sv.R, sv.N
		default:
			return nil, fmt.Errorf("store: journal entry %s has unexpected attribute type %T", name, av)
		}
		e.CompletedAt = time.UnixMilli(ms)
		out = append(out, e)
	}
	sortEntries(out)
	return out, nil
}

// sortEntries sorts entries in sort key order (handler#step).
func sortEntries(entries []webhook.JournalEntry) {
	slices.SortFunc(entries, func(a, b webhook.JournalEntry) int {
		return cmp.Compare(a.Handler+"#"+a.Step, b.Handler+"#"+b.Step)
	})
}

// SaveStep writes journal entry e of l's claim, fenced on l (see
// [Table.SaveSteps]). held is false when the lease is lost (nothing is
// written).
func (t *Table) SaveStep(ctx context.Context, l webhook.Lease, e webhook.JournalEntry) (bool, error) {
	return t.SaveSteps(ctx, l, []webhook.JournalEntry{e})
}

// SaveSteps writes journal entries of l's claim in one write, on condition
// that l still holds the record (leaseOwner, version, and the lease's
// status: PROCESSING for the processor's lease, COMPENSATING for the
// compensator's). While the record's entries stay within
// [RecordStepBytes] they are attributes of the record, set by one
// conditional UpdateItem that also adds their size to stepBytes (one write
// unit for a record within 1 KB). Otherwise, or when that write finds the
// record's entries too large already (the record comes back with the failed
// condition, so the fence is told apart), they are journal items written by
// one TransactWriteItems: a ConditionCheck of the fence and a Put per entry,
// tagged with l's claim id. An entry of the same handler and step is
// replaced. held is false when the lease is lost (nothing is written).
func (t *Table) SaveSteps(ctx context.Context, l webhook.Lease, entries []webhook.JournalEntry) (bool, error) {
	if len(entries) == 0 {
		return true, nil
	}
	size := stepsSize(entries)
	if size <= RecordStepBytes {
		in := t.stepsUpdate(l, entries, size)
		in.ReturnValuesOnConditionCheckFailure = types.ReturnValuesOnConditionCheckFailureAllOld
		_, err := t.db.UpdateItem(ctx, in)
		if err == nil {
			return true, nil
		}
		old, failed := conditionFailed(err)
		if !failed {
			return false, fmt.Errorf("store: journal %s: %w", l.Key, err)
		}
		if !holds(old, l) {
			return false, nil
		}
		// The lease holds: the record's entries are full.
	}
	return t.saveItems(ctx, l, entries)
}

// stepsUpdate is the conditional UpdateItem that sets entries (size bytes)
// in the record: fenced on l, and on the record's entries leaving room.
func (t *Table) stepsUpdate(l webhook.Lease, entries []webhook.JournalEntry, size int) *dynamodb.UpdateItemInput {
	w := newWrite().when(fenceCondition, map[string]types.AttributeValue{
		":owner":   avString(l.Owner),
		":version": avInt(l.Version),
		":leased":  avString(string(leasedStatus(l))),
	}).when("attribute_not_exists(#stepBytes) OR #stepBytes <= :stepRoom", map[string]types.AttributeValue{
		":stepRoom": avInt(int64(RecordStepBytes - size)),
	})
	addSteps(w, entries, size)
	return w.input(t.name, l.Key, false)
}

// addSteps makes w set entries (size bytes) in the record and add size to
// its stepBytes.
func addSteps(w *write, entries []webhook.JournalEntry, size int) {
	for i, e := range entries {
		n, v := "#step"+strconv.Itoa(i), ":step"+strconv.Itoa(i)
		w.names[n], w.values[v] = StepAttr(e.Handler, e.Step), stepValue(e)
		w.set = append(w.set, n+" = "+v)
	}
	w.names["#stepBytes"] = AttrStepBytes
	w.values[":stepZero"], w.values[":stepSize"] = avInt(0), avInt(int64(size))
	w.set = append(w.set, "#stepBytes = if_not_exists(#stepBytes, :stepZero) + :stepSize")
}

// holds reports whether the record item (nil if absent) is still held by l.
func holds(item map[string]types.AttributeValue, l webhook.Lease) bool {
	rec, err := decodeRecord(item)
	return err == nil && rec != nil && rec.LeaseOwner == l.Owner && rec.Version == l.Version && rec.Status == leasedStatus(l)
}

// saveItems writes entries as journal items beside the record of l, in one
// TransactWriteItems: a ConditionCheck that l still holds the record and a
// Put per entry, tagged with l's claim id, to expire StepRetention after the
// record's expiry (or now).
func (t *Table) saveItems(ctx context.Context, l webhook.Lease, entries []webhook.JournalEntry) (bool, error) {
	now := t.now()
	base := now
	if l.ExpiresAt.After(now) {
		base = l.ExpiresAt
	}
	expires := base.Add(StepRetention)
	items := []types.TransactWriteItem{{ConditionCheck: &types.ConditionCheck{
		TableName:                &t.name,
		Key:                      recordKey(l.Key),
		ConditionExpression:      aws.String(fenceCondition),
		ExpressionAttributeNames: map[string]string{"#s": AttrStatus},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":owner":   avString(l.Owner),
			":version": avInt(l.Version),
			":leased":  avString(string(leasedStatus(l))),
		},
	}}}
	for _, e := range entries {
		item, err := attributevalue.MarshalMap(step{
			Key: l.Key, SK: StepSK(e.Handler, e.Step), ClaimID: l.ClaimID, Handler: e.Handler, Step: e.Step,
			Result: e.Result, CompletedAt: e.CompletedAt.UnixMilli(), Run: int64(e.Run), ExpiresAt: expires.Unix(),
		})
		if err != nil {
			return false, fmt.Errorf("store: journal %s: encode: %w", l.Key, err)
		}
		items = append(items, types.TransactWriteItem{Put: &types.Put{TableName: &t.name, Item: item}})
	}
	_, err := t.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: items})
	return fenced(err, "journal", l.Key+" "+entries[0].Handler+"/"+entries[0].Step)
}

// CompleteSteps is [Table.Complete] carrying journal entries of l's claim:
// the completion's one conditional UpdateItem also sets them in the record,
// so a handler's last step costs no write of its own. Entries too large for
// the record (over [RecordStepBytes] together) are saved first as
// [Table.SaveSteps] does, then the record completed. held is false when the
// lease is lost.
func (t *Table) CompleteSteps(ctx context.Context, l webhook.Lease, retainUntil time.Time, entries []webhook.JournalEntry) (bool, error) {
	size := stepsSize(entries)
	if len(entries) == 0 || size > RecordStepBytes {
		if held, err := t.SaveSteps(ctx, l, entries); !held || err != nil {
			return held, err
		}
		return t.Complete(ctx, l, retainUntil)
	}
	w := completion(retainUntil)
	addSteps(w, entries, size)
	return t.transition(ctx, l, webhook.StatusProcessing, webhook.StatusSucceeded, "", w)
}

// dropSteps makes a replay's write w remove the journal entries kept in the
// record item (as read), pinned to its stepBytes so that an entry written
// since the read fails the write instead of outliving the claim.
func dropSteps(w *write, item map[string]types.AttributeValue) {
	i := 0
	for name := range item {
		if strings.HasPrefix(name, AttrStepPrefix) {
			n := "#dropStep" + strconv.Itoa(i)
			w.names[n] = name
			w.remove = append(w.remove, n)
			i++
		}
	}
	w.removes(AttrStepBytes)
	if sb, ok := item[AttrStepBytes]; ok {
		w.when("#"+AttrStepBytes+" = :dropStepBytes", map[string]types.AttributeValue{":dropStepBytes": sb})
	} else {
		w.when("attribute_not_exists(#"+AttrStepBytes+")", nil)
	}
}

// leasedStatus is the status l holds its record in (PROCESSING when unset).
func leasedStatus(l webhook.Lease) webhook.Status {
	if l.Status == "" {
		return webhook.StatusProcessing
	}
	return l.Status
}

// Journal returns the journal entries of l's claim (see [Table.Steps]).
func (t *Table) Journal(ctx context.Context, l webhook.Lease) ([]webhook.JournalEntry, error) {
	return t.Steps(ctx, l.Key, l.ClaimID)
}

// Steps returns the journal entries of key written under claimID, in sort
// key order: those kept in the record (one strongly consistent GetItem; the
// record's, when its claim id is claimID) and its journal items (one
// strongly consistent Query, pk = key AND begins_with(sk, "STEP#"),
// filtered on the claim id so entries left by an earlier, expired claim of
// the same key are ignored; it pages only if the journal exceeds 1 MB).
// Where both hold an entry of the same step, the later one counts.
func (t *Table) Steps(ctx context.Context, key, claimID string) ([]webhook.JournalEntry, error) {
	got, err := t.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: &t.name, Key: recordKey(key), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return nil, fmt.Errorf("store: journal %s: %w", key, err)
	}
	byStep := map[string]webhook.JournalEntry{}
	if rec, err := decodeRecord(got.Item); err != nil {
		return nil, fmt.Errorf("store: journal %s: %w", key, err)
	} else if rec != nil && rec.ClaimID == claimID {
		entries, err := RecordSteps(got.Item)
		if err != nil {
			return nil, fmt.Errorf("store: journal %s: %w", key, err)
		}
		for _, e := range entries {
			byStep[e.Handler+"#"+e.Step] = e
		}
	}
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
			e := webhook.JournalEntry{Handler: s.Handler, Step: s.Step, Result: s.Result, CompletedAt: time.UnixMilli(s.CompletedAt),
				Run: int(s.Run)}
			if cur, ok := byStep[e.Handler+"#"+e.Step]; !ok || e.CompletedAt.After(cur.CompletedAt) {
				byStep[e.Handler+"#"+e.Step] = e
			}
		}
		if len(page.LastEvaluatedKey) == 0 {
			break
		}
		in.ExclusiveStartKey = page.LastEvaluatedKey
	}
	out := slices.Collect(maps.Values(byStep))
	sortEntries(out)
	return out, nil
}
