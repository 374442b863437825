package recovery

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/hookwall/hookwall/shared/aws/bus"
	"github.com/hookwall/hookwall/shared/aws/queue"
	"github.com/hookwall/hookwall/shared/base/batch"
	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/state/store"
)

// UnknownTarget is the target whose tokens a record without a target
// attribute takes (one made before targets existed): all such records
// share its bucket.
const UnknownTarget = "unknown"

// finishTimeout bounds the write that ends a run after its context ended.
const finishTimeout = 10 * time.Second

// Run runs the job id from its cursor until the window is read (done),
// the job is cancelled, or ctx ends (interrupted, cursor saved), calling
// progress (optional) after each record and each save with a snapshot of
// the job. It returns the job as it left it: a done job is returned as is,
// ErrBusy when another process runs it, ErrNotFound when there is none.
// When ctx ends the error is ctx's; any other error leaves the job
// interrupted with the error recorded.
func (js *Jobs) Run(ctx context.Context, id string, progress func(Job)) (*Job, error) {
	j, _, err := js.runJob(ctx, id, progress, runMode{})
	return j, err
}

// runMode says who runs a job: an operator in the foreground (the zero
// value), or a sweep run in the background ([Jobs.Continue]).
type runMode struct {
	// background: the job must be detached and neither done nor
	// cancelled; the run ends with the job still running (its lease
	// released, the error, if any, recorded) unless it is done or was
	// cancelled.
	background bool
	// stopAt: no record is started, and no token waited for, after it
	// (zero: no limit).
	stopAt time.Time
}

// errBudget ends a run that reached its mode's stopAt.
var errBudget = errors.New("recovery: the run's time budget is spent")

// runJob runs the job id in mode m. It returns the job as it left it and
// how many records the run dealt with (-1: the job was not taken).
func (js *Jobs) runJob(ctx context.Context, id string, progress func(Job), m runMode) (*Job, int, error) {
	j, err := js.acquire(ctx, id, m.background)
	if err != nil || j.State != StateRunning {
		return j, -1, err
	}
	r := &run{js: js, job: j, progress: progress, next: map[string]time.Time{}, stopAt: m.stopAt}
	startDone := j.Counts.Done()
	err = r.run(ctx)
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), finishTimeout)
	defer cancel()
	r.send(fctx) // what has its tokens goes out, even after Ctrl-C
	dealt := j.Counts.Done() - startDone
	switch {
	case errors.Is(err, ErrLost):
		return j, dealt, err
	case err == nil && r.finished:
		j.State, j.FinishedAt = StateDone, js.cfg.Now()
		if ferr := js.finish(fctx, j, ""); ferr != nil {
			return j, dealt, ferr
		}
	case err == nil: // cancelled
		if ferr := js.finish(fctx, j, ""); ferr != nil {
			return j, dealt, ferr
		}
	default:
		reason := ""
		if ctx.Err() == nil && !errors.Is(err, errBudget) {
			reason = webhook.CleanText(err.Error(), 500)
		}
		if j.State == StateRunning && !m.background {
			j.State = StateInterrupted
		}
		j.LastError = reason
		if errors.Is(err, errBudget) {
			err = nil // the next sweep run goes on
		}
		if ferr := js.finish(fctx, j, reason); ferr != nil {
			return j, dealt, errors.Join(err, ferr)
		}
	}
	r.report()
	return j, dealt, err
}

// acquire takes the lease of job id: it must exist, not be done, and have
// no live lease of another process; in the background it must also be
// detached and not cancelled. A job it may not take for any but the lease
// is returned as is, with no error.
func (js *Jobs) acquire(ctx context.Context, id string, background bool) (*Job, error) {
	now := js.cfg.Now()
	cond := "attribute_exists(pk) AND #state <> :done AND #expiresAt >= :nowSec AND " +
		"(attribute_not_exists(#owner) OR #owner = :me OR #leaseUntil < :now)"
	names := map[string]string{"#state": attrState, "#owner": attrOwner, "#leaseUntil": attrLeaseUntil,
		"#updatedAt": attrUpdatedAt, "#expiresAt": attrExpiresAt, "#lastError": attrLastError}
	values := map[string]types.AttributeValue{
		":running": avS(string(StateRunning)), ":done": avS(string(StateDone)), ":me": avS(js.cfg.Owner),
		":until": avN(now.Add(js.cfg.Lease).UnixMilli()), ":now": avN(now.UnixMilli()), ":nowSec": avN(now.Unix()),
		":exp": avN(now.Add(js.cfg.Retain).Unix()),
	}
	if background {
		cond += " AND #detached = :true AND #state <> :cancelled"
		names["#detached"] = attrDetached
		values[":true"], values[":cancelled"] = &types.AttributeValueMemberBOOL{Value: true}, avS(string(StateCancelled))
	}
	out, err := js.cfg.DB.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: &js.cfg.TableName, Key: jobKey(id),
		UpdateExpression: aws.String("SET #state = :running, #owner = :me, #leaseUntil = :until, #updatedAt = :now, " +
			"#expiresAt = :exp REMOVE #lastError"),
		ConditionExpression: &cond, ExpressionAttributeNames: names, ExpressionAttributeValues: values,
		ReturnValues: types.ReturnValueAllNew, ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	})
	if err != nil {
		j, err := js.refusal("take", id, err)
		switch {
		case err != nil:
			return nil, err
		case j.State == StateDone, background && (j.State == StateCancelled || !j.Detached):
			return j, nil
		}
		return j, fmt.Errorf("%w: %s is run by %s until %s", ErrBusy, id, j.Owner, j.LeaseUntil.Format(time.RFC3339))
	}
	return fromItem(out.Attributes)
}

// save writes the job's counts and cursor and extends its lease, fenced on
// the lease; it learns whether the job was cancelled meanwhile (j.State).
func (js *Jobs) save(ctx context.Context, j *Job) error {
	now := js.cfg.Now()
	names, values, sets := progressValues(j)
	names["#owner"], names["#leaseUntil"], names["#updatedAt"], names["#expiresAt"] = attrOwner, attrLeaseUntil, attrUpdatedAt, attrExpiresAt
	values[":me"], values[":until"], values[":now"], values[":exp"] = avS(js.cfg.Owner), avN(now.Add(js.cfg.Lease).UnixMilli()),
		avN(now.UnixMilli()), avN(now.Add(js.cfg.Retain).Unix())
	sets = append(sets, "#leaseUntil = :until", "#updatedAt = :now", "#expiresAt = :exp")
	out, err := js.cfg.DB.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: &js.cfg.TableName, Key: jobKey(j.ID),
		UpdateExpression:    aws.String("SET " + strings.Join(sets, ", ")),
		ConditionExpression: aws.String("#owner = :me"), ExpressionAttributeNames: names, ExpressionAttributeValues: values,
		ReturnValues: types.ReturnValueAllNew,
	})
	if err != nil {
		if _, ok := conditionFailed(err); ok {
			return fmt.Errorf("%w: %s", ErrLost, j.ID)
		}
		return fmt.Errorf("recovery: save job %s: %w", j.ID, err)
	}
	saved, err := fromItem(out.Attributes)
	if err != nil {
		return fmt.Errorf("recovery: job %s: %w", j.ID, err)
	}
	j.State, j.UpdatedAt, j.LeaseUntil = saved.State, saved.UpdatedAt, saved.LeaseUntil
	return nil
}

// finish writes the job's counts, cursor and state and releases its lease.
// An interrupted run does not overwrite a cancel that came in meanwhile; a
// job left running (a background run that paused) keeps the state stored,
// which it learns.
func (js *Jobs) finish(ctx context.Context, j *Job, lastError string) error {
	now := js.cfg.Now()
	for _, keepState := range []bool{j.State == StateRunning, true} {
		names, values, sets := progressValues(j)
		names["#owner"], names["#leaseUntil"], names["#updatedAt"], names["#expiresAt"] =
			attrOwner, attrLeaseUntil, attrUpdatedAt, attrExpiresAt
		values[":me"], values[":now"], values[":exp"] = avS(js.cfg.Owner), avN(now.UnixMilli()), avN(now.Add(js.cfg.Retain).Unix())
		sets = append(sets, "#updatedAt = :now", "#expiresAt = :exp")
		cond := "#owner = :me"
		if !keepState {
			names["#state"] = attrState
			values[":state"] = avS(string(j.State))
			sets = append(sets, "#state = :state")
			if j.State == StateInterrupted {
				values[":running"] = avS(string(StateRunning))
				cond += " AND #state = :running"
			}
		}
		if j.State == StateDone {
			names["#finishedAt"] = attrFinishedAt
			values[":finished"] = avN(j.FinishedAt.UnixMilli())
			sets = append(sets, "#finishedAt = :finished")
		}
		if lastError != "" {
			names["#lastError"] = attrLastError
			values[":lastError"] = avS(lastError)
			sets = append(sets, "#lastError = :lastError")
		}
		out, err := js.cfg.DB.UpdateItem(ctx, &dynamodb.UpdateItemInput{
			TableName: &js.cfg.TableName, Key: jobKey(j.ID),
			UpdateExpression:    aws.String("SET " + strings.Join(sets, ", ") + " REMOVE #owner, #leaseUntil"),
			ConditionExpression: aws.String(cond), ExpressionAttributeNames: names, ExpressionAttributeValues: values,
			ReturnValues: types.ReturnValueAllNew,
		})
		if err == nil {
			j.Owner, j.LeaseUntil, j.UpdatedAt = "", time.Time{}, now
			if st, ok := out.Attributes[attrState].(*types.AttributeValueMemberS); ok {
				j.State = State(st.Value)
			}
			return nil
		}
		if _, ok := conditionFailed(err); !ok {
			return fmt.Errorf("recovery: end run of job %s: %w", j.ID, err)
		}
		if j.State != StateInterrupted || keepState {
			return fmt.Errorf("%w: %s", ErrLost, j.ID)
		}
		j.State = StateCancelled // a cancel came in after the last save
	}
	return nil
}

// progressValues are the SET clauses of a job's counts and cursor.
func progressValues(j *Job) (map[string]string, map[string]types.AttributeValue, []string) {
	names := map[string]string{}
	values := map[string]types.AttributeValue{}
	var sets []string
	num := func(attr string, v int) {
		names["#"+attr], values[":"+attr] = attr, avN(int64(v))
		sets = append(sets, "#"+attr+" = :"+attr)
	}
	c := j.Counts
	num(attrTotal, c.Total)
	num(attrScanned, c.Scanned)
	num(attrReplayed, c.Replayed)
	num(attrSkipped, c.Skipped)
	num(attrMissing, c.Missing)
	num(attrNotEnqueued, c.NotEnqueued)
	num(attrOpsFailed, c.OpsNotPublished)
	names["#counted"], values[":counted"] = attrCounted, &types.AttributeValueMemberBOOL{Value: c.Counted}
	sets = append(sets, "#counted = :counted")
	if j.Why != "" {
		names["#why"], values[":why"] = attrWhy, avS(j.Why)
		sets = append(sets, "#why = :why")
	}
	if j.Cursor != "" {
		names["#cursorPK"], names["#cursorSK"] = attrCursorPK, attrCursorSK
		values[":cursorPK"], values[":cursorSK"] = avS(j.Cursor), avS(j.cursorSK)
		sets = append(sets, "#cursorPK = :cursorPK", "#cursorSK = :cursorSK")
	}
	return names, values, sets
}

// run is one run of a job.
type run struct {
	js       *Jobs
	job      *Job
	progress func(Job)
	finished bool // the window was read to its end
	lastSave time.Time
	pending  []pendingReplay
	tokens   map[string]int       // tokens taken from the limiter, not used yet (this page)
	next     map[string]time.Time // when the job's own rate lets each target's next replay go
	stopAt   time.Time            // no record is started after it (zero: none)
}

// spent reports whether the run's time budget is spent.
func (r *run) spent() bool {
	return !r.stopAt.IsZero() && !r.js.cfg.Now().Before(r.stopAt)
}

// pendingReplay is a replayed record not enqueued yet.
type pendingReplay struct {
	env    webhook.Envelope
	target string
}

// candidate is a record a page selected.
type candidate struct {
	key, sk, target string
}

func (r *run) report() {
	if r.progress != nil {
		r.progress(*r.job)
	}
}

func (r *run) run(ctx context.Context) error {
	r.lastSave = r.js.cfg.Now()
	if !r.job.Counts.Counted {
		if err := r.count(ctx); err != nil || r.job.State == StateCancelled {
			return err
		}
	}
	var start map[string]types.AttributeValue
	if r.job.Cursor != "" {
		start = map[string]types.AttributeValue{attrPK: avS(r.job.Cursor), attrSK: avS(r.job.cursorSK)}
	}
	for {
		if r.spent() {
			return errBudget
		}
		in := r.scanInput(false)
		in.ExclusiveStartKey = start
		out, err := r.js.cfg.DB.Scan(ctx, in)
		if err != nil {
			return fmt.Errorf("recovery: scan %s: %w", r.js.cfg.TableName, err)
		}
		r.job.Counts.Scanned += int(out.ScannedCount)
		page := make([]candidate, 0, len(out.Items))
		for _, it := range out.Items {
			page = append(page, candidate{key: str(it[attrPK]), sk: str(it[attrSK]), target: str(it[store.AttrTarget])})
		}
		r.tokens = map[string]int{}
		for i, c := range page {
			if err := r.recover(ctx, page[i:], c); errors.Is(err, errCancelled) {
				return r.flush(ctx)
			} else if err != nil {
				return err
			}
			if r.job.State == StateCancelled {
				return r.flush(ctx)
			}
		}
		if len(out.LastEvaluatedKey) == 0 {
			r.finished = true
		} else {
			start = out.LastEvaluatedKey
			r.job.Cursor, r.job.cursorSK = str(start[attrPK]), str(start[attrSK])
		}
		if err := r.flush(ctx); err != nil || r.finished || r.job.State == StateCancelled {
			return err
		}
	}
}

// count counts what the filter selects, saving (and so learning of a
// cancel) at least once a second.
func (r *run) count(ctx context.Context) error {
	r.job.Counts.Total = 0
	in := r.scanInput(true)
	for {
		out, err := r.js.cfg.DB.Scan(ctx, in)
		if err != nil {
			return fmt.Errorf("recovery: count in %s: %w", r.js.cfg.TableName, err)
		}
		r.job.Counts.Total += int(out.Count)
		if len(out.LastEvaluatedKey) == 0 {
			if r.job.Counts.Total == 0 {
				why, err := r.explain(ctx)
				if err != nil {
					return err
				}
				r.job.Why = why
			}
			r.job.Counts.Counted = true
			return r.save(ctx)
		}
		in.ExclusiveStartKey = out.LastEvaluatedKey
		if r.js.cfg.Now().Sub(r.lastSave) >= saveEvery {
			if err := r.save(ctx); err != nil || r.job.State == StateCancelled {
				return err
			}
		}
	}
}

func (r *run) save(ctx context.Context) error {
	r.lastSave = r.js.cfg.Now()
	err := r.js.save(ctx, r.job)
	r.report()
	return err
}

// maxWhyTargets is how many of the targets seen [run.explain] names.
const maxWhyTargets = 5

// explain says why the job's filter selected nothing. Without a handler,
// the window and states (and tenant) hold no record. With one, it reads
// the window again without the handler's condition (one more Scan, only
// for a job that selected nothing) and says how many records it holds,
// the targets they were bound for, and how many carry no target.
func (r *run) explain(ctx context.Context) (string, error) {
	f := r.job.Filter
	what := joinStatuses(f.Statuses) + " record"
	where := "in the window"
	if f.Tenant != "" {
		where += " of tenant " + f.Tenant
	}
	if f.Handler == "" {
		return "no " + what + " was received " + where, nil
	}
	f.Handler = ""
	in := scanFor(r.js.cfg.TableName, f, false, max(r.js.cfg.PageSize, 1000))
	total, untargeted := 0, 0
	targets := map[string]int{}
	for {
		out, err := r.js.cfg.DB.Scan(ctx, in)
		if err != nil {
			return "", fmt.Errorf("recovery: explain an empty selection in %s: %w", r.js.cfg.TableName, err)
		}
		for _, it := range out.Items {
			total++
			if t := str(it[store.AttrTarget]); t != "" {
				targets[t]++
			} else {
				untargeted++
			}
		}
		if len(out.LastEvaluatedKey) == 0 {
			break
		}
		in.ExclusiveStartKey = out.LastEvaluatedKey
	}
	if total == 0 {
		return "no " + what + " was received " + where + ", whatever its target", nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "0 of the %d %ss %s had target %s or %s/…", total, what, where, r.job.Filter.Handler, r.job.Filter.Handler)
	if len(targets) > 0 {
		names := slices.SortedFunc(maps.Keys(targets), func(a, b string) int {
			return cmp.Or(cmp.Compare(targets[b], targets[a]), cmp.Compare(a, b))
		})
		b.WriteString("; their targets: ")
		for i, name := range names[:min(len(names), maxWhyTargets)] {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "%s (%d)", name, targets[name])
		}
		if len(names) > maxWhyTargets {
			fmt.Fprintf(&b, " and %d more", len(names)-maxWhyTargets)
		}
	}
	if untargeted > 0 {
		fmt.Fprintf(&b, "; %d carry no target (records whose attempts settled before every attempt recorded its "+
			"target carry one only if they were held): select them by the window and the tenant, without the handler", untargeted)
	}
	return b.String(), nil
}

// joinStatuses is "FAILED", "FAILED or DEAD", ...
func joinStatuses(ss []webhook.Status) string {
	names := make([]string, len(ss))
	for i, s := range ss {
		names[i] = string(s)
	}
	return strings.Join(names, " or ")
}

// scanInput is the Scan of the job's filter: its records (sk EVENT), in
// its states and window, of its tenant and handler; only their count with
// count.
func (r *run) scanInput(count bool) *dynamodb.ScanInput {
	limit := r.js.cfg.PageSize
	if count {
		limit = max(r.js.cfg.PageSize, 1000) // a count holds nothing: read more a page
	}
	return scanFor(r.js.cfg.TableName, r.job.Filter, count, limit)
}

// scanFor is the Scan of filter f in table, limit items a page: only the
// count with count, else each record's pk, sk and target.
func scanFor(table string, f Filter, count bool, limit int32) *dynamodb.ScanInput {
	names := map[string]string{"#sk": attrSK, "#status": store.AttrStatus, "#receivedAt": store.AttrReceivedAt}
	values := map[string]types.AttributeValue{":event": avS(store.SKEvent), ":since": avN(f.Since.UnixMilli()), ":until": avN(f.Until.UnixMilli())}
	in := make([]string, len(f.Statuses))
	for i, s := range f.Statuses {
		in[i] = ":s" + strconv.Itoa(i)
		values[in[i]] = avS(string(s))
	}
	filter := "#sk = :event AND #status IN (" + strings.Join(in, ", ") + ") AND #receivedAt >= :since AND #receivedAt < :until"
	if f.Tenant != "" {
		names["#tenant"], values[":tenant"] = store.AttrTenant, avS(f.Tenant)
		filter += " AND #tenant = :tenant"
	}
	if f.Handler != "" {
		names["#target"], values[":handler"], values[":handlerSlash"] = store.AttrTarget, avS(f.Handler), avS(f.Handler+"/")
		filter += " AND (#target = :handler OR begins_with(#target, :handlerSlash))"
	}
	input := &dynamodb.ScanInput{TableName: &table, FilterExpression: &filter,
		ExpressionAttributeNames: names, ExpressionAttributeValues: values, Limit: aws.Int32(limit)}
	if count {
		input.Select = types.SelectCount
	} else {
		names["#pk"], names["#target"] = attrPK, store.AttrTarget
		input.ProjectionExpression = aws.String("#pk, #sk, #target")
	}
	return input
}

func str(av types.AttributeValue) string {
	if s, ok := av.(*types.AttributeValueMemberS); ok {
		return s.Value
	}
	return ""
}

// recover replays the first of rest (the page's candidates still to do)
// once its target gives a token, and adds it to the pending batch. The
// cursor moves past it once its replay is written: a record replayed but
// not enqueued (a crash, Ctrl-C) is RECEIVED, and the sweeper enqueues it.
// A token taken for a record that is skipped (it moved on since the page
// was read) is not given back.
func (r *run) recover(ctx context.Context, rest []candidate, c candidate) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if r.spent() {
		return errBudget
	}
	target := c.target
	if target == "" {
		target = UnknownTarget
	}
	want := 0
	for _, o := range rest {
		if o.target == c.target {
			want++
		}
	}
	if err := r.token(ctx, target, want); err != nil {
		return err
	}
	res, err := r.js.cfg.Store.Replay(ctx, c.key, store.ReplayOptions{From: r.job.Filter.Statuses, Window: r.js.cfg.Window})
	if err != nil {
		return fmt.Errorf("recovery: %w", err)
	}
	r.job.Cursor, r.job.cursorSK = c.key, c.sk
	switch res.Outcome {
	case store.Replayed:
		r.job.Counts.Replayed++
		r.pending = append(r.pending, pendingReplay{env: res.Record.Envelope(), target: target})
	case store.ReplayRefused:
		r.job.Counts.Skipped++
	default:
		r.job.Counts.Missing++
	}
	r.report()
	if len(r.pending) >= queue.MaxBatch || r.js.cfg.Now().Sub(r.lastSave) >= saveEvery {
		return r.flush(ctx)
	}
	return nil
}

// flush enqueues the pending replays and saves the job.
func (r *run) flush(ctx context.Context) error {
	r.send(ctx)
	return r.save(ctx)
}

// send enqueues the pending replays and publishes their recovered events.
// What SQS does not take is counted NotEnqueued (the records are RECEIVED,
// and the sweeper enqueues them).
func (r *run) send(ctx context.Context) {
	if len(r.pending) == 0 {
		return
	}
	envs := make([]webhook.Envelope, len(r.pending))
	for i, p := range r.pending {
		envs[i] = p.env
	}
	failed := queue.NotSent(r.js.cfg.Queue.Send(ctx, envs), len(envs))
	now := r.js.cfg.Now()
	var ops []bus.Op
	for i, p := range r.pending {
		if failed[i] {
			r.job.Counts.NotEnqueued++
			continue
		}
		ops = append(ops, bus.Op{Type: bus.DetailTypeEventRecovered, Target: p.target, Key: p.env.Key,
			Provider: p.env.Provider, Tenant: p.env.Tenant, Reason: "recovery job " + r.job.ID, At: now})
	}
	r.pending = r.pending[:0]
	if r.js.cfg.Ops != nil && len(ops) > 0 {
		if err := r.js.cfg.Ops.PublishOps(ctx, ops); err != nil {
			r.job.Counts.OpsNotPublished += len(ops)
		}
	}
}

// token waits until target may take one more call: a token of the
// limiter (taking up to want at once for the page's records of target)
// and the job's own rate. Pending replays are flushed before any wait, so
// that none waits for another target's token.
func (r *run) token(ctx context.Context, target string, want int) error {
	if l := r.js.cfg.Limiter; l != nil && r.tokens[target] == 0 {
		for {
			granted, next, err := l.Take(ctx, target, max(want, 1))
			if err != nil {
				return fmt.Errorf("recovery: take a token of %s: %w", target, err)
			}
			if granted > 0 {
				r.tokens[target] += granted
				break
			}
			if err := r.wait(ctx, next); err != nil {
				return err
			}
		}
	}
	if r.js.cfg.Limiter != nil {
		r.tokens[target]--
	}
	if rate := r.job.Rate; rate > 0 {
		now := r.js.cfg.Now()
		at := r.next[target]
		if at.After(now) {
			if err := r.wait(ctx, at); err != nil {
				return err
			}
		} else {
			at = now
		}
		r.next[target] = at.Add(time.Duration(float64(time.Second) / rate))
	}
	return nil
}

// minWait is the shortest pause between two tries for a token.
const minWait = 5 * time.Millisecond

// wait flushes what is pending, then sleeps until at (at least minWait)
// or ctx ends; errBudget at once when at is past the run's stopAt.
func (r *run) wait(ctx context.Context, at time.Time) error {
	if !r.stopAt.IsZero() && at.After(r.stopAt) {
		return errBudget
	}
	left := max(at.Sub(r.js.cfg.Now()), minWait)
	for {
		if len(r.pending) > 0 || r.js.cfg.Now().Sub(r.lastSave) >= saveEvery {
			if err := r.flush(ctx); err != nil {
				return err
			}
			if r.job.State == StateCancelled {
				return errCancelled
			}
		}
		// A long wait (a low rate) saves, and so learns of a cancel, at
		// least once a second: a cancelled job replays nothing after it.
		step := min(left, saveEvery)
		if err := batch.Sleep(ctx, step); err != nil {
			return err
		}
		if left -= step; left <= 0 {
			return nil
		}
	}
}

// errCancelled ends a wait that learned the job was cancelled.
var errCancelled = errors.New("recovery: the job was cancelled")
