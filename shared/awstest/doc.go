// Package awstest gives integration tests real AWS SDK clients for the local
// services (DynamoDB Local and the SQS server started by `make services-up`),
// and creates a fresh, uniquely named table or queue per test so tests never
// share state. A service that does not answer fails the test with a hint; it
// never skips.
package awstest
