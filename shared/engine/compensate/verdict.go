package compensate

import "github.com/hookwall/hookwall/shared/internal/kernel"

// The compensator's outcomes, as a result's Verdict: every journaled step
// with a compensation undone, the record COMPENSATED (ack); nothing to
// compensate, a permanent undo error or the attempts exhausted, the record
// DEAD with the reason (ack); the processor never finished the event and
// there was nothing to compensate, its record RETRY and the event back on
// the main queue (ack). The other verdicts are the kernel's, the same for
// every engine. A body that is not an envelope (Malformed) is kept on the
// dead-letter queue, hidden for the longest visibility timeout, for an
// operator (not acked).
const Compensated, Dead, Requeued = kernel.Compensated, kernel.Dead, kernel.Requeued
