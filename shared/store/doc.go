// Package store keeps Hookwall's event records in one DynamoDB table and moves
// them between states with conditional writes only.
//
// Table layout (the contract operators and tools rely on): partition key `pk`
// is the event key `provider#tenant#dedupKey`; sort key `sk` is "EVENT" for the
// record and "STEP#<handler>#<step>" for journal entries. Attribute names are
// those of architecture.md: status, version, provider, tenant, eventType,
// receivedAt, updatedAt, expiresAt (TTL, epoch seconds), leaseOwner,
// leaseUntil, attempts, payloadHash, payload, traceId, lastError; plus
// claimId (the claim's random id, fencing journal entries of an earlier,
// expired claim of the same key), enqueuedAt and occurredAt.
// Times other than expiresAt are epoch milliseconds.
//
// TTL deletion is lazy, so every condition and read treats expiresAt < now as
// absent. A lost conditional race is a result, never an error.
package store
