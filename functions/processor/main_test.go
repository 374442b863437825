package main

import (
	"strings"
	"testing"
	"time"
)

func TestConfigFromEnv(t *testing.T) {
	env := map[string]string{"TABLE_NAME": "t", "QUEUE_URL": "q", "DLQ_URL": "d"}
	get := func(k string) string { return env[k] }
	c, err := configFromEnv(get)
	if err != nil {
		t.Fatal(err)
	}
	if c.Concurrency != 10 || c.Lease != time.Minute || c.RetryBase != 2*time.Second || c.RetryCap != 15*time.Minute ||
		c.MaxAttempts != 5 || c.Retention != 7*24*time.Hour || c.UnhandledToDLQ || c.EventBusName != "" {
		t.Errorf("defaults: got %+v", c)
	}
	env["LEASE_SECONDS"], env["UNHANDLED_TO_DLQ"], env["EVENT_BUS_NAME"] = "30", "true", "bus"
	if c, err = configFromEnv(get); err != nil || c.Lease != 30*time.Second || !c.UnhandledToDLQ || c.EventBusName != "bus" {
		t.Errorf("got %+v, %v", c, err)
	}
	_, err = configFromEnv(func(k string) string {
		return map[string]string{"MAX_ATTEMPTS": "zero", "RETRY_BASE_SECONDS": "100", "RETRY_CAP_SECONDS": "10"}[k]
	})
	for _, want := range []string{"TABLE_NAME is required", "QUEUE_URL is required", "DLQ_URL is required", "MAX_ATTEMPTS", "RETRY_BASE_SECONDS is above"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("got error %v, want it to mention %q", err, want)
		}
	}
}
