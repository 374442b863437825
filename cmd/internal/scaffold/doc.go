// Package scaffold writes a new business team's handler package into a
// Hookwall module, as `hookwall new handler <team>` does: the package under
// functions/processor/handlers/<team>/ (a platform.Team with one setting and one
// handler on a typed event, a compensation stub, and a test on the kit
// shared/engine/processtest that passes as written) and its entry, with
// its import, in functions/processor/handlers/handlers.go, before the
// built-in forwarder, which stays last. It reads and writes source files
// only; the generated settings (template.yaml, the README's table) are the
// caller's next step (`make generate`).
package scaffold
