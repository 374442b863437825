package webhook

import "time"

// MaxHistoryError is the longest error text, in bytes, a history entry keeps
// (cut on a rune boundary with [Truncate]).
const MaxHistoryError = 256

// HistoryEntry is one transition of an event record, as its audit trail
// keeps it: written by the store in the same conditional write as the
// transition itself.
type HistoryEntry struct {
	// At is when the transition happened.
	At time.Time
	// From is the status before the transition ("" for the claim that
	// created the record).
	From Status
	// To is the status after the transition.
	To Status
	// Attempt is the attempt the transition belongs to: the processing
	// attempt (the record's attempts counter) for the processor's
	// transitions, the compensation attempt for the compensator's, 0 for
	// a claim or a replay.
	Attempt int
	// Owner is the lease owner that made the transition ("" if none).
	Owner string
	// Error is the error recorded with the transition ("" if none), at
	// most [MaxHistoryError] bytes.
	Error string
	// Function is the function that wrote it: "receiver", "processor",
	// "compensator", "sweeper" or "cli" ("" if unknown).
	Function string
	// Version is the record's version after the transition.
	Version int64
}
