// Package targets is the shared state of the targets Hookwall's handlers
// call: a circuit breaker and a token bucket per target, and the pauses of
// handlers, tenants and targets. Every processor instance, the sweeper and
// the CLI see the same state, kept in the events table (package targetsdb, through
// DynamoDB conditional writes); package memgate holds it in memory for
// unit tests, and package targetstest is the contract suite both pass.
//
// A target is a string a handler names (process.Target, default the
// handler's name). Before each handler run the engine asks [Gate.Admit]:
//
//   - A paused scope (handler, tenant or target: [Scope]) holds the event.
//   - A closed breaker admits. While its window has fewer than MinCalls
//     calls, or has a failure, each admission reserves its call with one
//     conditional write. While the window has fewer than MinCalls
//     outcomes, an admission that would push it over the failure rate if
//     every pending call failed waits (at most Config.Wait) for those
//     outcomes instead of calling; once it has MinCalls outcomes it is
//     judged on them alone (a target failing less than FailureRate keeps
//     being called at any concurrency: its events are not held); a window that
//     reached MinCalls successes with no failure admits with no write until
//     a failure is reported (each instance trusts what it read for at most
//     [BreakerCacheFor]). So a target dead from the start of a window gets
//     at most MinCalls calls in it across every instance (one that dies
//     while its window admits freely also gets the calls already under way,
//     and those other instances admit in the second before they read the
//     first failure), and healthy traffic costs at most 2 × MinCalls writes
//     per target and window (a reservation and an outcome each).
//   - An open breaker holds, except for the one caller per ProbeInterval
//     that wins the probe slot (a conditional write): it gets [Probe], and
//     the probe's success closes the breaker.
//
// [Gate.Report] records each admitted run's outcome and may open or close
// the breaker ([Transition]). [Gate.Take] takes tokens from a target's
// bucket (Config.Rate per second, a burst of one second's worth) for the
// drain of held events and for bulk recovery.
//
// Items, in the events table (no sweep index attributes, no TTL):
//
//	pk TARGET#<target>  sk BREAKER          the breaker (state, window, calls, fails, oks, probeAt, ...)
//	pk TARGET#<target>  sk BUCKET           the token bucket (millitokens, updatedAt, optional rate)
//	pk CONTROL          sk PAUSE#<kind>#<name>  a pause (by, at, reason)
//	pk CONTROL          sk TARGET#<target>  the list of targets Breakers reads (written once per target)
package targets
