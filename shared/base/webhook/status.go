package webhook

// Status is the state of an event record (architecture.md "States").
type Status string

// Record states, stored verbatim in the `status` attribute.
const (
	StatusReceived   Status = "RECEIVED"
	StatusProcessing Status = "PROCESSING"
	StatusRetry      Status = "RETRY"
	// StatusHeld: the event waits for its target (an open circuit breaker)
	// or for a paused handler, tenant or target; no call was made and no
	// attempt spent. The drain or the sweeper moves it to RETRY. Not terminal.
	StatusHeld         Status = "HELD"
	StatusSucceeded    Status = "SUCCEEDED"
	StatusFailed       Status = "FAILED"
	StatusCompensating Status = "COMPENSATING"
	StatusCompensated  Status = "COMPENSATED"
	StatusDead         Status = "DEAD"
)

// String returns the stored form of s.
func (s Status) String() string { return string(s) }

// Terminal reports whether s is final: a delivery that finds it is a duplicate.
func (s Status) Terminal() bool {
	return s == StatusSucceeded || s == StatusCompensated || s == StatusDead
}
