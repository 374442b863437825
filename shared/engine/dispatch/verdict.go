package dispatch

import "github.com/hookwall/hookwall/shared/internal/kernel"

// Message is one queue message, as the processor receives it.
type Message = kernel.Message

// Result is the result of processing one delivery: its [Verdict], whether
// it is acknowledged, the attempt, the backoff set on the message, the
// handler's error (or the failed call) and the outcome event, if one was
// reached.
type Result = kernel.Result

// Verdict is what processing one delivery came to.
type Verdict = kernel.Verdict

// The verdicts of the processor: Succeeded (ack), Failed (to the DLQ; ack
// once sent), DeadLettered (the record was already FAILED; ack) and
// Unhandled (no handler serves the type; ack) are its outcomes, and Held
// (the target is unavailable or a scope paused: the record is HELD, no
// attempt spent; ack); Retried (a
// handler failed; not acked), Duplicate (the record was terminal; ack), Busy
// (a live lease elsewhere; not acked), Absent (no live record; ack),
// LeaseLost (not acked), Malformed (not an envelope: to the DLQ; ack) and
// Errored (a store or queue call failed; not acked) are the kernel's, as for
// every engine.
const (
	Succeeded, Failed, DeadLettered, Unhandled = kernel.Succeeded, kernel.Failed, kernel.DeadLettered, kernel.Unhandled
	Retried, Duplicate, Busy, Absent           = kernel.Retried, kernel.Duplicate, kernel.Busy, kernel.Absent
	LeaseLost, Malformed, Errored              = kernel.LeaseLost, kernel.Malformed, kernel.Errored
	Held                                       = kernel.Held
)
