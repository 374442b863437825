//go:build integration

package storm

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"
)

// localStack points the storm at the local stack: the AWS_ENDPOINT_URL_*
// and credentials of the environment, else the stack's default ports and
// made-up credentials.
func localStack(t *testing.T) {
	t.Helper()
	for k, def := range map[string]string{
		"AWS_ENDPOINT_URL_DYNAMODB": "http://127.0.0.1:8000", "AWS_ENDPOINT_URL_SQS": "http://127.0.0.1:9324",
		"AWS_REGION": "us-east-1", "AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test",
	} {
		if os.Getenv(k) == "" {
			t.Setenv(k, def)
		}
	}
}

// A small storm on the local stack (make services-up; the AWS_ENDPOINT_URL_*
// of the environment, else the stack's default ports): nothing lost,
// nothing doubled, everything accepted, and the report's counts add up.
func TestStormOnTheLocalStack(t *testing.T) {
	localStack(t)
	o := Defaults()
	o.Label, o.N, o.C = "integration", 150, 12
	o.Deadline, o.Settle = 40*time.Second, 40*time.Second
	o.Target.Fail5xx = 0.1 // some processor retries, too
	o.Env = map[string]string{"HOOKWALL_RETRY_BASE": "1s", "HOOKWALL_RETRY_CAP": "2s", "HOOKWALL_LEASE": "10s"}
	var progress strings.Builder
	o.Progress = &progress
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Second)
	defer cancel()
	r, err := Run(ctx, o)
	if err != nil {
		t.Fatalf("storm: %v (is the local stack up? make services-up)", err)
	}
	var text strings.Builder
	r.Text(&text)
	t.Log("\n" + text.String())
	if !r.OK {
		t.Errorf("storm failed: %v\nprogress:\n%s", r.Failures(), progress.String())
	}
	if bad := r.CheckSums(); len(bad) > 0 {
		t.Errorf("counts do not add up: %v", bad)
	}
	if r.Outcome.UniqueEvents < o.N || r.Delivers != o.N+r.DuplicateDeliveries || r.DuplicateDeliveries != 75 {
		t.Errorf("unique %d, deliveries %d, duplicates %d: not the workload of %d items with 30%%/10%% duplicates",
			r.Outcome.UniqueEvents, r.Delivers, r.DuplicateDeliveries, o.N)
	}
	if r.Outcome.WithEffect != r.Outcome.UniqueEvents || r.Outcome.Statuses["SUCCEEDED"] != r.Outcome.UniqueEvents {
		t.Errorf("with effect %d, statuses %v; want all %d SUCCEEDED with an effect", r.Outcome.WithEffect, r.Outcome.Statuses, r.Outcome.UniqueEvents)
	}
	if r.Target.Failed5xx > 0 && r.Outcome.Rescued[RescueRetry] == 0 {
		t.Errorf("the target failed %d calls but no event was rescued by a processor retry: %v", r.Target.Failed5xx, r.Outcome.Rescued)
	}
	if r.Calls.ReceiverPerFirst <= 0 || r.ReceiverLatency.Count != r.HTTPRequests-r.Answers["no_answer"] {
		t.Errorf("calls %+v, latency count %d of %d requests", r.Calls, r.ReceiverLatency.Count, r.HTTPRequests)
	}
}

// A small noisy-tenant storm on the local stack, one pair (with and
// without the noisy tenant): every message the processor receives from the
// real queue carries its tenant's group, nothing is lost, doubled or never
// accepted, and every tenant's events are processed. The latency ratio is
// a measurement (make storm-noisy, docs/PERFORMANCE.md), not asserted here.
func TestNoisyTenantStormOnTheLocalStack(t *testing.T) {
	localStack(t)
	o := Defaults()
	o.Label, o.Deadline, o.Settle = "noisy-integration", 40*time.Second, 40*time.Second
	n := NoisyOptions{Quiet: 3, Factor: 10, Rate: 1, For: 6 * time.Second, Rounds: 1}
	var progress strings.Builder
	o.Progress = &progress
	ctx, cancel := context.WithTimeout(context.Background(), 110*time.Second)
	defer cancel()
	rep, err := RunNoisy(ctx, o, n, &progress)
	if err != nil {
		t.Fatalf("noisy storm: %v (is the local stack up? make services-up)", err)
	}
	var text strings.Builder
	for _, r := range rep.Runs {
		r.Text(&text)
	}
	rep.Text(&text)
	t.Log("\n" + text.String())
	if len(rep.Runs) != 2 || len(rep.Rounds) != 1 {
		t.Fatalf("%d storms, %d rounds; want one pair", len(rep.Runs), len(rep.Rounds))
	}
	for _, r := range rep.Runs {
		with := strings.Contains(r.Label, "-with-")
		if !r.OK {
			t.Errorf("%s failed: %v\nprogress:\n%s", r.Label, r.Failures(), progress.String())
		}
		if r.Outcome.Lost != 0 || r.Outcome.Doubled != 0 || r.Outcome.NeverAccepted != 0 {
			t.Errorf("%s: lost %d, doubled %d, never accepted %d", r.Label, r.Outcome.Lost, r.Outcome.Doubled, r.Outcome.NeverAccepted)
		}
		g := r.Groups
		if g == nil || g.Mismatched != 0 || g.Messages < r.Outcome.UniqueEvents {
			t.Fatalf("%s: message groups %+v for %d events: want every event's message received, none outside its tenant's group", r.Label, g, r.Outcome.UniqueEvents)
		}
		want := n.Loads(with)
		if len(r.Tenants) != len(want) {
			t.Errorf("%s: tenants %v, want %v", r.Label, sortedKeys(r.Tenants), want)
		}
		for _, l := range want {
			tr := r.Tenants[l.Name]
			if tr == nil || tr.Items != l.Items || tr.Events == 0 || tr.Processed != tr.Events || tr.EndToEnd.Count != tr.Events {
				t.Errorf("%s: tenant %s: %+v; want its %d items' events all processed", r.Label, l.Name, tr, l.Items)
				continue
			}
			if g.ByGroup[l.Name] < tr.Events {
				t.Errorf("%s: %d messages in group %s for its %d events", r.Label, g.ByGroup[l.Name], l.Name, tr.Events)
			}
		}
		if _, ok := r.Tenants[NoisyTenant]; ok != with {
			t.Errorf("%s: noisy tenant present %t", r.Label, ok)
		}
	}
	if rep.Rounds[0].Ratio <= 0 || !rep.OK {
		t.Errorf("round %+v, ok %t", rep.Rounds[0], rep.OK)
	}
}
