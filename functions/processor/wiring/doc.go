// Package wiring turns the processor's settings (shared/config/settings) into a
// ready SQS batch [Handler]: AWS clients, the tenants document, the teams'
// handlers (functions/processor/handlers) and the engine (shared/engine/dispatch).
// functions/processor/main.go calls [Build]; tests and the local runner can
// call it too.
package wiring
