//go:build integration

package storm

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"
)

// A small storm on the local stack (make services-up; the AWS_ENDPOINT_URL_*
// of the environment, else the stack's default ports): nothing lost,
// nothing doubled, everything accepted, and the report's counts add up.
func TestStormOnTheLocalStack(t *testing.T) {
	for k, def := range map[string]string{
		"AWS_ENDPOINT_URL_DYNAMODB": "http://127.0.0.1:8000", "AWS_ENDPOINT_URL_SQS": "http://127.0.0.1:9324",
		"AWS_REGION": "us-east-1", "AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test",
	} {
		if os.Getenv(k) == "" {
			t.Setenv(k, def)
		}
	}
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
