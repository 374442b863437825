// Package awstest gives integration tests (build tag integration) clients for
// DynamoDB Local and the local SQS server, and their own uniquely named table
// and queues, deleted when the test ends. An unreachable service fails the
// test with a hint to run `make services-up`; it never skips.
//
// Endpoints come from AWS_ENDPOINT_URL_DYNAMODB and AWS_ENDPOINT_URL_SQS
// (defaults http://127.0.0.1:8000 and http://127.0.0.1:9324); the region is
// us-east-1 and the credentials test/test, so a test never reaches AWS.
package awstest
