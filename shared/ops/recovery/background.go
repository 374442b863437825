package recovery

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Detach hands the job id to the sweeper: it marks the job detached and
// running (a cancelled or interrupted job so resumes) and flags its list
// entry, which [Jobs.Continue] looks for. A process running the job keeps
// it until its run ends. A done job is refused (ErrDone), a missing one is
// ErrNotFound. Detaching twice changes nothing.
func (js *Jobs) Detach(ctx context.Context, id string) (*Job, error) {
	now := js.cfg.Now()
	out, err := js.cfg.DB.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: &js.cfg.TableName, Key: jobKey(id),
		UpdateExpression:         aws.String("SET #detached = :true, #state = :running, #updatedAt = :now"),
		ConditionExpression:      aws.String("attribute_exists(pk) AND #state <> :done AND #expiresAt >= :nowSec"),
		ExpressionAttributeNames: map[string]string{"#detached": attrDetached, "#state": attrState, "#updatedAt": attrUpdatedAt, "#expiresAt": attrExpiresAt},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":true": &types.AttributeValueMemberBOOL{Value: true}, ":running": avS(string(StateRunning)),
			":done": avS(string(StateDone)), ":now": avN(now.UnixMilli()), ":nowSec": avN(now.Unix()),
		},
		ReturnValues: types.ReturnValueAllNew, ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	})
	if err != nil {
		j, err := js.refusal("detach", id, err)
		if err != nil {
			return nil, err
		}
		return j, fmt.Errorf("%w: %s", ErrDone, id)
	}
	j, err := fromItem(out.Attributes)
	if err != nil {
		return nil, fmt.Errorf("recovery: job %s: %w", id, err)
	}
	if err := js.flag(ctx, id, true); err != nil {
		return j, err
	}
	return j, nil
}

// ErrDone: the job is done, there is nothing left to run.
var ErrDone = errors.New("recovery: the job is done")

// Continue runs the detached jobs, oldest first, each from its cursor under
// its lease, until it is done or until comes (no record is started, and no
// token waited for, after it). The sweeper calls it on each of its runs,
// after its own work, with until its time budget for the jobs. A job that
// another process runs (its lease holds) is left to it; one the budget
// cut off stays running without a lease, for the next call; one whose run
// failed also stays running, with the error recorded. A job found done or
// cancelled leaves the list Continue reads. It returns how many jobs it ran
// and how many records they dealt with (replayed, skipped or missing); the
// error joins the failures.
func (js *Jobs) Continue(ctx context.Context, until time.Time) (jobs, records int, err error) {
	ids, err := js.detached(ctx)
	if err != nil {
		return 0, 0, err
	}
	var errs []error
	for _, id := range ids {
		if ctx.Err() != nil || !js.cfg.Now().Before(until) {
			break
		}
		j, dealt, err := js.runJob(ctx, id, nil, runMode{background: true, stopAt: until})
		if dealt >= 0 {
			jobs++
			records += dealt
		}
		switch {
		case errors.Is(err, ErrBusy):
			continue
		case errors.Is(err, ErrNotFound):
			j = nil
		case err != nil:
			errs = append(errs, fmt.Errorf("job %s: %w", id, err))
			continue
		}
		if j == nil || j.State == StateDone || j.State == StateCancelled || !j.Detached {
			if err := js.flag(ctx, id, false); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return jobs, records, errors.Join(errs...)
}

// detached lists the ids of the jobs whose list entry is flagged detached,
// oldest first. The list's entries are small (an id and a TTL): the Query
// reads the whole list, a few bytes a job.
func (js *Jobs) detached(ctx context.Context) ([]string, error) {
	in := &dynamodb.QueryInput{
		TableName: &js.cfg.TableName, KeyConditionExpression: aws.String("pk = :jobs"),
		FilterExpression:         aws.String("#detached = :true"),
		ExpressionAttributeNames: map[string]string{"#detached": attrDetached},
		ExpressionAttributeValues: map[string]types.AttributeValue{":jobs": avS(ListKey),
			":true": &types.AttributeValueMemberBOOL{Value: true}},
		ScanIndexForward: aws.Bool(true),
	}
	var ids []string
	for {
		out, err := js.cfg.DB.Query(ctx, in)
		if err != nil {
			return nil, fmt.Errorf("recovery: list the detached jobs: %w", err)
		}
		for _, it := range out.Items {
			if id := str(it[attrSK]); id != "" && !js.expired(it) {
				ids = append(ids, id)
			}
		}
		if len(out.LastEvaluatedKey) == 0 {
			return ids, nil
		}
		in.ExclusiveStartKey = out.LastEvaluatedKey
	}
}

// flag sets (on) or removes the detached flag of job id's list entry.
func (js *Jobs) flag(ctx context.Context, id string, on bool) error {
	in := &dynamodb.UpdateItemInput{
		TableName: &js.cfg.TableName,
		Key:       map[string]types.AttributeValue{attrPK: avS(ListKey), attrSK: avS(id)},
		// An entry that expired meanwhile is not brought back.
		ConditionExpression:      aws.String("attribute_exists(pk)"),
		UpdateExpression:         aws.String("REMOVE #detached"),
		ExpressionAttributeNames: map[string]string{"#detached": attrDetached},
	}
	if on {
		in.UpdateExpression = aws.String("SET #detached = :true")
		in.ExpressionAttributeValues = map[string]types.AttributeValue{":true": &types.AttributeValueMemberBOOL{Value: true}}
	}
	if _, err := js.cfg.DB.UpdateItem(ctx, in); err != nil {
		if _, ok := conditionFailed(err); ok {
			return nil
		}
		return fmt.Errorf("recovery: flag job %s detached=%t: %w", id, on, err)
	}
	return nil
}
