// Package webhooktest helps the tests of the providers and the receiver. It
// is imported by tests (and other test-support packages) only, never by
// code that ships.
package webhooktest
