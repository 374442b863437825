// Package webhook holds Hookwall's domain vocabulary: providers, the raw
// request a provider verifies, the events it yields, the record states, and the
// sentinel errors every layer branches on. It imports only the standard library.
package webhook
