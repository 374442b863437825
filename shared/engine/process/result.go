package process

import (
	"context"
	"encoding/json"
	"fmt"
)

// StepResult is [Event.Step] for a step with a result: the result is stored
// (as JSON) in the journal and returned on replay without calling fn. A
// compensation reads it back with [UndoResult].
//
//	lead, err := process.StepResult(ctx, ev, "create-lead", func(ctx context.Context, idemKey string) (Lead, error) {
//		return api.CreateLead(ctx, idemKey, ev.Data.Source.UserID)
//	})
func StepResult[R, T any](ctx context.Context, ev *Event[T], name string, fn func(ctx context.Context, idemKey string) (R, error)) (R, error) {
	b, err := ev.call.Steps.Step(ctx, name, func(ctx context.Context, key string) ([]byte, error) {
		r, err := fn(ctx, key)
		if err != nil {
			return nil, err
		}
		b, err := json.Marshal(r)
		if err != nil {
			return nil, Permanent(fmt.Errorf("step %s: encode result: %w", name, err))
		}
		return b, nil
	})
	if err != nil || len(b) == 0 {
		var zero R
		return zero, err
	}
	return decodeResult[R](b, "step "+name)
}

// UndoResult decodes the result the forward step journaled with
// [StepResult] (such as the id of what it created) into R. A step that
// journaled no result, or one that does not decode into R, is a [Permanent]
// error: no retry can change the journal.
func UndoResult[R any](u *Undo) (R, error) {
	what := "undo " + u.Handler + "/" + u.Step
	if len(u.Result) == 0 {
		var zero R
		return zero, Permanent(fmt.Errorf("%s: the step journaled no result", what))
	}
	return decodeResult[R](u.Result, what)
}

// decodeResult decodes the journaled result b of the step what names. A
// result that does not decode into R is [Permanent]: no retry changes the
// journal.
func decodeResult[R any](b []byte, what string) (R, error) {
	var r R
	if err := json.Unmarshal(b, &r); err != nil {
		var zero R
		return zero, Permanent(fmt.Errorf("%s: decode journaled result: %w", what, err))
	}
	return r, nil
}
