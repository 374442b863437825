package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/hookwall/hookwall/shared/config/signer"
	"github.com/hookwall/hookwall/shared/protocol/providers"
)

// The help texts. Each command's flags are listed after its text by
// `hookwall <command> --help`.

const topUsage = `hookwall: sign test webhooks, inspect, replay and redrive Hookwall events.

Usage:
  hookwall <command> [arguments] [flags]

Commands:
  sign <provider>      build a signed (WeCom/WeChat: encrypted) webhook request for a tenant;
                       print it as a curl command, or --send it and print the reply
  send <provider>      sign a webhook request and send it to the receiver (make run's by default)
  events get KEY       an event's record, payload, steps, calls, deliveries and history
  events list          events by status (--status, --since, --tenant)
  events history KEY   an event's transitions (time, from → to, attempt, function)
  replay KEY           send an event back to RECEIVED and enqueue it from its stored payload
  replay --status S    the same for every event in a status (a dry run unless --yes)
  recover --since T    a resumable, cancellable job sending back every FAILED event of a window,
                       at each target's rate, with progress and ETA (--detach, --watch,
                       --resume, --cancel, --list)
  pause SCOPE          hold the events of handler/NAME, tenant/NAME or target/NAME (still received)
  resume SCOPE         end a pause and drain the held events at the target's rate
  targets              breakers, pauses and held counts
  dlq peek             show dead-letter messages without removing them
  dlq redrive          move every dead-letter message back to the main queue
  new handler TEAM     write a team's handler package and list it in handlers.go (for developers)
  version              the version, VCS revision and Go version of this binary (also --version)

Every command takes --json (output for scripts) and --help (its flags and examples).
A KEY is the event's record key, provider#tenant#id (quote it in the shell:
'line#demo#01JDEMO0000000000000000002').

Environment (the functions' own names; each command needs only some):
  TABLE_NAME, QUEUE_URL, DLQ_URL            the events table, main and dead-letter queues
  HOOKWALL_TENANTS_FILE / TENANTS_SECRET_ARN  the tenants document (sign, send)
  EVENT_BUS_NAME                            where pause, resume and recover publish their events
  HOOKWALL_TARGET_RATE                      calls per second per target (resume, recover; default 10)
  AWS_REGION, AWS_ENDPOINT_URL_DYNAMODB, AWS_ENDPOINT_URL_SQS, credentials: as for the AWS SDK
  HOOKWALL_RUN_DIR                          where the local runner's runner.json is (.local/run)
Locally, start the stack with 'make run' (any PORT) and leave it running: the CLI finds it
(<repo>/.local/run/runner.json) and takes its URL, tenants and every variable above that is
unset from it, unless the environment names a stack itself (TABLE_NAME, QUEUE_URL, DLQ_URL,
AWS_ENDPOINT_URL_*). Without it: eval "$(scripts/services-up.sh)";
export HOOKWALL_TENANTS_FILE=infra/local/tenants.json.

Exit codes: 0 ok; 1 the operation failed; 2 bad usage or environment;
3 not found (event, tenant) or refused (e.g. replaying a SUCCEEDED event without --force).
`

const eventsUsage = `Usage:
  hookwall events get KEY         one event: record, payload, steps, calls, deliveries, history
  hookwall events list [flags]    events by status, newest update first
  hookwall events history KEY     the transitions of one event

Run 'hookwall events <command> --help' for its flags and examples.
`

const dlqUsage = `Usage:
  hookwall dlq peek [--n 10]        show dead-letter messages; none is removed
  hookwall dlq redrive [--to main]  move every dead-letter message to the main queue

Run 'hookwall dlq <command> --help' for its flags and examples.
`

const newUsage = `Usage:
  hookwall new handler TEAM [--event provider/type] [--dir ROOT]   a new team's handler package

Run 'hookwall new <command> --help' for its flags and examples.
`

// groupUsage returns the help of a command group ("" if none).
func groupUsage(group string) string {
	switch group {
	case "events":
		return eventsUsage
	case "dlq":
		return dlqUsage
	case "new":
		return newUsage
	}
	return ""
}

// signUsage is sign's help. The providers, their signatures, modes and
// handshakes come from the provider registry.
func signUsage() string {
	return `Usage:
  hookwall sign <` + strings.Join(providers.Names(), "|") + `> --tenant T --body FILE` + modeFlag() + ` [--send URL]
  hookwall sign <` + strings.Join(signer.HandshakeProviders(), "|") + `> --tenant T --verify ECHOSTR [--send URL]

Builds the request the platform would send to /webhooks/<provider>/<tenant>, signed with
the tenant's secrets from the tenants document (HOOKWALL_TENANTS_FILE or TENANTS_SECRET_ARN):
` + providerLines() + `It prints a curl command for --url (default: the running local runner's URL, else
` + defaultBase + `), or with --send URL posts it there and prints the reply; a reply other
than 2xx exits 1. 'hookwall send' signs and posts in one go. The tenants document defaults
to the local runner's too.

The body may hold placeholders, replaced when signing: {{now}} (unix seconds, WeCom/WeChat
CreateTime), {{now_ms}} (LINE timestamp), {{now_rfc3339}}, and {{id}} (a new random id at
each use: a new event, not a duplicate). Sample bodies: events/bodies/.

Examples:
  hookwall sign line --tenant demo --body events/bodies/line-follow.json --send http://127.0.0.1:3000
  hookwall sign wechat --tenant demo --mode compat --body events/bodies/wechat-text.xml | sh
  hookwall sign standard --tenant demo --body events/bodies/standard-order-paid.json --json
  hookwall sign wecom --tenant demo --verify 6386451842216651161 --send https://abc.execute-api.eu-west-1.amazonaws.com
`
}

// sendUsage is send's help.
func sendUsage() string {
	return `Usage:
  hookwall send <` + strings.Join(providers.Names(), "|") + `> --tenant T --body FILE` + modeFlag() + ` [--url URL]
  hookwall send <` + strings.Join(signer.HandshakeProviders(), "|") + `> --tenant T --verify ECHOSTR [--url URL]

Signs the request as 'hookwall sign' does (see 'hookwall sign --help') and sends it to the
receiver at --url, then prints the reply; a reply other than 2xx exits 1. Without --url it
sends to the running local runner (make run, on whatever PORT it listens), else to
` + defaultBase + `; without HOOKWALL_TENANTS_FILE it signs with the runner's tenants.

Examples:
  hookwall send line --tenant demo --body events/bodies/line-follow.json
  hookwall send standard --tenant demo --body events/bodies/standard-order-paid.json --json
  hookwall send wecom --tenant demo --verify 6386451842216651161 --url https://abc.execute-api.eu-west-1.amazonaws.com
`
}

// modeFlag is the synopsis of --mode: every mode of the providers that have some.
func modeFlag() string {
	var modes []string
	for _, p := range providers.All() {
		for _, m := range p.Modes {
			if !slices.Contains(modes, m) {
				modes = append(modes, m)
			}
		}
	}
	if len(modes) == 0 {
		return ""
	}
	return " [--mode " + strings.Join(modes, "|") + "]"
}

// providerLines describes each provider's signature, one entry per provider.
func providerLines() string {
	var b strings.Builder
	for _, p := range providers.All() {
		text := p.Signature
		if text == "" {
			text = p.Label
		}
		fmt.Fprintf(&b, "  %-9s %s\n", p.Name, strings.ReplaceAll(text, "\n", "\n            "))
	}
	return b.String()
}

const recoverUsage = `Usage:
  hookwall recover --since T [--until T] [--status FAILED[,DEAD,COMPENSATED]] [--tenant T]
                   [--handler NAME] [--rate N] [--detach] [--json]
  hookwall recover --resume ID [--detach] [--json]
  hookwall recover --watch ID [--json]
  hookwall recover --cancel ID
  hookwall recover --list [--json]

Sends every event received in the window [--since, --until) that ended in the states given
(default FAILED) back to be processed, as a job whose state lives in the events table
(JOB#<id>): it counts the events first, then pages through the table (a bounded Scan, page
by page), replays each record (to RECEIVED, steps already journaled stay done, but one whose
undo the compensator journaled runs again, under a new idempotency key) and enqueues it, taking a token of the event's target for each (HOOKWALL_TARGET_RATE per second per
target, shared with the drain; --rate caps it lower for this job). Progress and an ETA go to
stderr, a line a second at most; the summary goes to stdout (--json: the job).

Ctrl-C saves the job's cursor and leaves it resumable; --cancel ID (from anywhere) stops it
within a second, also resumable; --resume ID goes on from the cursor, in any process.

--detach runs the job in the background instead: it prints the job's id and returns at once,
and the sweeper (the compensator's schedule on AWS, every 5 minutes; make run's every 30 s)
goes on with it after its own work on each of its runs, for a bounded part of the run, at the
targets' rate, until it is done. --watch ID shows a job's progress and ETA from the table
until it ends (Ctrl-C stops watching, not the job); --cancel ID stops it at its next save,
whoever runs it; --resume ID --detach hands a cancelled or interrupted job back to the
sweeper. A
second job over the same window changes nothing: an event that is no longer in the states
given (SUCCEEDED since, or sent back by another job) is skipped, and each replay is a write
pinned to the record's version. --handler selects the events whose last attempt was bound for
the handler's target: its name, or NAME/<tenant> (the forward handler's targets).
Each event sent back publishes hookwall.event.recovered on EVENT_BUS_NAME.

Examples:
  hookwall recover --since 2026-05-01T09:00:00Z --until 2026-05-01T11:00:00Z --handler forward
  hookwall recover --since 3h --tenant acme --rate 5
  hookwall recover --since 2d --detach; hookwall recover --watch 20260501-113000123-a1b2c3
  hookwall recover --list
  hookwall recover --resume 20260501-113000123-a1b2c3
`

const pauseUsage = `Usage:
  hookwall pause handler/NAME|tenant/NAME|target/NAME [--reason TEXT] [--json]

Pauses a handler, a tenant or a target: the receiver still accepts and stores their events,
and the processors hold them (HELD, no attempt spent, nothing expires) instead of running
the handler, from their next look at the pauses (within 2 s). 'hookwall resume' ends it.
Publishes hookwall.control.paused on EVENT_BUS_NAME.

Examples:
  hookwall pause target/forward/acme --reason "acme's endpoint migrates until 14:00"
  hookwall pause handler/crm.lead-from-follow
  hookwall pause tenant/acme
`

const resumeUsage = `Usage:
  hookwall resume handler/NAME|tenant/NAME|target/NAME [--no-drain] [--json]

Ends a pause and drains the events held on it: each is released (HELD → RETRY) and enqueued
at its target's rate (HOOKWALL_TARGET_RATE per second), with progress on stderr. With
--no-drain the sweeper releases them at its next rounds instead. Publishes
hookwall.control.resumed (with the count released) on EVENT_BUS_NAME.

A resume that ended a pause first waits 2.5 s, until every processor has seen it, so that
what it releases runs instead of being held again; the count is of the events that run now
(those whose target is blocked are counted apart). For a target whose breaker is open it
makes the probe due now and releases one held event to carry it; the rest follow once the
probe succeeds.

Examples:
  hookwall resume target/forward/acme
  hookwall resume tenant/acme --json
`

const targetsUsage = `Usage:
  hookwall targets [--json]

Lists the targets the processors have called, with their breaker (closed or open, the
current window's calls and failures, when it opened and when it probes next) and the events
held on each, then the pauses (scope, since, by whom, why, events held).

Examples:
  hookwall targets
  hookwall targets --json | jq '.targets[] | select(.state == "open")'
`

const versionUsage = `Usage:
  hookwall version [--json]
  hookwall --version

Prints the module version, the VCS revision the binary was built from (with "(modified)" when
the tree had uncommitted changes) and its time, and the Go version. 'go run' and 'go test'
builds carry no revision.

Examples:
  hookwall version
  hookwall version --json | jq -r .revision
`

const eventsGetUsage = `Usage:
  hookwall events get KEY [--json]

Shows one event: its record (status, version, attempts, lease, last error, times), its stored
payload, the steps journaled under its current claim (forward and $undo: steps) and its history
of transitions. --json prints the same document as the events API
(GET /events/<provider>/<tenant>/<id>). An unknown or expired key exits 3.

Examples:
  hookwall events get 'line#demo#01JDEMO0000000000000000002'
  hookwall events get 'wecom#demo#msg:1000002:7456789012345678901' --json | jq .record.payload
`

const eventsHistoryUsage = `Usage:
  hookwall events history KEY [--json]

Shows an event's transitions, oldest first: version, time, from → to, attempt, the function
that made it and the lease owner and error it recorded. A record keeps its newest transitions
only; the count of older ones dropped is shown.

Examples:
  hookwall events history 'line#demo#01JDEMO0000000000000000002'
`

const eventsListUsage = `Usage:
  hookwall events list [--status S[,S…]] [--since 1h] [--tenant T] [--limit 100] [--json]

Lists events updated since --since, newest update first. States that are not final
(RECEIVED, PROCESSING, RETRY, FAILED, COMPENSATING; the default) are found through the
sweep index, then each record is read. Final states (SUCCEEDED, COMPENSATED, DEAD) are in
no index: they are found by a Scan of the table, bounded by --scan-max items read, and a
note on stderr says so (and when the list may be incomplete). When --tenant finds no event,
the name is checked against the tenants document (HOOKWALL_TENANTS_FILE, TENANTS_SECRET_ARN
or the local runner's): a tenant it does not name exits 3; without one a note asks.

Examples:
  hookwall events list --status FAILED --since 1h
  hookwall events list --status FAILED,DEAD --since 7d --tenant acme --json
  hookwall events list --status RETRY,PROCESSING --since 30m
`

const replayUsage = `Usage:
  hookwall replay KEY [--force] [--fresh-steps] [--json]
  hookwall replay --status S[,S…] [--since 1h] [--tenant T] [--limit N] [--yes] [--force] [--fresh-steps]

Sends an event back to RECEIVED (a new version; attempts reset; kept at least
HOOKWALL_DEDUP_WINDOW) and enqueues it on QUEUE_URL from its stored payload, so the processor
runs it again. Steps already journaled stay done unless --fresh-steps, but a step whose undo
the compensator journaled (a COMPENSATED event) runs again, under a new idempotency key, so
that the business API makes again what was undone. A SUCCEEDED event is
never replayed without --force (exit 3 with the reason), nor an event a worker holds a live
lease on.

With --status it selects events as 'events list' does, prints how many and which, and stops
there (a dry run) unless --yes is given; then it replays and enqueues them, with a progress
line on a terminal, and prints what was refused or failed (exit 1 if any failed).

Examples:
  hookwall replay 'line#demo#01JDEMO0000000000000000002'
  hookwall replay 'line#demo#01JDEMO0000000000000000002' --force --fresh-steps
  hookwall replay --status FAILED --since 1h
  hookwall replay --status FAILED,DEAD --since 1h --tenant acme --yes
`

const dlqPeekUsage = `Usage:
  hookwall dlq peek [--n 10] [--json]

Shows up to --n messages of the dead-letter queue (DLQ_URL): message id, sent time, receive
count, event key and the processor's reason. The messages are hidden for a few seconds while
they are read and made visible again; none is deleted (a peek does count as a receive).
--json includes the bodies.

Examples:
  hookwall dlq peek
  hookwall dlq peek --n 50 --json | jq -r '.[].eventKey'
`

const dlqRedriveUsage = `Usage:
  hookwall dlq redrive [--to main|QUEUE-URL] [--copy] [--json]

Moves every message of the dead-letter queue (DLQ_URL) to the main queue (QUEUE_URL), or to
the queue --to names. It uses SQS's message move task (StartMessageMoveTask) where the
endpoint supports it, and waits for it; otherwise (or with --copy) it receives ten messages,
sends them to the destination, and deletes from the DLQ only those sent. A crash in between
leaves a message on both queues, never on neither: the processor absorbs the duplicate.
A progress line is shown on a terminal.

Examples:
  hookwall dlq redrive
  hookwall dlq redrive --to https://sqs.eu-west-1.amazonaws.com/123456789012/hookwall-replay --copy
`

const newHandlerUsage = `Usage:
  hookwall new handler TEAM [--event provider/type] [--dir ROOT]

Writes a new business team's package into the repository, ready to build on:
  functions/processor/handlers/TEAM/doc.go, TEAM.go, TEAM_test.go
    a platform.Team with one setting, TEAM_API_URL (unset: the team is off),
    and a Register(r *process.Registry, d platform.Deps) with one handler on
    the event (default line/message) that POSTs it to that API in a
    journaled step, a compensation stub, and a test on the kit
    (shared/engine/processtest: three deliveries at once, a crash after every
    step) that passes as written
  functions/processor/handlers/handlers.go
    the team's entry in Teams and its import, before the built-in forwarder
Then it runs 'go run ./cmd/hookwall-gen' (make generate), which writes the
setting into template.yaml and the README's handler-settings table.

TEAM is a Go package name: lower-case letters and digits, starting with a
letter, not an existing team. --event names a provider package's typed event
(line/message, line/follow, wecom/sys_approval_change, ...); another type of
that provider gets a local payload type. The root is found from the working
directory up (the go.mod of github.com/hookwall/hookwall) unless --dir says.
The README's "Add a handler" explains each part of the package.

Examples:
  hookwall new handler billing
  hookwall new handler approvals2 --event wecom/sys_approval_change
  go test ./functions/processor/handlers/billing/
`
