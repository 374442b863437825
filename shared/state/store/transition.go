package store

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// UpdateItemAPI is the part of the DynamoDB client [ApplyTransition] uses;
// *dynamodb.Client satisfies it.
type UpdateItemAPI interface {
	UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error)
}

// Transition is a conditional state change of an item in a business team's
// own table: "UPDATE … SET status = To WHERE status IN From", with the
// affected-rows check done for you.
type Transition struct {
	// Table is the table name (required).
	Table string
	// Key is the item's primary key (required).
	Key map[string]types.AttributeValue
	// Attribute is the state attribute (optional; default "status").
	Attribute string
	// From lists the states the item may be in (required, at least one).
	From []string
	// To is the target state (required).
	To string
	// Set holds further attributes to set when the transition applies
	// (optional; attribute names are used verbatim, escaped for you).
	Set map[string]types.AttributeValue
}

// TransitionOutcome is what [ApplyTransition] did.
type TransitionOutcome int

// Transition outcomes. A lost race is one of these, never an error.
const (
	// TransitionApplied: the item was in a From state and is now in To.
	TransitionApplied TransitionOutcome = iota + 1
	// TransitionAlreadyInTarget: the item already was in To (a retry of an
	// applied transition, or another worker's): nothing was written.
	TransitionAlreadyInTarget
	// TransitionConflict: the item is in another state: nothing was written.
	TransitionConflict
	// TransitionNotFound: there is no such item: nothing was written.
	TransitionNotFound
)

// String returns the outcome's name.
func (o TransitionOutcome) String() string {
	return outcomeName(o, "applied", "already-in-target", "conflict", "not-found")
}

// TransitionResult is the result of [ApplyTransition].
type TransitionResult struct {
	// Outcome says what happened.
	Outcome TransitionOutcome
	// Item is the item after the transition (Applied) or as it was found
	// (AlreadyInTarget, Conflict); nil for NotFound.
	Item map[string]types.AttributeValue
	// State is the item's state after the transition or as found.
	State string
}

// ApplyTransition moves the item to tr.To if it is in one of tr.From, with
// one conditional UpdateItem (ReturnValuesOnConditionCheckFailure=ALL_OLD, so
// a failed condition tells what the item is in, at no extra read).
func ApplyTransition(ctx context.Context, db UpdateItemAPI, tr Transition) (TransitionResult, error) {
	if tr.Table == "" || len(tr.Key) == 0 || len(tr.From) == 0 || tr.To == "" {
		return TransitionResult{}, errors.New("store: transition: table, key, from and to are required")
	}
	attr := tr.Attribute
	if attr == "" {
		attr = AttrStatus
	}
	names := map[string]string{"#st": attr}
	values := map[string]types.AttributeValue{":to": avString(tr.To)}
	from := make([]string, len(tr.From))
	for i, f := range tr.From {
		p := ":f" + strconv.Itoa(i)
		values[p] = avString(f)
		from[i] = p
	}
	sets := []string{"#st = :to"}
	for i, name := range slices.Sorted(maps.Keys(tr.Set)) {
		n, v := "#a"+strconv.Itoa(i), ":a"+strconv.Itoa(i)
		names[n], values[v] = name, tr.Set[name]
		sets = append(sets, n+" = "+v)
	}
	// attribute_exists on a key attribute makes a missing item fail the condition.
	var keyAttr string
	for k := range tr.Key {
		keyAttr = k
		break
	}
	names["#k"] = keyAttr
	out, err := db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                           &tr.Table,
		Key:                                 tr.Key,
		UpdateExpression:                    aws.String("SET " + strings.Join(sets, ", ")),
		ConditionExpression:                 aws.String("attribute_exists(#k) AND #st IN (" + strings.Join(from, ", ") + ")"),
		ExpressionAttributeNames:            names,
		ExpressionAttributeValues:           values,
		ReturnValues:                        types.ReturnValueAllNew,
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	})
	if err == nil {
		return TransitionResult{Outcome: TransitionApplied, Item: out.Attributes, State: tr.To}, nil
	}
	old, ok := conditionFailed(err)
	if !ok {
		return TransitionResult{}, fmt.Errorf("store: transition %s to %s: %w", tr.Table, tr.To, err)
	}
	if len(old) == 0 {
		return TransitionResult{Outcome: TransitionNotFound}, nil
	}
	var state string
	if av, ok := old[attr]; ok {
		_ = attributevalue.Unmarshal(av, &state) // a non-string state is a conflict with state ""
	}
	if state == tr.To {
		return TransitionResult{Outcome: TransitionAlreadyInTarget, Item: old, State: state}, nil
	}
	return TransitionResult{Outcome: TransitionConflict, Item: old, State: state}, nil
}
