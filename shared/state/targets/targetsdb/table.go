package targetsdb

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/hookwall/hookwall/shared/state/targets"
	"github.com/hookwall/hookwall/shared/state/targets/internal/breaker"
)

// Table is the [targets.Gate] kept in the events table, shared by every instance
// over the same table through conditional writes. Each Table is one
// instance: it caches what it read (breakers for [targets.BreakerCacheFor], pauses
// for [targets.PauseCacheFor]), one entry per target it has seen. It is safe for
// concurrent use.
type Table struct {
	db   *dynamodb.Client
	name string
	cfg  targets.Config
	p    breaker.Params

	breakers perTarget[breaker.State]
	buckets  perTarget[breaker.Bucket]

	mu     sync.Mutex // guards pauses
	pauses pauseCache
}

var (
	_ targets.Gate   = (*Table)(nil)
	_ targets.Prober = (*Table)(nil)
)

// cached is a value read (or written) at at.
type cached[T any] struct {
	v  T
	at time.Time
}

// perTarget is the instance's copy of one item per target (its breakers,
// its buckets), safe for concurrent use.
type perTarget[T any] struct {
	mu sync.Mutex
	m  map[string]cached[T]
}

// get returns target's copy, if any.
func (p *perTarget[T]) get(target string) (cached[T], bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	c, ok := p.m[target]
	return c, ok
}

// put keeps v as target's copy, read or written at at, and returns v.
func (p *perTarget[T]) put(target string, v T, at time.Time) T {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.m == nil {
		p.m = map[string]cached[T]{}
	}
	p.m[target] = cached[T]{v, at}
	return v
}

// drop forgets target's copy.
func (p *perTarget[T]) drop(target string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.m, target)
}

// readTarget reads target's item sk (a strongly consistent GetItem, what
// naming it in errors), decodes it and keeps it in p as read when the read
// began.
func readTarget[T any](ctx context.Context, t *Table, p *perTarget[T], target, sk, what string,
	decode func(map[string]types.AttributeValue) T) (T, error) {
	at := t.cfg.Now()
	out, err := t.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: &t.name, Key: targetKey(target, sk), ConsistentRead: aws.Bool(true)})
	if err != nil {
		var zero T
		return zero, fmt.Errorf("targets: read %s %s: %w", what, target, err)
	}
	return p.put(target, decode(out.Item), at), nil
}

// TableConfig configures a Table.
type TableConfig struct {
	// Client is the DynamoDB client (required).
	Client *dynamodb.Client
	// TableName is the events table (required).
	TableName string
	// Config is the breakers' and buckets' behaviour.
	Config targets.Config
}

// Item keys and attributes of the targets' items in the events table.
const (
	attrPK          = "pk"
	attrSK          = "sk"
	pkTargetPrefix  = "TARGET#"
	pkControl       = "CONTROL"
	skBreaker       = "BREAKER"
	skBucket        = "BUCKET"
	skPausePrefix   = "PAUSE#"
	skTargetPrefix  = "TARGET#"
	attrState       = "state"
	attrWindowStart = "windowStart"
	attrCalls       = "calls"
	attrFails       = "fails"
	attrOks         = "oks"
	attrLastCallAt  = "lastCallAt"
	attrOpenedAt    = "openedAt"
	attrProbeAt     = "probeAt"
	attrProbeOwner  = "probeOwner"
	attrVersion     = "version"
	attrTarget      = "target"
	attrTokens      = "milliTokens"
	attrUpdatedAt   = "updatedAt"
	attrRate        = "rate"
	attrKind        = "kind"
	attrName        = "name"
	attrBy          = "by"
	attrAt          = "at"
	attrReason      = "reason"
)

// maxConflicts bounds the conditional writes one call retries after losing
// a race to another instance.
const maxConflicts = 64

// New returns the Table described by cfg.
func New(cfg TableConfig) (*Table, error) {
	if cfg.Client == nil {
		return nil, errors.New("targets: nil DynamoDB client")
	}
	if cfg.TableName == "" {
		return nil, errors.New("targets: empty table name")
	}
	c, err := cfg.Config.WithDefaults()
	if err != nil {
		return nil, err
	}
	return &Table{db: cfg.Client, name: cfg.TableName, cfg: c, p: c.BreakerParams()}, nil
}

func s(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
func n(v int64) types.AttributeValue {
	return &types.AttributeValueMemberN{Value: strconv.FormatInt(v, 10)}
}

func targetKey(target, sk string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{attrPK: s(pkTargetPrefix + target), attrSK: s(sk)}
}

func num(item map[string]types.AttributeValue, name string) int64 {
	if v, ok := item[name].(*types.AttributeValueMemberN); ok {
		i, _ := strconv.ParseInt(v.Value, 10, 64)
		return i
	}
	return 0
}

func str(item map[string]types.AttributeValue, name string) string {
	if v, ok := item[name].(*types.AttributeValueMemberS); ok {
		return v.Value
	}
	return ""
}

func decodeState(item map[string]types.AttributeValue) breaker.State {
	if len(item) == 0 {
		return breaker.State{}
	}
	return breaker.State{
		Exists: true, Open: str(item, attrState) == targets.StateOpen,
		WindowStart: num(item, attrWindowStart), Calls: num(item, attrCalls), Fails: num(item, attrFails), Oks: num(item, attrOks),
		LastCallAt: num(item, attrLastCallAt), OpenedAt: num(item, attrOpenedAt), ProbeAt: num(item, attrProbeAt),
		ProbeOwner: str(item, attrProbeOwner), Version: num(item, attrVersion),
	}
}

// conditionFailed returns the item a failed condition returned (ALL_OLD)
// and true when err is a failed condition.
func conditionFailed(err error) (map[string]types.AttributeValue, bool) {
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		return ccf.Item, true
	}
	return nil, false
}

// readBreaker reads target's breaker (a strongly consistent GetItem).
func (t *Table) readBreaker(ctx context.Context, target string) (breaker.State, error) {
	return readTarget(ctx, t, &t.breakers, target, skBreaker, "breaker", decodeState)
}

// breakerState returns target's breaker as cached if read at most
// BreakerCacheFor ago, else as read now (fresh).
func (t *Table) breakerState(ctx context.Context, target string, now time.Time) (st breaker.State, fresh bool, err error) {
	c, ok := t.breakers.get(target)
	if ok && now.Sub(c.at) <= targets.BreakerCacheFor && !now.Before(c.at) {
		return c.v, false, nil
	}
	st, err = t.readBreaker(ctx, target)
	return st, true, err
}

// update is one conditional UpdateItem of target's breaker returning the
// item after it (ok) or, when the condition failed, before it (!ok).
func (t *Table) update(ctx context.Context, target, what, expr, cond string, names map[string]string,
	values map[string]types.AttributeValue) (after breaker.State, ok bool, err error) {
	at := t.cfg.Now()
	in := &dynamodb.UpdateItemInput{
		TableName: &t.name, Key: targetKey(target, skBreaker),
		UpdateExpression: &expr, ExpressionAttributeNames: names, ExpressionAttributeValues: values,
		ReturnValues:                        types.ReturnValueAllNew,
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	}
	if cond != "" {
		in.ConditionExpression = &cond
	}
	out, err := t.db.UpdateItem(ctx, in)
	if item, failed := conditionFailed(err); failed {
		return t.breakers.put(target, decodeState(item), at), false, nil
	}
	if err != nil {
		return breaker.State{}, false, fmt.Errorf("targets: %s %s: %w", what, target, err)
	}
	return t.breakers.put(target, decodeState(out.Attributes), at), true, nil
}

// names of every breaker attribute, for the expressions.
var breakerNames = map[string]string{
	"#st": attrState, "#ws": attrWindowStart, "#calls": attrCalls, "#fails": attrFails, "#oks": attrOks,
	"#last": attrLastCallAt, "#opened": attrOpenedAt, "#probe": attrProbeAt, "#owner": attrProbeOwner,
	"#ver": attrVersion, "#target": attrTarget,
}

// pick returns the entries of breakerNames the expressions use.
func pick(keys ...string) map[string]string {
	m := make(map[string]string, len(keys))
	for _, k := range keys {
		m[k] = breakerNames[k]
	}
	return m
}

// roll starts a new window at now holding one reserved call, if s is still
// the state.
func (t *Table) roll(ctx context.Context, target string, st breaker.State, now int64) (breaker.State, bool, error) {
	cond := "attribute_not_exists(#ver)"
	values := map[string]types.AttributeValue{":closed": s(targets.StateClosed), ":now": n(now), ":one": n(1), ":zero": n(0), ":t": s(target)}
	if st.Exists {
		cond = "#ver = :v"
		values[":v"] = n(st.Version)
	}
	return t.update(ctx, target, "roll window", "SET #st = :closed, #ws = :now, #calls = :one, #fails = :zero, #oks = :zero, "+
		"#last = :now, #target = :t, #ver = if_not_exists(#ver, :zero) + :one", cond,
		pick("#st", "#ws", "#calls", "#fails", "#oks", "#last", "#target", "#ver"), values)
}

// reserve counts one more call in the window of st, if its calls are
// still st's (outcomes reported meanwhile do not matter: a success only
// helps, a failure that opens it changes the state).
func (t *Table) reserve(ctx context.Context, target string, st breaker.State, now int64) (breaker.State, bool, error) {
	return t.update(ctx, target, "reserve call", "SET #last = :now ADD #calls :one, #ver :one",
		"#st = :closed AND #ws = :ws AND #calls = :calls", pick("#st", "#ws", "#calls", "#last", "#ver"),
		map[string]types.AttributeValue{":closed": s(targets.StateClosed), ":ws": n(st.WindowStart), ":calls": n(st.Calls), ":now": n(now), ":one": n(1)})
}

// probe takes the probe slot of the interval for owner, if no one took it.
func (t *Table) probe(ctx context.Context, target string, st breaker.State, now int64, owner string) (breaker.State, bool, error) {
	return t.update(ctx, target, "take probe", "SET #probe = :next, #owner = :owner ADD #ver :one",
		"#st = :open AND #probe = :old", pick("#st", "#probe", "#owner", "#ver"),
		map[string]types.AttributeValue{":open": s(targets.StateOpen), ":old": n(st.ProbeAt), ":next": n(now + t.p.ProbeMs),
			":owner": s(owner), ":one": n(1)})
}

// ProbeNow implements [targets.Prober]: an open breaker whose next probe is later
// than now has it moved to now (a conditional write on the version read),
// so that the next admission takes the probe slot. It reports whether the
// breaker is open (a closed or unknown one is left alone).
func (t *Table) ProbeNow(ctx context.Context, target string) (bool, error) {
	for range maxConflicts {
		st, err := t.readBreaker(ctx, target)
		if err != nil || !st.Open {
			return false, err
		}
		ms := t.cfg.Now().UnixMilli()
		if st.ProbeAt <= ms {
			return true, nil
		}
		_, ok, err := t.update(ctx, target, "probe now", "SET #probe = :now ADD #ver :one", "#st = :open AND #ver = :v",
			pick("#st", "#probe", "#ver"), map[string]types.AttributeValue{":open": s(targets.StateOpen), ":now": n(ms), ":v": n(st.Version), ":one": n(1)})
		if err != nil || ok {
			return err == nil, err
		}
	}
	return false, fmt.Errorf("targets: probe %s now: lost %d races in a row", target, maxConflicts)
}

// registerTarget adds target to the list Breakers reads (idempotent).
func (t *Table) registerTarget(ctx context.Context, target string) error {
	_, err := t.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: &t.name, Item: map[string]types.AttributeValue{
		attrPK: s(pkControl), attrSK: s(skTargetPrefix + target), attrTarget: s(target),
	}})
	if err != nil {
		return fmt.Errorf("targets: register %s: %w", target, err)
	}
	return nil
}

// Admit implements [targets.Gate.Admit].
func (t *Table) Admit(ctx context.Context, sub targets.Subject) (targets.Admission, error) {
	now := t.cfg.Now()
	sc, paused, err := t.covered(ctx, sub, now)
	if err != nil {
		return targets.Admission{}, err
	}
	if paused {
		return targets.HoldPaused(sc, now), nil
	}
	if sub.Target == "" {
		return targets.Admission{Verdict: targets.Allow}, nil
	}
	st, fresh, err := t.breakerState(ctx, sub.Target, now)
	if err != nil {
		return targets.Admission{}, err
	}
	for conflicts, polls := 0, 0; conflicts < maxConflicts; {
		now = t.cfg.Now()
		ms := now.UnixMilli()
		d := t.p.Admit(st, ms)
		if !fresh && d != breaker.Free && d != breaker.Hold {
			// A write decided on a cached state would likely lose its
			// condition (a unit spent); a read costs less than a write.
			if st, err = t.readBreaker(ctx, sub.Target); err != nil {
				return targets.Admission{}, err
			}
			fresh = true
			continue
		}
		var ok bool
		switch d {
		case breaker.Free:
			return targets.Admission{Verdict: targets.Allow, Token: breaker.FreeToken}, nil
		case breaker.Hold:
			return targets.HoldOpen(sub.Target, time.UnixMilli(st.ProbeAt)), nil
		case breaker.Wait:
			if time.Duration(polls)*targets.PollEvery >= t.cfg.Wait {
				return targets.HoldDeciding(sub.Target, now, t.cfg.Wait), nil
			}
			polls++
			if err := targets.Poll(ctx); err != nil {
				return targets.Admission{}, err
			}
			if st, err = t.readBreaker(ctx, sub.Target); err != nil {
				return targets.Admission{}, err
			}
			continue
		case breaker.Roll:
			if !st.Exists {
				if err := t.registerTarget(ctx, sub.Target); err != nil {
					return targets.Admission{}, err
				}
			}
			if st, ok, err = t.roll(ctx, sub.Target, st, ms); ok {
				return targets.Admission{Verdict: targets.Allow, Token: breaker.ReservedToken(st.WindowStart)}, nil
			}
		case breaker.Reserve:
			if st, ok, err = t.reserve(ctx, sub.Target, st, ms); ok {
				return targets.Admission{Verdict: targets.Allow, Token: breaker.ReservedToken(st.WindowStart)}, nil
			}
		case breaker.TryProbe:
			owner := targets.NewProbeOwner()
			if st, ok, err = t.probe(ctx, sub.Target, st, ms, owner); ok {
				return targets.Admission{Verdict: targets.Probe, Token: breaker.ProbeToken(owner)}, nil
			}
		}
		if err != nil {
			return targets.Admission{}, err
		}
		conflicts++
	}
	return targets.Admission{}, fmt.Errorf("targets: admit %s: lost %d races in a row", sub.Target, maxConflicts)
}

// Report implements [targets.Gate.Report].
func (t *Table) Report(ctx context.Context, a targets.Admission, sub targets.Subject, failed bool) (targets.Transition, error) {
	now := t.cfg.Now()
	tr := targets.Transition{Target: sub.Target, At: now}
	if sub.Target == "" || a.Verdict == targets.Hold {
		return tr, nil
	}
	ms := now.UnixMilli()
	kind, window, owner := breaker.ParseToken(a.Token)
	switch {
	case kind == 'p' && !failed:
		_, ok, err := t.update(ctx, sub.Target, "close", "SET #st = :closed, #ws = :now, #calls = :zero, #fails = :zero, #oks = :zero, "+
			"#last = :zero REMOVE #owner ADD #ver :one", "#st = :open AND #owner = :owner",
			pick("#st", "#ws", "#calls", "#fails", "#oks", "#last", "#owner", "#ver"),
			map[string]types.AttributeValue{":closed": s(targets.StateClosed), ":open": s(targets.StateOpen), ":owner": s(owner), ":now": n(ms), ":zero": n(0), ":one": n(1)})
		tr.Closed = ok
		return tr, err
	case kind == 'p', kind == 'f' && !failed, kind == 0:
		// A failed probe keeps the breaker open until the next interval
		// (its write took the slot); a free call's success changes nothing.
		return tr, nil
	}
	// A reserved call, or a free call that failed: count it, optimistic
	// that the window is still the call's; a lost race tells the state.
	st := breaker.State{Exists: true, WindowStart: window}
	for range maxConflicts {
		var ok bool
		var err error
		switch breaker.Report(st, window, failed) {
		case breaker.Ignore:
			return tr, nil
		case breaker.CountOk:
			st, ok, err = t.update(ctx, sub.Target, "count success", "ADD #oks :one, #ver :one", "#st = :closed AND #ws = :ws",
				pick("#st", "#ws", "#oks", "#ver"), map[string]types.AttributeValue{":closed": s(targets.StateClosed), ":ws": n(window), ":one": n(1)})
		case breaker.CountFail:
			st, ok, err = t.update(ctx, sub.Target, "count failure", "ADD #fails :one, #ver :one", "#st = :closed AND #ws = :ws",
				pick("#st", "#ws", "#fails", "#ver"), map[string]types.AttributeValue{":closed": s(targets.StateClosed), ":ws": n(window), ":one": n(1)})
		case breaker.AddFail:
			st, ok, err = t.update(ctx, sub.Target, "count failure", "ADD #calls :one, #fails :one, #ver :one", "#st = :closed",
				pick("#st", "#calls", "#fails", "#ver"), map[string]types.AttributeValue{":closed": s(targets.StateClosed), ":one": n(1)})
		}
		if err != nil {
			return tr, err
		}
		if ok {
			break
		}
	}
	for range maxConflicts {
		if !t.p.ShouldOpen(st) {
			return tr, nil
		}
		var ok bool
		var err error
		st, ok, err = t.update(ctx, sub.Target, "open", "SET #st = :open, #opened = :now, #probe = :next REMOVE #owner ADD #ver :one",
			"#ver = :v", pick("#st", "#opened", "#probe", "#owner", "#ver"),
			map[string]types.AttributeValue{":open": s(targets.StateOpen), ":now": n(ms), ":next": n(ms + t.p.ProbeMs), ":v": n(st.Version), ":one": n(1)})
		if err != nil || ok {
			tr.Opened = ok
			return tr, err
		}
	}
	return tr, fmt.Errorf("targets: report %s: lost %d races in a row", sub.Target, maxConflicts)
}
