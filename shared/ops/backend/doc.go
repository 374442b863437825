// Package backend connects the processor's and the compensator's wiring to
// AWS: it loads the AWS configuration once (with the SDK's log lines as
// JSON through slog), the tenants document, and the events table, the
// queues and the outcome bus both engines use. [Start] is the cold start
// both wirings share (that backend, the function's metrics and the teams'
// handler registry). It never imports an engine's code beyond the ports it
// fills.
package backend
