// Package intake is the receiver's core: it verifies a webhook delivery with
// the tenant's provider parser, claims each event once in the store, hands the
// new ones to the queue and answers the provider's success reply. It is served
// both as an http.Handler (the local runner) and as an API Gateway HTTP API
// (payload 2.0) Lambda handler, so both run the identical code.
//
// Status codes (one table, [StatusFor]): the provider's reply on success (and
// for duplicates and conflicts); 401 bad signature or stale timestamp; 400
// malformed; 404 unknown provider or tenant; 405 wrong method; 413 body too
// large; 503 when DynamoDB or SQS fail, after undoing this request's claims, so
// that the platform retries. A 4xx writes nothing anywhere.
package intake
