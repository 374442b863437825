package compensate

import "github.com/hookwall/hookwall/shared/internal/kernel"

// Message is one dead-letter message, as the compensator receives it.
type Message = kernel.Message

// Result is the result of handling one dead-letter message: its
// [Verdict], whether it is acknowledged, and for an attempt the status the
// record came from (From), the undos run (Undone) and skipped (Skipped),
// and the COMPENSATED or DEAD outcome event, if one was reached.
type Result = kernel.Result

// Verdict is what handling one dead-letter message came to.
type Verdict = kernel.Verdict

// The verdicts of the compensator: Compensated, Dead and Requeued are its
// outcomes (ack); Retried (an undo failed; not acked), Duplicate (the record
// was SUCCEEDED, COMPENSATED or DEAD; ack), Busy (a live lease elsewhere;
// not acked), Absent (no live record; ack), LeaseLost (not acked),
// Malformed (not an envelope: kept on the queue, hidden for the longest
// visibility timeout, for an operator; not acked) and Errored (a store or
// queue call failed; not acked) are the kernel's, as for every engine.
const (
	Compensated, Dead, Requeued, Retried = kernel.Compensated, kernel.Dead, kernel.Requeued, kernel.Retried
	Duplicate, Busy, Absent, LeaseLost   = kernel.Duplicate, kernel.Busy, kernel.Absent, kernel.LeaseLost
	Malformed, Errored                   = kernel.Malformed, kernel.Errored
)
