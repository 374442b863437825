// Package skew is the skew test of `make upgrade-test` (issue #32 item 3):
// two releases of Hookwall's functions running at once, as during a
// gradual deployment or a rollback, must neither lose nor double an event.
//
// It builds the functions of the previous release (its commit from
// releases.tsv, through git archive) and of the current tree, runs each
// function as its own process in aws-lambda-go's RPC mode
// (_LAMBDA_SERVER_PORT, net/rpc "Function.Invoke"), and stands in for the
// Lambda service: API Gateway for the receiver (signed deliveries, each
// item delivered once, twice or three times as the storm does), the SQS
// event sources with partial batch responses for the processor and the
// compensator, and the sweep schedule. Each mix names which release runs
// which function, and when one changes (a rollback in the middle); after
// the storm everything settles and the mix is judged from the business
// target's effects, the table's records and the queues: 0 lost, 0
// doubled, 0 FAILED, 0 DEAD, 0 COMPENSATED.
package skew
