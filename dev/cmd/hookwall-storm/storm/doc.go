// Package storm is the engine of hookwall-storm: it runs Hookwall in-process
// (the receiver behind a real HTTP server on 127.0.0.1 through the local
// runner's API Gateway adapter, the processor and the compensator driven by
// pollers as the Lambda SQS event source drives them, the sweeper on a
// schedule), on a table and queues of its own, and sends it a storm of
// signed webhook deliveries (LINE single and multi-event bodies, WeCom,
// WeChat safe mode, Standard Webhooks) with duplicates, retried as the
// platforms retry ([PolicyFor]) and then redelivered by hand until a
// deadline. A forward target it runs itself ([Target]) counts the effects
// per event and per idempotency key. When every event is terminal it
// reports throughput, latencies, AWS calls (SDK middleware, [Counter]), CPU,
// and the counts that must be zero: lost, doubled and never accepted
// ([Analyze], [Report]).
//
// What rescued an event ([Rescuers]) is read from the receiver's answers to
// its deliveries and from its record's history:
//
//   - receiver_undo_platform_retry: a delivery got a 5xx after a failed AWS
//     call (its claim undone) or no answer, and a platform retry was accepted;
//   - grace_reenqueue_takeover: a delivery found the record still RECEIVED
//     past the re-enqueue grace and enqueued it again (under a processing
//     backlog this is also how late duplicates behave, with no fault);
//   - lease_expiry: a processor took over a lease that had expired;
//   - processor_retry_backoff: the processor retried after a failure;
//   - dlq_compensator: the event went through the dead-letter queue and the
//     compensator (FAILED, COMPENSATING, COMPENSATED or DEAD);
//   - sweeper: the sweeper re-enqueued or dead-lettered it (it looks at a
//     record 5 minutes after its claim at the earliest, so a short storm
//     rarely needs it);
//   - manual_redelivery: accepted only after the platform's policy gave up.
//
// [Run] runs one storm; [RunChaos] runs the [Scenarios] on a private stack
// behind the fault proxy of package chaos. The outage scenarios (issue 19)
// take the forward target down ([Target.SetDown]) or pause a scope for
// longer than the processor's whole retry budget ([RetryBudget]), then
// bring it back; [AnalyzeOutage] checks from the target's call log that
// every event SUCCEEDED, that the target saw at most the breaker's minimum
// plus one probe per interval during the outage ([OutageCheck.Allowed]),
// and that the drain after it kept to the rate limit ([BucketPeak]).
//
// [RunNoisy] runs the noisy-tenant storm (issue 30): quiet tenants and one
// noisy tenant sending Factor times as much, paced and interleaved over the
// same time ([NoisyWorkload]), in pairs of storms with and without the
// noisy tenant, alternated, each on its own table and queues; it reports
// every tenant's accept → effect latencies and the quiet tenants' p99 with
// the noisy tenant over their p99 without it. Every storm checks the
// MessageGroupId of every message its pollers receive from the real queues
// against the tenant it sent the event for ([GroupReport]: a mismatch fails
// the storm).
package storm
