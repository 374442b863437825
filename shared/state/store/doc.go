// Package store keeps Hookwall's event records in one DynamoDB table and moves
// them between states with conditional writes only.
//
// Table layout (the contract operators and tools rely on): partition key `pk`
// is the event key `provider#tenant#dedupKey`; sort key `sk` is "EVENT" for the
// record and "STEP#<handler>#<step>" for journal items (the compensator's
// undo steps are "STEP#<handler>#$undo:<step>"). Journal entries are kept
// in the record itself while they are small, as attributes
// "step#<handler>#<step>" counted by `stepBytes` ([AttrStepPrefix],
// [RecordStepBytes]): one fenced UpdateItem per write instead of a
// transaction, and the completion can carry the last ones
// ([Table.CompleteSteps]); journal items take the rest. Attribute names are those of
// architecture.md: status, version, provider, tenant, eventType, receivedAt,
// updatedAt, expiresAt (TTL, epoch seconds), leaseOwner, leaseUntil,
// attempts, payloadHash, payload, traceId, lastError; plus claimId (the
// claim's random id, fencing journal entries of an earlier, expired claim of
// the same key), enqueuedAt, occurredAt and compensations (the compensator's
// attempts). Times other than expiresAt are epoch milliseconds.
//
// Payloads: a conditional write is charged on the larger of the item before
// and after it, so the record keeps its payload (`payload`: a string, or
// gzip binary) only while it stays within one write unit through a happy
// path ([InlineRecordBytes], [RecordGrowth]); the small events of chat
// platforms do, and their claim stays one PutItem. A larger payload is
// written once, before the claim, to its own item: sk =
// "PAYLOAD#<128-bit hash prefix of the payload>" with `payload` and
// `expiresAt`, which the record refers to in `payloadRef` (see
// [SKPayloadPrefix]), so that leases, heartbeats, journal fences and
// completions stay at one write unit whatever the payload. The store's
// reads hand the payload out either way: Get, Replay, AcquireCompensation
// and LoadPayload read the payload item; Acquire does not (the processor
// has the payload in its message unless the message was too large, and then
// calls LoadPayload).
//
// Every transition increments version by one and adds its entry to the
// record's `history` map in the same conditional write: key "v<version>",
// value {at, from, to, attempt, owner, error, fn} (owner, error and from
// omitted when empty, attempt when 0, error at most 256 bytes, fn the writing function of
// [Config.Function]); the entry of version-HistoryKeep is removed in that
// write, so the map keeps the newest [Config.HistoryKeep] entries and
// [Record.HistoryDropped] counts the others. A transition that takes a lease
// (Acquire, AcquireCompensation) writes its entry keyed by a version it must
// know: its write is pinned to the record's version and status, guessed
// from the state a claim leaves or this table's last write of the key, and
// written again, pinned to the record the failed write returned, when the
// guess was wrong.
//
// From its claim a record carries sweepShard ("00".."ff", [ShardOf]) and
// sweepAt (epoch ms), the keys of the sparse, KEYS_ONLY global secondary
// index [SweepIndex] the sweeper queries ([Table.Stuck]); the write that
// makes a record SUCCEEDED, COMPENSATED or DEAD keeps both (the sweeper
// passes the entry from its per-shard cursor, [Table.SweepCursor]), and
// the entry goes when TTL deletes the record. A claim sets sweepAt = now +
// [Config.SweepAfter]; leases, heartbeats, retries and terminal writes
// leave it alone, so the index costs one put per event, at the claim.
// Every write that sets sweepAt sets it at or after its own now: the
// cursor's safety rests on it.
//
// What operators see besides transitions: `calls` (a list of the newest
// [webhook.MaxCalls] outside calls, each {at, target, status, latencyMs,
// error, snippet}) and `callCount`, written by the settling write of the
// attempt that made them (the lease carries them: [webhook.Lease.AddCalls]);
// `target`, the target the last attempt was bound for, written by every
// settling write whose lease names one ([webhook.Lease].Target; a hold's
// own target first), which `hookwall recover --handler` selects on;
// `deliveries` and `lastDeliveryAt`, written by the claim (1, receivedAt) and
// counted by each duplicate's claim in its one write ([Table.Claim]), or by
// [Table.CountDelivery] when the claim could not count it.
//
// TTL deletion is lazy, so every condition and read treats expiresAt < now as
// absent. A lost conditional race is a result, never an error.
package store
