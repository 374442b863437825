package settings

import (
	"strings"
	"testing"
)

func TestLoadPreTraffic(t *testing.T) {
	env := map[string]string{
		"TENANTS_SECRET_ARN":    "arn:aws:secretsmanager:us-east-1:123456789012:secret:t-AbCdEf",
		"RECEIVER_VERSION_ARN":  "arn:aws:lambda:us-east-1:123456789012:function:hookwall-ReceiverFunction-X:7",
		"PROCESSOR_VERSION_ARN": "arn:aws:lambda:us-east-1:123456789012:function:hookwall-ProcessorFunction-X:9",
	}
	s, _, err := LoadPreTraffic(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	if s.ReceiverVersion != env["RECEIVER_VERSION_ARN"] || s.ProcessorVersion != env["PROCESSOR_VERSION_ARN"] || s.TenantsSecretARN == "" {
		t.Errorf("got %+v", s)
	}
	if s.TableName != "" || s.QueueURL != "" {
		t.Errorf("the hook read the table or the queue: %+v", s.Common)
	}
	for name, bad := range map[string]string{
		"RECEIVER_VERSION_ARN":  "arn:aws:lambda:us-east-1:123456789012:function:hookwall-ReceiverFunction-X", // unqualified: $LATEST
		"PROCESSOR_VERSION_ARN": "hookwall-ProcessorFunction-X",
	} {
		broken := map[string]string{}
		for k, v := range env {
			broken[k] = v
		}
		broken[name] = bad
		if _, _, err := LoadPreTraffic(func(k string) string { return broken[k] }); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s=%q: error %v, want one naming it", name, bad, err)
		}
	}
	if _, _, err := LoadPreTraffic(func(string) string { return "" }); err == nil ||
		!strings.Contains(err.Error(), "RECEIVER_VERSION_ARN is required") || !strings.Contains(err.Error(), "TENANTS_SECRET_ARN") {
		t.Errorf("empty environment: %v", err)
	}
}
