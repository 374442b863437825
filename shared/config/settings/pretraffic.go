package settings

import "strings"

// PreTraffic is the configuration of the pre-traffic hook
// (functions/pretraffic), which CodeDeploy calls before it moves traffic to
// new receiver and processor versions. Field comments name the variable.
type PreTraffic struct {
	// Common holds the tenants document's location (HOOKWALL_TENANTS_FILE
	// or TENANTS_SECRET_ARN, exactly one) and LOG_LEVEL. TableName and
	// QueueURL stay empty: the hook touches neither (see
	// [PreTrafficIgnoredVariables]).
	Common
	// ReceiverVersion is RECEIVER_VERSION_ARN: the ARN of the receiver
	// version to check, qualified by its version (required).
	ReceiverVersion string
	// ProcessorVersion is PROCESSOR_VERSION_ARN: the ARN of the processor
	// version to check (required).
	ProcessorVersion string
}

// LoadPreTraffic reads the pre-traffic hook's configuration through getenv
// and validates it. The error joins one error per variable at fault.
func LoadPreTraffic(getenv func(string) string) (PreTraffic, Warnings, error) {
	r := newReader(getenv)
	s := loadPreTraffic(r)
	return s, r.warnings, r.err("pre-traffic hook")
}

func loadPreTraffic(r *reader) PreTraffic {
	var s PreTraffic
	r.tenantsAndLogLevel(&s.Common)
	s.ReceiverVersion = r.versionARN("RECEIVER_VERSION_ARN")
	s.ProcessorVersion = r.versionARN("PROCESSOR_VERSION_ARN")
	return s
}

// versionARN reads the required ARN of a Lambda function version or alias
// (arn:<partition>:lambda:<region>:<account>:function:<name>:<qualifier>).
func (r *reader) versionARN(name string) string {
	v := r.required(name)
	if v == "" {
		return v
	}
	parts := strings.Split(v, ":")
	if len(parts) != 8 || parts[0] != "arn" || parts[2] != "lambda" || parts[5] != "function" || parts[6] == "" || parts[7] == "" {
		r.fail("%s=%q: want a Lambda function version's ARN (arn:aws:lambda:<region>:<account>:function:<name>:<version>)", name, v)
	}
	return v
}

// PreTrafficVariables returns the variables [LoadPreTraffic] reads, sorted.
func PreTrafficVariables() []string {
	return variables(func(r *reader) { loadPreTraffic(r) })
}

// PreTrafficIgnoredVariables are the variables the template gives every
// function (Globals) that the pre-traffic hook does not read: the events
// table and queue and their SDK endpoints. The hook calls neither; it reads
// the table only through the receiver it checks.
func PreTrafficIgnoredVariables() []string {
	return []string{"AWS_ENDPOINT_URL_DYNAMODB", "AWS_ENDPOINT_URL_SQS", "QUEUE_URL", "TABLE_NAME"}
}
