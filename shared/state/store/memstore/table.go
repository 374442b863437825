package memstore

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/big"
	"reflect"
	"slices"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
)

// Table is an in-memory DynamoDB table for a business team's own items, as
// [store.ApplyTransition] writes them: it answers UpdateItem, PutItem and
// GetItem with the signatures of *dynamodb.Client (so it satisfies
// [store.UpdateItemAPI]). It understands the expressions the transition
// helper writes and little more: a ConditionExpression of terms joined by
// AND (attribute_exists(a), attribute_not_exists(a), a = :v, a <> :v,
// a IN (:v, ...)) and an UpdateExpression of SET a = :v, .... Anything else
// is an error, so a handler that writes another shape is told at once. It is
// safe for concurrent use.
type Table struct {
	name string
	keys []string

	mu    sync.Mutex
	items map[string]map[string]types.AttributeValue // by encoded key
}

// NewTable returns an empty table called name whose primary key is the
// attributes keys (default: "pk"). Requests for another table name fail as
// DynamoDB's would (ResourceNotFoundException).
func NewTable(name string, keys ...string) *Table {
	if len(keys) == 0 {
		keys = []string{"pk"}
	}
	return &Table{name: name, keys: slices.Clone(keys), items: map[string]map[string]types.AttributeValue{}}
}

// Name returns the table name.
func (t *Table) Name() string { return t.name }

// Len returns the number of items.
func (t *Table) Len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.items)
}

// GetItem returns a copy of the item with in.Key (an empty output if there is none).
func (t *Table) GetItem(_ context.Context, in *dynamodb.GetItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	id, err := t.keyOf(aws.ToString(in.TableName), in.Key)
	if err != nil {
		return nil, fmt.Errorf("operation GetItem: %w", err)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return &dynamodb.GetItemOutput{Item: maps.Clone(t.items[id])}, nil
}

// PutItem stores a copy of in.Item, if the condition (if any) holds.
func (t *Table) PutItem(_ context.Context, in *dynamodb.PutItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	key := map[string]types.AttributeValue{}
	for _, k := range t.keys {
		if v, ok := in.Item[k]; ok {
			key[k] = v
		}
	}
	id, err := t.keyOf(aws.ToString(in.TableName), key)
	if err != nil {
		return nil, fmt.Errorf("operation PutItem: %w", err)
	}
	old, _, err := t.write(id, in.ConditionExpression, in.ExpressionAttributeNames, in.ExpressionAttributeValues,
		in.ReturnValuesOnConditionCheckFailure, func(map[string]types.AttributeValue) (map[string]types.AttributeValue, error) {
			return maps.Clone(in.Item), nil
		})
	if err != nil {
		return nil, fmt.Errorf("operation PutItem: %w", err)
	}
	out := &dynamodb.PutItemOutput{}
	if in.ReturnValues == types.ReturnValueAllOld {
		out.Attributes = old
	}
	return out, nil
}

// UpdateItem applies in.UpdateExpression (SET only) to the item with in.Key,
// creating it if absent, if the condition (if any) holds. A failed condition
// is a *types.ConditionalCheckFailedException carrying the old item when
// ReturnValuesOnConditionCheckFailure is ALL_OLD.
func (t *Table) UpdateItem(_ context.Context, in *dynamodb.UpdateItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	id, err := t.keyOf(aws.ToString(in.TableName), in.Key)
	if err != nil {
		return nil, fmt.Errorf("operation UpdateItem: %w", err)
	}
	sets, err := parseSet(aws.ToString(in.UpdateExpression), in.ExpressionAttributeNames, in.ExpressionAttributeValues)
	if err != nil {
		return nil, fmt.Errorf("operation UpdateItem: %w", err)
	}
	old, item, err := t.write(id, in.ConditionExpression, in.ExpressionAttributeNames, in.ExpressionAttributeValues,
		in.ReturnValuesOnConditionCheckFailure, func(old map[string]types.AttributeValue) (map[string]types.AttributeValue, error) {
			item := maps.Clone(old)
			if item == nil {
				item = maps.Clone(in.Key)
			}
			for _, s := range sets {
				if slices.Contains(t.keys, s.name) {
					return nil, validation("cannot update key attribute " + s.name)
				}
				item[s.name] = s.value
			}
			return item, nil
		})
	if err != nil {
		return nil, fmt.Errorf("operation UpdateItem: %w", err)
	}
	out := &dynamodb.UpdateItemOutput{}
	switch in.ReturnValues {
	case types.ReturnValueAllNew:
		out.Attributes = item
	case types.ReturnValueAllOld:
		out.Attributes = old
	}
	return out, nil
}

// write is the conditional write of PutItem and UpdateItem: under the lock,
// when the condition (if any) holds on the item with id (nil if absent),
// the item next makes of it replaces it. It returns copies of the old and
// the new item. A failed condition is a
// *types.ConditionalCheckFailedException, carrying the old item when onFail
// is ALL_OLD.
func (t *Table) write(id string, cond *string, names map[string]string, values map[string]types.AttributeValue,
	onFail types.ReturnValuesOnConditionCheckFailure,
	next func(old map[string]types.AttributeValue) (map[string]types.AttributeValue, error)) (old, item map[string]types.AttributeValue, err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	old = t.items[id]
	if err := t.check(cond, names, values, old, onFail == types.ReturnValuesOnConditionCheckFailureAllOld); err != nil {
		return nil, nil, err
	}
	if item, err = next(old); err != nil {
		return nil, nil, err
	}
	t.items[id] = item
	return maps.Clone(old), maps.Clone(item), nil
}

// keyOf checks the table name and the key, and encodes the key.
func (t *Table) keyOf(table string, key map[string]types.AttributeValue) (string, error) {
	if table != t.name {
		return "", &types.ResourceNotFoundException{Message: aws.String("memstore: no table " + table)}
	}
	if len(key) != len(t.keys) {
		return "", validation(fmt.Sprintf("the key must have exactly the attributes %v", t.keys))
	}
	var b strings.Builder
	for _, k := range t.keys {
		v, ok := key[k]
		if !ok {
			return "", validation(fmt.Sprintf("the key must have exactly the attributes %v", t.keys))
		}
		switch v := v.(type) {
		case *types.AttributeValueMemberS:
			fmt.Fprintf(&b, "S%d:%s|", len(v.Value), v.Value)
		case *types.AttributeValueMemberN:
			fmt.Fprintf(&b, "N%s|", canonicalNumber(v.Value))
		case *types.AttributeValueMemberB:
			fmt.Fprintf(&b, "B%d:%x|", len(v.Value), v.Value)
		default:
			return "", validation(fmt.Sprintf("key attribute %s must be S, N or B, not %T", k, v))
		}
	}
	return b.String(), nil
}

// validation is DynamoDB's ValidationException, as the SDK reports it.
func validation(msg string) error {
	return &smithy.GenericAPIError{Code: "ValidationException", Message: msg, Fault: smithy.FaultClient}
}

// check evaluates the condition against item (nil if absent): nil if it
// holds, a *types.ConditionalCheckFailedException if not.
func (t *Table) check(cond *string, names map[string]string, values map[string]types.AttributeValue,
	item map[string]types.AttributeValue, allOld bool) error {
	expr := strings.TrimSpace(aws.ToString(cond))
	if expr == "" {
		return nil
	}
	ok, err := evalCondition(expr, names, values, item)
	if err != nil {
		return err
	}
	if ok {
		return nil
	}
	ccf := &types.ConditionalCheckFailedException{Message: aws.String("The conditional request failed")}
	if allOld {
		ccf.Item = maps.Clone(item)
	}
	return ccf
}

// evalCondition evaluates terms joined by AND.
func evalCondition(expr string, names map[string]string, values map[string]types.AttributeValue,
	item map[string]types.AttributeValue) (bool, error) {
	result := true
	for term := range strings.SplitSeq(expr, " AND ") {
		ok, err := evalTerm(strings.TrimSpace(term), names, values, item)
		if err != nil {
			return false, err
		}
		result = result && ok
	}
	return result, nil
}

func evalTerm(term string, names map[string]string, values map[string]types.AttributeValue,
	item map[string]types.AttributeValue) (bool, error) {
	for _, fn := range []string{"attribute_exists", "attribute_not_exists"} {
		if arg, ok := strings.CutPrefix(term, fn+"("); ok && strings.HasSuffix(arg, ")") {
			name, err := resolveName(strings.TrimSpace(strings.TrimSuffix(arg, ")")), names)
			if err != nil {
				return false, err
			}
			_, exists := item[name]
			return exists == (fn == "attribute_exists"), nil
		}
	}
	if lhs, list, ok := strings.Cut(term, " IN "); ok {
		list = strings.TrimSpace(list)
		if !strings.HasPrefix(list, "(") || !strings.HasSuffix(list, ")") {
			return false, unsupported(term)
		}
		name, err := resolveName(strings.TrimSpace(lhs), names)
		if err != nil {
			return false, err
		}
		got, exists := item[name]
		for p := range strings.SplitSeq(strings.Trim(list, "()"), ",") {
			v, err := resolveValue(strings.TrimSpace(p), values)
			if err != nil {
				return false, err
			}
			if exists && equal(got, v) {
				return true, nil
			}
		}
		return false, nil
	}
	for _, op := range []string{" <> ", " = "} {
		if lhs, rhs, ok := strings.Cut(term, op); ok {
			name, v, err := resolvePair(lhs, rhs, names, values)
			if err != nil {
				return false, err
			}
			got, exists := item[name]
			if !exists { // a comparison with a missing attribute is false either way
				return false, nil
			}
			return equal(got, v) == (op == " = "), nil
		}
	}
	return false, unsupported(term)
}

type set struct {
	name  string
	value types.AttributeValue
}

// parseSet parses "SET a = :v, #b = :w".
func parseSet(expr string, names map[string]string, values map[string]types.AttributeValue) ([]set, error) {
	body, ok := strings.CutPrefix(strings.TrimSpace(expr), "SET ")
	if !ok {
		return nil, unsupported(expr)
	}
	var out []set
	for a := range strings.SplitSeq(body, ",") {
		lhs, rhs, ok := strings.Cut(a, "=")
		if !ok {
			return nil, unsupported(expr)
		}
		name, v, err := resolvePair(lhs, rhs, names, values)
		if err != nil {
			return nil, err
		}
		out = append(out, set{name: name, value: v})
	}
	return out, nil
}

// resolvePair resolves the two sides of "name = :value" (either side
// padded with spaces): an attribute name (or #placeholder) and a value
// placeholder.
func resolvePair(lhs, rhs string, names map[string]string, values map[string]types.AttributeValue) (string, types.AttributeValue, error) {
	name, err := resolveName(strings.TrimSpace(lhs), names)
	if err != nil {
		return "", nil, err
	}
	v, err := resolveValue(strings.TrimSpace(rhs), values)
	if err != nil {
		return "", nil, err
	}
	return name, v, nil
}

func resolveName(s string, names map[string]string) (string, error) {
	if strings.HasPrefix(s, "#") {
		n, ok := names[s]
		if !ok {
			return "", validation("undefined expression attribute name " + s)
		}
		return n, nil
	}
	if s == "" || strings.ContainsAny(s, " ():,.[]") {
		return "", unsupported(s)
	}
	return s, nil
}

func resolveValue(s string, values map[string]types.AttributeValue) (types.AttributeValue, error) {
	if !strings.HasPrefix(s, ":") {
		return nil, unsupported(s)
	}
	v, ok := values[s]
	if !ok {
		return nil, validation("undefined expression attribute value " + s)
	}
	return v, nil
}

func unsupported(s string) error {
	return fmt.Errorf("memstore: expression %q is not supported by the in-memory table: %w", s, errors.ErrUnsupported)
}

// equal compares two attribute values as DynamoDB does (numbers by value).
func equal(a, b types.AttributeValue) bool {
	if an, ok := a.(*types.AttributeValueMemberN); ok {
		bn, ok := b.(*types.AttributeValueMemberN)
		return ok && canonicalNumber(an.Value) == canonicalNumber(bn.Value)
	}
	return reflect.DeepEqual(a, b)
}

func canonicalNumber(s string) string {
	f, ok := new(big.Float).SetPrec(200).SetString(s)
	if !ok {
		return s
	}
	return f.Text('g', -1)
}
