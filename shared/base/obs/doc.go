// Package obs builds Hookwall's structured logger (log/slog, JSON) and writes
// CloudWatch Embedded Metric Format (EMF) records. It imports nothing of ours.
package obs
