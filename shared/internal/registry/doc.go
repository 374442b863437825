// Package registry is the engines' view of the handler registry: the
// [Table] a team's Register fills through shared/engine/process (whose Registry is
// a defined type over Table, so that process's documentation lists only the
// team's methods), the [Entry] of each handler, and what an engine passes to
// a handler ([Call]) or to its compensation ([UndoCall]).
//
// The error vocabulary both engines and the team API share lives here too:
// [PermanentError], [ErrLeaseLost], [PanicError] and the names of the
// compensation steps ([UndoStep], [IsUndoStep]).
//
// An engine converts a team registry with (*registry.Table)(r).
package registry
