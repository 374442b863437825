// Package bus publishes Hookwall's events to Amazon EventBridge, source
// "hookwall":
//   - outcome events ([Publisher.Publish]): hookwall.event.succeeded,
//     failed, compensated or dead, detail = the envelope's metadata;
//   - operational events ([Publisher.PublishOps]): hookwall.attempt.exhausted,
//     hookwall.circuit.opened/closed, hookwall.event.recovered and
//     hookwall.control.paused/resumed, detail = [OpDetail].
//
// No detail carries a payload or a secret. PutEvents is called with at most
// 10 entries, and only the entries EventBridge rejected are sent again.
package bus
