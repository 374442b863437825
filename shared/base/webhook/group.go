package webhook

// AttrEventKey is the SQS message attribute carrying the event key, so that
// a message can be traced, and its group found, without parsing its body.
const AttrEventKey = "hookwall-event-key"

// MessageGroup is the group of a queued event's message: its own group (the
// message's MessageGroupId), when it has one; else the tenant of its event
// key (the [AttrEventKey] attribute), when the key is well formed and the
// tenant valid; else "" (none). A new message's group is its tenant, so
// that SQS fair queues, and a batch's handling of its messages, serve a
// quiet tenant before a noisy tenant's backlog. shared/aws/queue keeps it when
// it moves a message, shared/aws/sqsbatch reads it from a Lambda batch.
func MessageGroup(own, key string) string {
	if own != "" {
		return own
	}
	if _, tenant, _, ok := SplitKey(key); ok && ValidTenant(tenant) {
		return tenant
	}
	return ""
}
