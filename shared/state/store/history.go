package store

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"

	"github.com/hookwall/hookwall/shared/base/webhook"
)

// History entry attribute names, inside each entry's map.
const (
	histAt      = "at"
	histFrom    = "from"
	histTo      = "to"
	histAttempt = "attempt"
	histOwner   = "owner"
	histError   = "error"
	histFn      = "fn"
)

// HistoryKey returns the key of the history entry of version v in the
// record's `history` map: "v<version>".
func HistoryKey(v int64) string { return "v" + strconv.FormatInt(v, 10) }

// historyEntry builds the entry of a transition to version.
func (t *Table) historyEntry(at time.Time, from, to webhook.Status, version int64, attempt int, owner, errText string) webhook.HistoryEntry {
	return newHistoryEntry(t.function, at, from, to, version, attempt, owner, errText)
}

func newHistoryEntry(fn string, at time.Time, from, to webhook.Status, version int64, attempt int, owner, errText string) webhook.HistoryEntry {
	return webhook.HistoryEntry{At: time.UnixMilli(at.UnixMilli()), From: from, To: to, Attempt: attempt, Owner: owner,
		Error: webhook.Truncate(errText, webhook.MaxHistoryError), Function: fn, Version: version}
}

// encodeEntry returns the stored form of e (its version is the map key):
// from, attempt, owner, error and fn are omitted when empty or 0, which is
// how they read back. Every byte counts: the record's history is paid for
// by every conditional write of the record.
func encodeEntry(e webhook.HistoryEntry) types.AttributeValue {
	m := map[string]types.AttributeValue{
		histAt: avInt(e.At.UnixMilli()),
		histTo: avString(string(e.To)),
	}
	if e.Attempt != 0 { // a claim's or a replay's: read back as 0
		m[histAttempt] = avInt(int64(e.Attempt))
	}
	for name, v := range map[string]string{histFrom: string(e.From), histOwner: e.Owner, histError: e.Error, histFn: e.Function} {
		if v != "" {
			m[name] = avString(v)
		}
	}
	return &types.AttributeValueMemberM{Value: m}
}

// encodeHistory returns the stored `history` map of h (an empty map for none).
func encodeHistory(h []webhook.HistoryEntry) types.AttributeValue {
	m := make(map[string]types.AttributeValue, len(h))
	for _, e := range h {
		m[HistoryKey(e.Version)] = encodeEntry(e)
	}
	return &types.AttributeValueMemberM{Value: m}
}

// storedEntry is an entry as stored.
type storedEntry struct {
	At      int64  `dynamodbav:"at"`
	From    string `dynamodbav:"from"`
	To      string `dynamodbav:"to"`
	Attempt int    `dynamodbav:"attempt"`
	Owner   string `dynamodbav:"owner"`
	Error   string `dynamodbav:"error"`
	Fn      string `dynamodbav:"fn"`
}

// decodeHistory reads a stored `history` map, sorted by version.
func decodeHistory(av types.AttributeValue) ([]webhook.HistoryEntry, error) {
	m, ok := av.(*types.AttributeValueMemberM)
	if !ok {
		if _, null := av.(*types.AttributeValueMemberNULL); null {
			return nil, nil
		}
		return nil, fmt.Errorf("store: history has unexpected attribute type %T", av)
	}
	var out []webhook.HistoryEntry
	for k, v := range m.Value {
		version, err := strconv.ParseInt(strings.TrimPrefix(k, "v"), 10, 64)
		if err != nil || !strings.HasPrefix(k, "v") {
			return nil, fmt.Errorf("store: history entry key %q is not v<version>", k)
		}
		var s storedEntry
		if err := attributevalue.Unmarshal(v, &s); err != nil {
			return nil, fmt.Errorf("store: history entry %s: %w", k, err)
		}
		out = append(out, webhook.HistoryEntry{At: time.UnixMilli(s.At), From: webhook.Status(s.From), To: webhook.Status(s.To),
			Attempt: s.Attempt, Owner: s.Owner, Error: s.Error, Function: s.Fn, Version: version})
	}
	slices.SortFunc(out, func(a, b webhook.HistoryEntry) int { return cmp.Compare(a.Version, b.Version) })
	return out, nil
}

// recordItem is Record without its methods, for the attributevalue codec.
type recordItem Record

// MarshalDynamoDBAttributeValue stores r as an item: its fields under the
// names of its tags, and History as the `history` map ("v<version>" →
// entry; an empty map when there is none, so that the next transition can
// add its entry to it).
func (r Record) MarshalDynamoDBAttributeValue() (types.AttributeValue, error) {
	av, err := attributevalue.Marshal(recordItem(r))
	if err != nil {
		return nil, err
	}
	m, ok := av.(*types.AttributeValueMemberM)
	if !ok {
		return nil, fmt.Errorf("store: record encoded as %T", av)
	}
	m.Value[AttrHistory] = encodeHistory(r.History)
	if len(r.Calls) > 0 {
		if m.Value[AttrCalls], err = encodeCalls(r.Calls); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// UnmarshalDynamoDBAttributeValue reads an item written by
// MarshalDynamoDBAttributeValue or by the table's writes.
func (r *Record) UnmarshalDynamoDBAttributeValue(av types.AttributeValue) error {
	if err := attributevalue.Unmarshal(av, (*recordItem)(r)); err != nil {
		return err
	}
	r.History, r.Calls = nil, nil
	m, ok := av.(*types.AttributeValueMemberM)
	if !ok {
		return nil
	}
	if h, ok := m.Value[AttrHistory]; ok {
		hist, err := decodeHistory(h)
		if err != nil {
			return err
		}
		r.History = hist
	}
	if c, ok := m.Value[AttrCalls]; ok {
		calls, err := decodeCalls(c)
		if err != nil {
			return err
		}
		r.Calls = calls
	}
	return nil
}

// missingHistory reports a write that failed only because the record has no
// `history` map to add an entry to (written before records had one):
// DynamoDB evaluates the condition first, so the condition held.
func missingHistory(err error) bool {
	var ae smithy.APIError
	return errors.As(err, &ae) && ae.ErrorCode() == "ValidationException" &&
		strings.Contains(ae.ErrorMessage(), "document path provided in the update expression is invalid")
}
