// Package queue sends event envelopes to SQS in batches and retries only the
// entries SQS did not accept.
package queue
