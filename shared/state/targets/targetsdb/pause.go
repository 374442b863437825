package targetsdb

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/hookwall/hookwall/shared/state/targets"
)

// pauseCache is an instance's copy of the pauses. gen counts this
// instance's own pauses and resumes, so that a read that began before one
// does not overwrite it.
type pauseCache struct {
	set map[targets.Scope]targets.Pause
	at  time.Time // when read; zero: never
	gen int
}

func pauseKey(sc targets.Scope) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{attrPK: s(pkControl), attrSK: s(skPausePrefix + sc.String())}
}

// Pause implements [targets.Gate.Pause]. Pausing a paused scope replaces its by,
// reason and time.
func (t *Table) Pause(ctx context.Context, sc targets.Scope, by, reason string) error {
	if err := sc.Validate(); err != nil {
		return err
	}
	p := targets.Pause{Scope: sc, By: by, Reason: reason, At: time.UnixMilli(t.cfg.Now().UnixMilli())}
	item := pauseKey(sc)
	item[attrKind], item[attrName], item[attrBy], item[attrReason], item[attrAt] = s(sc.Kind), s(sc.Name), s(by), s(reason), n(p.At.UnixMilli())
	if _, err := t.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: &t.name, Item: item}); err != nil {
		return fmt.Errorf("targets: pause %s: %w", sc, err)
	}
	t.mu.Lock()
	if t.pauses.set == nil {
		t.pauses.set = map[targets.Scope]targets.Pause{}
	}
	t.pauses.set[sc] = p
	t.pauses.gen++
	t.mu.Unlock()
	return nil
}

// Resume implements [targets.Gate.Resume].
func (t *Table) Resume(ctx context.Context, sc targets.Scope) error {
	if err := sc.Validate(); err != nil {
		return err
	}
	if _, err := t.db.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: &t.name, Key: pauseKey(sc)}); err != nil {
		return fmt.Errorf("targets: resume %s: %w", sc, err)
	}
	// The resume's own process drops its copy of the pauses: its next
	// admission or drain reads them again, this resume (and any other
	// instance's since the last read) seen at once.
	t.mu.Lock()
	delete(t.pauses.set, sc)
	t.pauses.at = time.Time{}
	t.pauses.gen++
	t.mu.Unlock()
	return nil
}

// Pauses implements [targets.Gate.Pauses]: it reads them (and refreshes the
// instance's copy).
func (t *Table) Pauses(ctx context.Context) ([]targets.Pause, error) {
	set, err := t.readPauses(ctx)
	if err != nil {
		return nil, err
	}
	ps := slices.Collect(maps.Values(set))
	// sort.Slice, not slices.SortFunc: each generic instantiation adds code to
	// every function's bootstrap, and the compensator's is at its 12 MB budget
	// (infra/coldstart; the text segment is 64 KiB-aligned).
	sort.Slice(ps, func(i, j int) bool { return ps[i].Scope.String() < ps[j].Scope.String() })
	return ps, nil
}

// readPauses queries the pauses and keeps them as the instance's copy,
// unless the instance paused or resumed meanwhile.
func (t *Table) readPauses(ctx context.Context) (map[targets.Scope]targets.Pause, error) {
	t.mu.Lock()
	gen := t.pauses.gen
	t.mu.Unlock()
	at := t.cfg.Now()
	set := map[targets.Scope]targets.Pause{}
	err := t.eachControl(ctx, skPausePrefix, "read pauses", func(item map[string]types.AttributeValue) {
		sc := targets.Scope{Kind: str(item, attrKind), Name: str(item, attrName)}
		if sc.Validate() != nil {
			// Not a pause this version wrote: read its key.
			parsed, err := targets.ParseScope(strings.TrimPrefix(str(item, attrSK), skPausePrefix))
			if err != nil {
				return
			}
			sc = parsed
		}
		set[sc] = targets.Pause{Scope: sc, By: str(item, attrBy), Reason: str(item, attrReason), At: time.UnixMilli(num(item, attrAt))}
	})
	if err != nil {
		return nil, err
	}
	t.mu.Lock()
	if t.pauses.gen == gen {
		t.pauses.set, t.pauses.at = set, at
	} else {
		set = maps.Clone(t.pauses.set)
	}
	t.mu.Unlock()
	return set, nil
}

// eachControl calls fn with every item of the CONTROL partition whose sort
// key begins with prefix (a strongly consistent Query, page by page); what
// names the read in errors.
func (t *Table) eachControl(ctx context.Context, prefix, what string, fn func(map[string]types.AttributeValue)) error {
	in := &dynamodb.QueryInput{
		TableName: &t.name, ConsistentRead: aws.Bool(true),
		KeyConditionExpression:    aws.String("#pk = :pk AND begins_with(#sk, :prefix)"),
		ExpressionAttributeNames:  map[string]string{"#pk": attrPK, "#sk": attrSK},
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": s(pkControl), ":prefix": s(prefix)},
	}
	for {
		out, err := t.db.Query(ctx, in)
		if err != nil {
			return fmt.Errorf("targets: %s: %w", what, err)
		}
		for _, item := range out.Items {
			fn(item)
		}
		if len(out.LastEvaluatedKey) == 0 {
			return nil
		}
		in.ExclusiveStartKey = out.LastEvaluatedKey
	}
}

// paused reports whether sc is paused, as the instance's copy says if it
// is at most PauseCacheFor old, else as read now.
func (t *Table) paused(ctx context.Context, now time.Time) (func(targets.Scope) bool, error) {
	t.mu.Lock()
	fresh := !t.pauses.at.IsZero() && now.Sub(t.pauses.at) <= targets.PauseCacheFor && !now.Before(t.pauses.at)
	set := t.pauses.set
	t.mu.Unlock()
	if !fresh {
		var err error
		if set, err = t.readPauses(ctx); err != nil {
			return nil, err
		}
	} else {
		t.mu.Lock()
		set = maps.Clone(t.pauses.set)
		t.mu.Unlock()
	}
	return func(sc targets.Scope) bool { _, ok := set[sc]; return ok }, nil
}

// covered returns the paused scope of sub that holds it, if any.
func (t *Table) covered(ctx context.Context, sub targets.Subject, now time.Time) (targets.Scope, bool, error) {
	paused, err := t.paused(ctx, now)
	if err != nil {
		return targets.Scope{}, false, err
	}
	sc, ok := targets.Covering(sub, paused)
	return sc, ok, nil
}

// Blocked implements [targets.Gate.Blocked]: the pauses (of sc, and of the shared
// target of a tenant's share, [targets.Within]) as the instance's copy says (at most PauseCacheFor old; its own resumes at once), a target's
// breaker as read now.
func (t *Table) Blocked(ctx context.Context, sc targets.Scope) (bool, error) {
	if err := sc.Validate(); err != nil {
		return false, err
	}
	paused, err := t.paused(ctx, t.cfg.Now())
	if err != nil {
		return false, err
	}
	for _, w := range targets.Within(sc) {
		if paused(w) {
			return true, nil
		}
	}
	if sc.Kind != targets.KindTarget {
		return false, nil
	}
	st, err := t.readBreaker(ctx, sc.Name)
	return st.Open, err
}

// Breakers implements [targets.Gate.Breakers]: every target admitted so far, read
// now.
func (t *Table) Breakers(ctx context.Context) ([]targets.Breaker, error) {
	var names []string
	err := t.eachControl(ctx, skTargetPrefix, "list targets", func(item map[string]types.AttributeValue) {
		names = append(names, strings.TrimPrefix(str(item, attrSK), skTargetPrefix))
	})
	if err != nil {
		return nil, err
	}
	bs := make([]targets.Breaker, 0, len(names))
	for chunk := range slices.Chunk(names, 100) {
		keys := make([]map[string]types.AttributeValue, len(chunk))
		for i, name := range chunk {
			keys[i] = targetKey(name, skBreaker)
		}
		req := map[string]types.KeysAndAttributes{t.name: {Keys: keys, ConsistentRead: aws.Bool(true)}}
		for tries := 0; len(req) > 0; tries++ {
			if tries == maxConflicts {
				return nil, fmt.Errorf("targets: read breakers: keys still unprocessed after %d tries", tries)
			}
			if tries > 0 {
				if err := targets.Poll(ctx); err != nil {
					return nil, err
				}
			}
			out, err := t.db.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: req})
			if err != nil {
				return nil, fmt.Errorf("targets: read breakers: %w", err)
			}
			for _, item := range out.Responses[t.name] {
				name := strings.TrimPrefix(str(item, attrPK), pkTargetPrefix)
				bs = append(bs, targets.BreakerView(name, decodeState(item)))
			}
			req = out.UnprocessedKeys
		}
	}
	sort.Slice(bs, func(i, j int) bool { return bs[i].Target < bs[j].Target }) // sort.Slice: see Pauses
	return bs, nil
}
