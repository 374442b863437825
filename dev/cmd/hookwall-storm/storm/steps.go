package storm

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"

	"github.com/hookwall/hookwall/shared/aws/sqsbatch"
	"github.com/hookwall/hookwall/shared/base/obs"
	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/config/settings"
	"github.com/hookwall/hookwall/shared/engine/dispatch"
	"github.com/hookwall/hookwall/shared/engine/process"
	"github.com/hookwall/hookwall/shared/ops/backend"
	"github.com/hookwall/hookwall/shared/state/targets"
)

// StepsHandler names the storm-only handler of -steps.
const StepsHandler = "storm.steps"

// buildStepsProcessor wires the processor as functions/processor/wiring
// does (backend, engine, SQS batch handler), but with one handler of its own
// instead of the teams': StepsHandler runs n journaled steps per event, each
// a POST of {"key","step"} to targetURL with the step's idempotency key (n =
// 0: the handler does nothing). It measures the engine's cost per step.
// With a shared target (one naming no tenant), the handler calls it
// (process.Target) and the dispatcher has the targets' gate, as the
// processor's wiring gives it: breakers per tenant, holds, probes.
func buildStepsProcessor(ctx context.Context, s settings.Processor, log *slog.Logger, counter *Counter, n int, targetURL, shared string) (BatchFunc, error) {
	b, err := backend.Load(ctx, backend.Config{Function: "processor", TenantsFile: s.TenantsFile, TenantsSecretARN: s.TenantsSecretARN,
		TableName: s.TableName, QueueURL: s.QueueURL, DLQURL: s.DLQURL, EventBusName: s.EventBusName,
		Targets: targets.Config{}.With(s.Targets)}, log, counter.Option("processor"))
	if err != nil {
		return nil, fmt.Errorf("storm: processor backend: %w", err)
	}
	reg := process.NewRegistry()
	var opts []process.Option
	var gate dispatch.Gate
	if shared != "" {
		opts, gate = append(opts, process.Target(shared)), b.Gate
	}
	process.HandleAll(reg, StepsHandler, func(ctx context.Context, ev *process.Event[webhook.Envelope]) error {
		for i := range n {
			if err := ev.Step(ctx, fmt.Sprintf("s%d", i), func(ctx context.Context, idem string) error {
				return postStep(ctx, ev.HTTPClient(), targetURL, idem, ev.Data.Key, i)
			}); err != nil {
				return err
			}
		}
		return nil
	}, opts...)
	d, err := dispatch.New(dispatch.Config{Registry: reg, Store: b.Table, DLQ: b.DLQ, UnhandledToDLQ: s.UnhandledToDLQ, Gate: gate,
		Kernel: dispatch.Kernel{Queue: b.Queue, Publisher: b.Publisher, Outcomes: s.OutcomeEvents, Logger: log,
			Metrics:       obs.NewMetrics(io.Discard, "Hookwall", map[string]string{"Function": "processor"}),
			LeaseDuration: s.Lease, MaxAttempts: s.MaxAttempts, RetryBase: s.RetryBase, RetryCap: s.RetryCap,
			Retention: s.Retention}})
	if err != nil {
		return nil, fmt.Errorf("storm: processor engine: %w", err)
	}
	h := sqsbatch.New(d, s.Concurrency)
	return h.Handle, nil
}

// postStep is one step's effect: a POST to the target.
func postStep(ctx context.Context, hc *http.Client, url, idem, key string, step int) error {
	body, _ := json.Marshal(map[string]any{"key": key, "step": step})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return process.Permanent(fmt.Errorf("storm step: %w", err))
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(process.HeaderIdempotencyKey, idem)
	resp, err := hc.Do(req)
	if err != nil {
		return fmt.Errorf("storm step: %w", err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	if err := process.HTTPStatus(resp.StatusCode); err != nil {
		return fmt.Errorf("storm step: %w", err)
	}
	return nil
}
