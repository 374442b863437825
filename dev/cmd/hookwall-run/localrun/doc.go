// Package localrun is `make run`: Hookwall on one machine, without Docker or
// the SAM CLI. [Run] starts (through scripts/services-up.sh, when they are
// not running yet) DynamoDB Local and the SQS server, writes a demo tenants
// document, and runs in one process what AWS runs as Lambda functions and
// managed services:
//
//   - the receiver, built by intake.Build exactly as the Lambda builds it,
//     behind a small HTTP server that turns each request into the API
//     Gateway HTTP API (payload 2.0) event the Lambda receives;
//   - the processor, built by functions/processor/wiring, driven from the
//     main queue the way the Lambda SQS event source drives it ([Poller]:
//     long polling, batches of up to 10, the partial batch response, acked
//     messages deleted, the others left to come back after their
//     visibility timeout; the queue's redrive policy moves a message to the
//     dead-letter queue after maxReceiveCount receives, which the local SQS
//     server implements);
//   - the compensator on the dead-letter queue and the sweeper on a
//     schedule, once functions/compensator exists;
//   - a PutEvents endpoint for the real EventBridge client
//     (AWS_ENDPOINT_URL_EVENTBRIDGE) that appends each outcome event to
//     outcomes.jsonl, and a forward target that stands for "the business";
//   - a page at /_hookwall/ listing the newest events with their status,
//     history, journal and payload, with a Replay button (recorded in the
//     history as function "page"); the events this runner's receiver
//     claimed are read by key, so the newest are listed whatever the
//     table's size, and a note says when a list is partial;
//   - the events API (GET /events/{provider}/{tenant}/{key}, IAM-protected
//     on AWS) through the same API Gateway adapter as the webhooks.
//
// Everything listens on 127.0.0.1 only, with read, write and idle timeouts
// ([Timeouts]); webhook bodies are cut at the receiver's own limit
// (HOOKWALL_MAX_BODY_BYTES) while they are read, 413 beyond it. The page,
// its API and the events API answer only requests for the runner's own
// loopback origin ([LocalOnly]: Host 127.0.0.1, localhost or [::1] with the
// runner's port, else 421; an Origin header, when present, the same origin,
// else 403), against DNS rebinding; the webhook route answers any Host.
//
// # Discovery file
//
// Once ready, the runner writes <RunDir>/runner.json ([DiscoveryFile];
// RunDir is HOOKWALL_RUN_DIR, default <repo>/.local/run) atomically (a
// temporary file renamed over it, mode 0600) and removes it when it stops.
// Other programs (the hookwall CLI, "hookwall-run send") read it through
// package shared/config/runfile, which holds the one type for it; this is
// its contract:
//
//	{
//	  "pid": 12345,                       // the runner's process id
//	  "url": "http://127.0.0.1:3000",     // receiver, page and events API
//	  "tenantsFile": "/abs/.local/run/tenants.json",
//	  "tenants": ["demo"],                // the tenants document's names
//	  "env": {                            // what reaches the runner's stack
//	    "TABLE_NAME": "...", "QUEUE_URL": "...", "DLQ_URL": "...",
//	    "AWS_ENDPOINT_URL_DYNAMODB": "...", "AWS_ENDPOINT_URL_SQS": "...",
//	    "AWS_REGION": "...", "AWS_ACCESS_KEY_ID": "...", "AWS_SECRET_ACCESS_KEY": "...",
//	    "HOOKWALL_TENANTS_FILE": "/abs/.local/run/tenants.json"
//	  }
//	}
//
// The credentials are written only when both endpoints are loopback URLs
// (the local services' made-up credentials); otherwise those two keys are
// absent and a reader uses its own credential chain. A file whose pid is
// not alive is stale (a runner killed with SIGKILL).
//
// Each event's path (received → claimed → enqueued → processing →
// forwarded → succeeded → outcome) is logged readably on a terminal and as
// JSON otherwise. [Send] signs and sends demo events ("hookwall-run send").
package localrun
