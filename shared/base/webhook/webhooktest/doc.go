// Package webhooktest helps the tests of every package: the vectors
// directory, a settable clock, and recorders of what an engine sends out
// (outcome events, visibility changes, dead letters). It is imported by tests (and other
// test-support packages) only, never by code that ships.
package webhooktest
