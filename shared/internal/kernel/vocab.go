package kernel

import "github.com/hookwall/hookwall/shared/internal/registry"

// The error vocabulary the kernel shares with the team API and the phases
// (shared/internal/registry): a lost lease and a recovered panic are the
// same errors for a team, a phase and the kernel.
var errLeaseLost = registry.ErrLeaseLost

type panicError = registry.PanicError
