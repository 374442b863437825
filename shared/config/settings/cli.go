package settings

import (
	"errors"
	"time"
)

// CLI is the configuration of the hookwall command: the functions' own
// contract names, so that it works wherever they do (the local stack or
// AWS). Each command needs only some of them ([CLINeeds]).
type CLI struct {
	// TableName is the events table: TABLE_NAME.
	TableName string
	// QueueURL is the main queue: QUEUE_URL.
	QueueURL string
	// DLQURL is the dead-letter queue: DLQ_URL.
	DLQURL string
	// TenantsFile (HOOKWALL_TENANTS_FILE) or TenantsSecretARN
	// (TENANTS_SECRET_ARN) locates the tenants document.
	TenantsFile      string
	TenantsSecretARN string
	// DedupWindow is HOOKWALL_DEDUP_WINDOW: the least time a replayed record
	// is kept from the replay on (its TTL is never shortened). Positive.
	DedupWindow time.Duration
	// EventBusName is EVENT_BUS_NAME: where pause, resume and recover
	// publish their operational events (optional; empty: none).
	EventBusName string
	// Targets is the targets' behaviour (HOOKWALL_TARGET_RATE and the
	// breaker's variables): the rate of resume's drain and of recover.
	Targets Targets
}

// CLINeeds says which of [CLI]'s variables a command requires. Variables
// that are set are validated whether needed or not.
type CLINeeds struct {
	Table   bool // TABLE_NAME
	Queue   bool // QUEUE_URL
	DLQ     bool // DLQ_URL
	Tenants bool // exactly one of HOOKWALL_TENANTS_FILE and TENANTS_SECRET_ARN
}

// CLIDefaults are the command's defaults, from the packages that own them
// (the dedup window is the receiver's, intake.DefaultDedupWindow).
type CLIDefaults struct {
	DedupWindow time.Duration // HOOKWALL_DEDUP_WINDOW
}

// LoadCLI reads the hookwall command's configuration through getenv
// (os.Getenv in main), requiring what need names, with def for what is
// unset. The error joins one error per variable at fault, each naming it,
// one per line, without a prefix: the command prints each after its own
// name ("hookwall: TABLE_NAME is required").
func LoadCLI(getenv func(string) string, need CLINeeds, def CLIDefaults) (CLI, error) {
	r := newReader(getenv)
	s := loadCLI(r, need, def)
	return s, errors.Join(r.errs...)
}

func loadCLI(r *reader, need CLINeeds, def CLIDefaults) CLI {
	s := CLI{
		TableName:        r.table("TABLE_NAME", need.Table),
		QueueURL:         r.httpURL("QUEUE_URL", need.Queue),
		DLQURL:           r.httpURL("DLQ_URL", need.DLQ),
		TenantsFile:      r.get("HOOKWALL_TENANTS_FILE"),
		TenantsSecretARN: r.plain("TENANTS_SECRET_ARN"),
		EventBusName:     r.plain("EVENT_BUS_NAME"),
		Targets:          r.targets(),
	}
	switch {
	case s.TenantsFile != "" && s.TenantsSecretARN != "":
		r.fail("set only one of HOOKWALL_TENANTS_FILE (local) and TENANTS_SECRET_ARN (AWS)")
	case need.Tenants && s.TenantsFile == "" && s.TenantsSecretARN == "":
		r.fail("HOOKWALL_TENANTS_FILE or TENANTS_SECRET_ARN is required (local: a file such as infra/local/tenants.json; AWS: the secret's ARN)")
	}
	s.DedupWindow, _ = r.duration("HOOKWALL_DEDUP_WINDOW", "", 0, def.DedupWindow)
	if s.DedupWindow <= 0 {
		r.fail("HOOKWALL_DEDUP_WINDOW=%s: must be positive", formatDuration(s.DedupWindow))
	}
	return s
}
