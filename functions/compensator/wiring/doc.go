// Package wiring turns the compensator's settings (shared/config/settings) into a
// ready Lambda [Handler] for both of its event sources: the dead-letter
// queue (an SQS batch: shared/engine/compensate, with the processor's handler
// registry from functions/processor/handlers) and the EventBridge schedule
// (sweep mode: shared/engine/sweep). functions/compensator/main.go calls [Build];
// tests and the local runner can call it, or [New] with their own parts.
package wiring
