// Package webhooktest helps the tests of every package: the vectors
// directory and a settable clock. It is imported by tests (and other
// test-support packages) only, never by code that ships.
package webhooktest
