// Package bus publishes the processor's outcome events to Amazon
// EventBridge: source "hookwall", detail-type hookwall.event.succeeded or
// hookwall.event.failed, detail = the envelope's metadata (never the payload
// nor a secret). PutEvents is called with at most 10 entries, and only the
// entries EventBridge rejected are sent again.
package bus
