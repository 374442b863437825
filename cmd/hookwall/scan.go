package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	dbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/state/store"
)

// scanQuery selects records for a bounded Scan.
type scanQuery struct {
	statuses []webhook.Status
	since    time.Time // updatedAt at or after
	tenant   string    // "" for all
	limit    int       // the most records returned
	maxRead  int       // the most items read
	now      time.Time // for the TTL (expired records count as absent)
}

// scanResult is what a bounded Scan found.
type scanResult struct {
	records []*store.Record
	read    int  // items read (DynamoDB's ScannedCount)
	more    bool // the Scan stopped before the end of the table
}

// tableScan scans the events table for records of given statuses. Terminal
// records leave the sweep index, so a Scan is the only way to list them; it
// is bounded by the items it reads.
type tableScan struct {
	db   *dynamodb.Client
	name string
}

// listAttributes are the attributes a listing shows.
var listAttributes = []string{store.AttrPK, store.AttrStatus, store.AttrVersion, store.AttrProvider, store.AttrTenant,
	store.AttrEventType, store.AttrAttempts, store.AttrReceivedAt, store.AttrUpdatedAt, store.AttrExpiresAt, store.AttrLastError}

func (s *tableScan) scanStatus(ctx context.Context, q scanQuery) (scanResult, error) {
	names := map[string]string{"#sk": store.AttrSK, "#status": store.AttrStatus, "#updatedAt": store.AttrUpdatedAt}
	values := map[string]dbtypes.AttributeValue{
		":event": &dbtypes.AttributeValueMemberS{Value: store.SKEvent},
		":since": &dbtypes.AttributeValueMemberN{Value: strconv.FormatInt(q.since.UnixMilli(), 10)},
	}
	in := make([]string, len(q.statuses))
	for i, st := range q.statuses {
		in[i] = ":s" + strconv.Itoa(i)
		values[in[i]] = &dbtypes.AttributeValueMemberS{Value: string(st)}
	}
	filter := "#sk = :event AND #status IN (" + strings.Join(in, ", ") + ") AND #updatedAt >= :since"
	if q.tenant != "" {
		names["#tenant"] = store.AttrTenant
		values[":tenant"] = &dbtypes.AttributeValueMemberS{Value: q.tenant}
		filter += " AND #tenant = :tenant"
	}
	proj := make([]string, len(listAttributes))
	for i, a := range listAttributes {
		proj[i] = "#p" + strconv.Itoa(i)
		names[proj[i]] = a
	}
	input := &dynamodb.ScanInput{
		TableName: &s.name, FilterExpression: &filter, ProjectionExpression: aws.String(strings.Join(proj, ", ")),
		ExpressionAttributeNames: names, ExpressionAttributeValues: values,
	}
	var res scanResult
	for {
		input.Limit = aws.Int32(int32(min(1000, q.maxRead-res.read)))
		out, err := s.db.Scan(ctx, input)
		if err != nil {
			return res, fmt.Errorf("scan %s: %w", s.name, err)
		}
		res.read += int(out.ScannedCount)
		for _, item := range out.Items {
			var rec store.Record
			if err := attributevalue.UnmarshalMap(item, &rec); err != nil {
				return res, fmt.Errorf("scan %s: decode: %w", s.name, err)
			}
			if !rec.Expired(q.now) {
				res.records = append(res.records, &rec)
			}
		}
		if len(out.LastEvaluatedKey) == 0 {
			return res, nil
		}
		if len(res.records) >= q.limit || res.read >= q.maxRead {
			res.more = true
			return res, nil
		}
		input.ExclusiveStartKey = out.LastEvaluatedKey
	}
}
