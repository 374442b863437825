package webhook

// Status is the state of an event record (architecture.md "States").
type Status string

// Record states, stored verbatim in the `status` attribute.
const (
	StatusReceived     Status = "RECEIVED"
	StatusProcessing   Status = "PROCESSING"
	StatusRetry        Status = "RETRY"
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
