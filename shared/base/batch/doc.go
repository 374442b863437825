// Package batch splits a list of entries into size-bounded batches and sends
// them, resending only the entries a call did not accept. It is the loop
// shared by the SQS (shared/aws/queue) and EventBridge (shared/aws/bus) adapters;
// it is pure (stdlib only) and knows nothing of either service.
package batch
