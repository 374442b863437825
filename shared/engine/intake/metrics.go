package intake

// Metric names (EMF, PascalCase) the receiver records through
// [Config.Metrics], in namespace Hookwall with dimension Function=receiver.
const (
	// MetricReceived counts the events split out of accepted deliveries.
	MetricReceived = "Received"
	// MetricEnqueued counts the events sent to the queue.
	MetricEnqueued = "Enqueued"
	// MetricDuplicate counts the events already claimed (a redelivery).
	MetricDuplicate = "Duplicate"
	// MetricDeliveryNotCounted counts the duplicates that reached the table
	// but could not be counted on the record (deliveries, lastDeliveryAt):
	// the write failed or the budget had run out. Duplicates answered from
	// the hand-off cache never reach the table: they are counted only in
	// MetricDuplicate and MetricHandedOffHit.
	MetricDeliveryNotCounted = "DeliveryNotCounted"
	// MetricConflict counts the events whose key was claimed with another payload.
	MetricConflict = "Conflict"
	// MetricInFlight counts the redeliveries of events still being enqueued by
	// an earlier delivery.
	MetricInFlight = "InFlight"
	// MetricReenqueued counts the claimed events sent to the queue again
	// because their first enqueue never completed.
	MetricReenqueued = "Reenqueued"
	// MetricHandedOffHit counts the events answered from the hand-off cache
	// (a duplicate of an event this instance handed off: no AWS call).
	MetricHandedOffHit = "HandedOffCacheHit"
	// MetricHandedOffMiss counts the events the hand-off cache did not know
	// (while it is on): they went to DynamoDB.
	MetricHandedOffMiss = "HandedOffCacheMiss"
	// MetricCoalesced counts the duplicates that arrived while a concurrent
	// delivery to the same instance was handing the event off, and were
	// answered from its outcome with no AWS call.
	MetricCoalesced = "HandedOffCoalesced"
	// MetricLeftForRetry counts the events of a large delivery that its
	// budget did not reach: its 503 leaves them to the platform's retry,
	// which continues from the delivery's saved progress.
	MetricLeftForRetry = "LeftForRetry"
	// MetricReceiverLatency is the time to answer one delivery, in milliseconds.
	MetricReceiverLatency = "ReceiverLatency"

	// MetricRejected counts the deliveries answered with an error status.
	// Each is also counted under MetricRejected followed by its reason, one
	// of the MetricRejected… names below.
	MetricRejected = "Rejected"
	// MetricRejectedBadSignature counts deliveries refused with 401 for their signature.
	MetricRejectedBadSignature = MetricRejected + reasonBadSignature
	// MetricRejectedStaleTimestamp counts deliveries refused with 401 for their timestamp.
	MetricRejectedStaleTimestamp = MetricRejected + reasonStaleTimestamp
	// MetricRejectedMalformed counts deliveries refused with 400.
	MetricRejectedMalformed = MetricRejected + reasonMalformed
	// MetricRejectedUnknownRoute counts deliveries refused with 404.
	MetricRejectedUnknownRoute = MetricRejected + reasonUnknownRoute
	// MetricRejectedMethodNotAllowed counts deliveries refused with 405.
	MetricRejectedMethodNotAllowed = MetricRejected + reasonMethodNotAllowed
	// MetricRejectedTooLarge counts deliveries refused with 413.
	MetricRejectedTooLarge = MetricRejected + reasonTooLarge
	// MetricRejectedUnavailable counts deliveries answered with a 5xx (the
	// platform retries them).
	MetricRejectedUnavailable = MetricRejected + reasonUnavailable
)

// Reasons of rejection: the suffixes of the MetricRejected… names.
const (
	reasonBadSignature     = "BadSignature"
	reasonStaleTimestamp   = "StaleTimestamp"
	reasonMalformed        = "Malformed"
	reasonUnknownRoute     = "UnknownRoute"
	reasonMethodNotAllowed = "MethodNotAllowed"
	reasonTooLarge         = "TooLarge"
	reasonUnavailable      = "Unavailable"
)
