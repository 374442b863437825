package kernel

import "github.com/hookwall/hookwall/shared/process"

// The error vocabulary the kernel shares with the team API: a lost lease
// and a recovered panic are the same errors for a team, a phase and the
// kernel.
var errLeaseLost = process.ErrLeaseLost

type panicError = process.PanicError
