package store

import (
	"context"
	"maps"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/hookwall/hookwall/shared/base/webhook"
)

// write is one conditional UpdateItem being built: SET and REMOVE clauses,
// condition terms (joined by AND), names and values, and the history entry
// the transition adds.
type write struct {
	set, remove []string
	cond        []string
	names       map[string]string
	values      map[string]types.AttributeValue
	entry       *webhook.HistoryEntry
	keep        int64
}

func newWrite() *write {
	return &write{names: map[string]string{"#s": AttrStatus}, values: map[string]types.AttributeValue{}}
}

// sets adds "#name = :set_name" for each value (the value placeholders
// never clash with a condition's).
func (w *write) sets(vals map[string]types.AttributeValue) *write {
	for name, v := range vals {
		w.names["#"+name] = name
		w.values[":set_"+name] = v
		w.set = append(w.set, "#"+name+" = :set_"+name)
	}
	return w
}

// removes adds REMOVE clauses for the attributes.
func (w *write) removes(attrs ...string) *write {
	for _, name := range attrs {
		w.names["#"+name] = name
		w.remove = append(w.remove, "#"+name)
	}
	return w
}

// when adds condition terms, with the values they use.
func (w *write) when(term string, vals map[string]types.AttributeValue) *write {
	w.cond = append(w.cond, term)
	for k, v := range vals {
		w.values[k] = v
	}
	return w
}

// raiseExpiry sets expiresAt to retainUntil when that is later than exp,
// the record's (never lowers it; a record with none, exp 0, keeps none),
// and returns the expiry the record has once the write applies.
func (w *write) raiseExpiry(exp int64, retainUntil time.Time) int64 {
	if exp > 0 {
		exp = max(exp, retainUntil.Unix())
		w.sets(map[string]types.AttributeValue{AttrExpiresAt: avInt(exp)})
	}
	return exp
}

// history makes the write add e to the record's history, keeping the newest
// keep entries: SET history.v<e.Version> and REMOVE history.v<e.Version-keep>.
func (w *write) history(e webhook.HistoryEntry, keep int64) *write {
	w.entry, w.keep = &e, keep
	return w
}

// input renders the UpdateItem. With whole, the history entry is written as
// a new `history` map holding it alone, on condition that the record has
// none: the form for records written before records had a history.
func (w *write) input(table, key string, whole bool) *dynamodb.UpdateItemInput {
	set, remove, cond := w.set, w.remove, w.cond
	names, values := maps.Clone(w.names), maps.Clone(w.values)
	if w.entry != nil {
		names["#hist"] = AttrHistory
		set = append(set[:len(set):len(set)], "") // copy on append
		if whole {
			values[":hist"] = encodeHistory([]webhook.HistoryEntry{*w.entry})
			set[len(set)-1] = "#hist = :hist"
			cond = append(cond[:len(cond):len(cond)], "attribute_not_exists(#hist)")
		} else {
			names["#hnew"] = HistoryKey(w.entry.Version)
			values[":hentry"] = encodeEntry(*w.entry)
			set[len(set)-1] = "#hist.#hnew = :hentry"
			if old := w.entry.Version - w.keep; old > 0 {
				names["#hold"] = HistoryKey(old)
				remove = append(remove[:len(remove):len(remove)], "#hist.#hold")
			}
		}
	}
	expr := "SET " + strings.Join(set, ", ")
	if len(remove) > 0 {
		expr += " REMOVE " + strings.Join(remove, ", ")
	}
	in := &dynamodb.UpdateItemInput{
		TableName:                 &table,
		Key:                       recordKey(key),
		UpdateExpression:          aws.String(expr),
		ExpressionAttributeNames:  names,
		ExpressionAttributeValues: values,
	}
	if len(cond) > 0 {
		in.ConditionExpression = aws.String("(" + strings.Join(cond, ") AND (") + ")")
	}
	if !usesName(in, "#s") {
		delete(names, "#s")
	}
	return in
}

// usesName reports whether the expressions of in use the name placeholder
// (DynamoDB refuses unused names).
func usesName(in *dynamodb.UpdateItemInput, name string) bool {
	for _, e := range []*string{in.UpdateExpression, in.ConditionExpression} {
		if e != nil && containsToken(*e, name) {
			return true
		}
	}
	return false
}

// containsToken reports whether tok occurs in expr not followed by a name character.
func containsToken(expr, tok string) bool {
	for i := 0; ; {
		j := strings.Index(expr[i:], tok)
		if j < 0 {
			return false
		}
		end := i + j + len(tok)
		if end == len(expr) || !isNameChar(expr[end]) {
			return true
		}
		i = end
	}
}

func isNameChar(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// update runs w as one conditional UpdateItem on the record of key. A record
// that has no history map yet (written before records had one) fails it
// with a validation error: the write is then made again with a new map.
func (t *Table) update(ctx context.Context, key string, w *write, rv types.ReturnValue, oldOnFail bool) (*dynamodb.UpdateItemOutput, error) {
	run := func(whole bool) (*dynamodb.UpdateItemOutput, error) {
		in := w.input(t.name, key, whole)
		in.ReturnValues = rv
		if oldOnFail {
			in.ReturnValuesOnConditionCheckFailure = types.ReturnValuesOnConditionCheckFailureAllOld
		}
		return t.db.UpdateItem(ctx, in)
	}
	out, err := run(false)
	if err != nil && w.entry != nil && missingHistory(err) {
		out, err = run(true)
	}
	return out, err
}
