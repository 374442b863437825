// Package stamp stamps the item format version ([format.AttrVersion]) and
// the release ([format.AttrRelease]) on every item Hookwall writes to
// DynamoDB, as an SDK middleware: every PutItem, UpdateItem,
// TransactWriteItems (its Put and Update parts) and BatchWriteItem (its puts)
// made by a client built with [Install] gains the two attributes, whichever
// package made the call. A put stamps the writer's version; an update
// stamps it only on an item without one (it never lowers a newer item's). The caller's input is not changed (a retried call
// stamps a fresh copy).
package stamp

import (
	"context"
	"fmt"
	"maps"
	"regexp"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"

	"github.com/hookwall/hookwall/shared/base/format"
	"github.com/hookwall/hookwall/shared/base/release"
)

// Placeholders the stamp adds to an update expression; no Hookwall writer
// uses names starting with "#hw" or ":hw".
const (
	nameVersion  = "#hwfv"
	nameRelease  = "#hwrel"
	valueVersion = ":hwfv"
	valueRelease = ":hwrel"
)

// Install is an aws.Config APIOptions entry adding the stamp to a client's
// stack; on clients other than DynamoDB's it stamps nothing.
func Install(stack *middleware.Stack) error {
	if err := stack.Initialize.Add(middleware.InitializeMiddlewareFunc("HookwallFormatStamp", handle), middleware.After); err != nil {
		return fmt.Errorf("stamp: add middleware: %w", err)
	}
	return nil
}

// DynamoDB is a dynamodb.Options function adding the stamp (for clients not
// built from an aws.Config that has [Install]).
func DynamoDB(o *dynamodb.Options) { o.APIOptions = append(o.APIOptions, Install) }

func handle(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
	in.Parameters = Input(in.Parameters)
	return next.HandleInitialize(ctx, in)
}

// Input returns a stamped copy of a DynamoDB write input, or params itself
// when it is no write.
func Input(params any) any {
	switch p := params.(type) {
	case *dynamodb.PutItemInput:
		c := *p
		c.Item = Item(p.Item)
		return &c
	case *dynamodb.UpdateItemInput:
		c := *p
		c.UpdateExpression, c.ExpressionAttributeNames, c.ExpressionAttributeValues = update(p.UpdateExpression, p.ExpressionAttributeNames, p.ExpressionAttributeValues)
		return &c
	case *dynamodb.TransactWriteItemsInput:
		c := *p
		c.TransactItems = make([]types.TransactWriteItem, len(p.TransactItems))
		for i, ti := range p.TransactItems {
			switch {
			case ti.Put != nil:
				put := *ti.Put
				put.Item = Item(put.Item)
				ti.Put = &put
			case ti.Update != nil:
				u := *ti.Update
				u.UpdateExpression, u.ExpressionAttributeNames, u.ExpressionAttributeValues = update(u.UpdateExpression, u.ExpressionAttributeNames, u.ExpressionAttributeValues)
				ti.Update = &u
			}
			c.TransactItems[i] = ti
		}
		return &c
	case *dynamodb.BatchWriteItemInput:
		c := *p
		c.RequestItems = make(map[string][]types.WriteRequest, len(p.RequestItems))
		for table, reqs := range p.RequestItems {
			out := make([]types.WriteRequest, len(reqs))
			for i, r := range reqs {
				if r.PutRequest != nil {
					r.PutRequest = &types.PutRequest{Item: Item(r.PutRequest.Item)}
				}
				out[i] = r
			}
			c.RequestItems[table] = out
		}
		return &c
	}
	return params
}

// Item returns a copy of item with the stamps.
func Item(item map[string]types.AttributeValue) map[string]types.AttributeValue {
	c := make(map[string]types.AttributeValue, len(item)+2)
	maps.Copy(c, item)
	c[format.AttrVersion] = versionValue()
	c[format.AttrRelease] = &types.AttributeValueMemberS{Value: release.Version}
	return c
}

func versionValue() types.AttributeValue {
	return &types.AttributeValueMemberN{Value: strconv.Itoa(format.Written(format.Item))}
}

// setClause finds an update expression's SET keyword (clauses are SET,
// REMOVE, ADD and DELETE, each at most once, in any order, any case).
var setClause = regexp.MustCompile(`(?i)(^|\s)SET\s`)

func update(expr *string, names map[string]string, values map[string]types.AttributeValue) (*string, map[string]string, map[string]types.AttributeValue) {
	if expr == nil {
		return expr, names, values // legacy AttributeUpdates: Hookwall writes none
	}
	// The version only where there is none: an update never changes an
	// item's format (older code must not mark a newer item as its own; code
	// that changes an item's shape writes it whole, or sets the version
	// itself). The release is the last writer's.
	setsVersion, setsRelease := false, false // a writer that sets a stamp itself (a claim writing a whole record) keeps its own
	for _, attr := range names {
		setsVersion = setsVersion || attr == format.AttrVersion
		setsRelease = setsRelease || attr == format.AttrRelease
	}
	var parts []string
	if !setsVersion {
		parts = append(parts, nameVersion+" = if_not_exists("+nameVersion+", "+valueVersion+")")
	}
	if !setsRelease {
		parts = append(parts, nameRelease+" = "+valueRelease)
	}
	if len(parts) == 0 {
		return expr, names, values
	}
	stamps := strings.Join(parts, ", ")
	var e string
	if loc := setClause.FindStringIndex(*expr); loc != nil {
		e = (*expr)[:loc[1]] + stamps + ", " + (*expr)[loc[1]:]
	} else {
		e = "SET " + stamps + " " + *expr
	}
	n := make(map[string]string, len(names)+2)
	maps.Copy(n, names)
	v := make(map[string]types.AttributeValue, len(values)+2)
	maps.Copy(v, values)
	if !setsVersion {
		n[nameVersion], v[valueVersion] = format.AttrVersion, versionValue()
	}
	if !setsRelease {
		n[nameRelease], v[valueRelease] = format.AttrRelease, &types.AttributeValueMemberS{Value: release.Version}
	}
	return &e, n, v
}
