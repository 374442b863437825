// Package approvals is an example team package, the pattern teams copy for
// handlers that write their own DynamoDB table: a WeCom approval change
// moves the approval's row (pk = SpNo) from SUBMITTED to APPROVED or
// REJECTED with a conditional state transition (store.ApplyTransition), the
// "UPDATE … WHERE status = 'SUBMITTED'" with its affected-rows check.
//
// The transition is its own idempotency: run twice, it is applied once and
// then found already in the target state; a row that moved on elsewhere is a
// conflict, logged and left alone. None of these is an error. It runs inside
// a step so that its outcome is journaled (a row found in the target state
// with this event's decidedBy counts as applied: an earlier attempt moved it).
//
// Its compensation reverts the business state: when the event ends on the
// dead-letter path and its step moved the row, the row goes back to
// SUBMITTED with the same conditional transition (from the state this event
// set; a row that moved on elsewhere is left alone). The tests prove both
// with shared/engine/processtest and shared/engine/compensate, in memory and
// against a table in DynamoDB Local.
package approvals
