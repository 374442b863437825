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
//   - a page at /_hookwall/ listing recent events with their status,
//     history and journal, with a Replay button.
//
// Each event's path (received → claimed → enqueued → processing →
// forwarded → succeeded → outcome) is logged readably on a terminal and as
// JSON otherwise. [Send] signs and sends demo events ("hookwall-run send").
package localrun
