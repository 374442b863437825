package storm

import (
	"context"
	"fmt"

	"github.com/hookwall/hookwall/shared/aws/queue"
	"github.com/hookwall/hookwall/shared/config/settings"
	"github.com/hookwall/hookwall/shared/engine/drain"
	"github.com/hookwall/hookwall/shared/state/store"
	"github.com/hookwall/hookwall/shared/state/targets"
	"github.com/hookwall/hookwall/shared/state/targets/targetsdb"
)

// operator is what an operator's `hookwall pause` / `hookwall resume` use
// on the storm's table and queue: the targets' gate and the drain, on the
// stack's own endpoints (the CLI does not go through the fault proxy).
type operator struct {
	gate  *targetsdb.Table
	drain *drain.Drainer
}

// targetsConfig returns the breakers' and buckets' behaviour as the
// functions read it: their variables (settings.LoadTargets) over
// targets.Config's defaults.
func (s *System) targetsConfig() (targets.Config, error) {
	ts, err := settings.LoadTargets(s.getenv)
	if err != nil {
		return targets.Config{}, fmt.Errorf("storm: targets settings: %w", err)
	}
	c, err := targets.Config{}.With(ts).WithDefaults()
	if err != nil {
		return targets.Config{}, fmt.Errorf("storm: targets settings: %w", err)
	}
	return c, nil
}

// operator builds (once) the gate and the drain of the operator's CLI.
func (s *System) operator(ctx context.Context) (*operator, error) {
	s.opsMu.Lock()
	defer s.opsMu.Unlock()
	if s.ops != nil {
		return s.ops, nil
	}
	cfg, err := s.targetsConfig()
	if err != nil {
		return nil, err
	}
	db, sq, err := Admin(ctx, s.opts.DDBEndpoint, s.opts.SQSEndpoint)
	if err != nil {
		return nil, err
	}
	gate, err := targetsdb.New(targetsdb.TableConfig{Client: db, TableName: s.res.Table, Config: cfg})
	if err != nil {
		return nil, fmt.Errorf("storm: gate: %w", err)
	}
	table, err := store.New(store.Config{Client: db, TableName: s.res.Table, Function: "cli"})
	if err != nil {
		return nil, fmt.Errorf("storm: store: %w", err)
	}
	q, err := queue.New(queue.Config{Client: sq, URL: s.res.QueueURL})
	if err != nil {
		return nil, fmt.Errorf("storm: queue: %w", err)
	}
	d, err := drain.New(drain.Config{Store: table, Gate: gate, Queue: q, Logger: s.log.With("function", "cli")})
	if err != nil {
		return nil, fmt.Errorf("storm: drain: %w", err)
	}
	s.ops = &operator{gate: gate, drain: d}
	return s.ops, nil
}

// Pause pauses sc as `hookwall pause` does.
func (s *System) Pause(ctx context.Context, sc targets.Scope) error {
	op, err := s.operator(ctx)
	if err != nil {
		return err
	}
	if err := op.gate.Pause(ctx, sc, "hookwall-storm", "chaos scenario"); err != nil {
		return fmt.Errorf("storm: pause %s: %w", sc, err)
	}
	return nil
}

// Resume resumes sc as `hookwall resume` does: the pause lifted, then the
// scope's held events drained at their target's rate. It returns how many
// the drain released.
func (s *System) Resume(ctx context.Context, sc targets.Scope) (int, error) {
	op, err := s.operator(ctx)
	if err != nil {
		return 0, err
	}
	if err := op.gate.Resume(ctx, sc); err != nil {
		return 0, fmt.Errorf("storm: resume %s: %w", sc, err)
	}
	p, err := op.drain.Release(ctx, sc, drain.Options{})
	if err != nil {
		return p.Released + p.Waiting, fmt.Errorf("storm: drain %s: %w", sc, err)
	}
	return p.Released + p.Waiting, nil
}
