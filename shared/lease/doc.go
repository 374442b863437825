// Package lease holds what the processor ([dispatch]) and the compensator
// ([compensate]) share about one attempt at an event under a lease: the
// lease and retry settings with their defaults and validation, the lease's
// end, and the heartbeat that keeps the lease and cancels the attempt when
// it is lost. It imports no AWS SDK and nothing of ours but the domain.
//
// [dispatch]: github.com/hookwall/hookwall/shared/dispatch
// [compensate]: github.com/hookwall/hookwall/shared/compensate
package lease
