// Package iaminventory derives iam/inventory.json, the inventory of the AWS
// calls each Hookwall Lambda function can make, from the code and the SAM
// template, and checks the committed file against it (iam/README.md is the
// contract for the file and its rows).
//
// # What is derived, and from what
//
// Calls the code makes come from static analysis ([reach]): every
// operation method of an AWS SDK service client reachable from a function's
// main package, with its call site. A hand-kept binding (iam/resources.json,
// [Rules]) says which logical resource each call site acts on; a reachable
// site without a binding, a binding that matches no site and two equally
// specific bindings of one site are all errors ([Build]'s problems), so the
// bindings cannot drift from the code unnoticed. The IAM actions of an
// operation follow from it ([Actions]): SendMessageBatch needs
// sqs:SendMessage, TransactWriteItems the actions of the item kinds the
// enclosing function builds, BatchWriteItem PutItem and DeleteItem.
//
// Calls AWS makes with the function's role come from template.yaml
// ([samtmpl]): the SQS event source's poller (sqs:ReceiveMessage,
// DeleteMessage, GetQueueAttributes on the queue), the Lambda runtime's logs
// (logs:CreateLogStream, PutLogEvents on LoggingConfig.LogGroup) and X-Ray
// segments (Tracing: Active; "*": X-Ray has no resource-level permissions),
// and, when the parameter KmsKeyArn is set, KMS through SQS and DynamoDB for
// every call of the function on a resource the key encrypts (see
// [kmsActions] for which actions and the documentation they follow).
//
// # Why VTA
//
// The call graph is CHA refined by VTA (golang.org/x/tools/go/callgraph/vta),
// over the whole program (the SDK and the standard library included: they
// call back into the code), then refined by VTA once more over each
// function's reachable part. The choice weighs soundness (no reachable call
// missed: a missed call is a permission the role lacks in production),
// precision (no unreachable call reported: each is a permission granted for
// nothing, and a binding to keep) and cost. Measured on this code (call
// sites, operation and line, in Hookwall's code for receiver, processor,
// compensator):
//
//   - CHA (class hierarchy analysis) resolves an interface call to every
//     method of every type that implements the interface, and a call of a
//     function value to every address-taken function of its signature.
//     Sound but useless here: Hookwall holds its clients and stores behind
//     interfaces that test fakes, the CLI and the other functions' types
//     implement too, so every function reaches all 44 sites of the three
//     (13 operations: the receiver "scans" the table and queries the
//     sweeper's index).
//   - RTA (rapid type analysis, from each function's roots) keeps only the
//     types the function instantiates: 16, 17, 31 sites. Its one extra site
//     shows its limit: the compensator makes *store.Table values, so the
//     kernel's lease heartbeat (an interface call) resolves to
//     (*store.Table).Heartbeat, though the compensator's kernel only ever
//     holds compensate's lease adapter.
//   - VTA propagates the types (and function literals) that flow into each
//     variable, field and interface, flow-insensitively: an interface call
//     resolves to a type only where a value of it can flow. 16, 17, 30
//     sites; it costs a few seconds (the whole analysis well under a
//     minute). It is sound modulo reflection and unsafe, as CHA and RTA are.
//   - A pointer analysis (go/pointer, Andersen-style) could be more precise
//     still, but it is deprecated and gone from x/tools, never supported
//     generics (which this code and the SDK use), and costs far more on a
//     program of ~35,000 functions.
//
// VTA is context-insensitive: two callers passing closures to one
// higher-order helper (batch.Send: the queue's and the bus's retries) each
// seem to reach the other's closure, which made the processor "reach" the
// queue's SendMessageBatch through the bus's retries. [reach] removes such
// edges soundly by counting an anonymous function reachable only once its
// enclosing function is: no code can call a closure its maker never made.
// (RTA without that rule reports 30, 41, 53 sites.)
//
// Reflection is the one blind spot that matters: the Lambda runtime calls
// the handler given to lambda.Start by reflection, which no call graph sees,
// so [reach] traces the value given to lambda.Start back to the function it
// is (h.Handle) and starts there too. Other reflective calls (encoding/json
// calling a type's UnmarshalJSON or MarshalJSON, text/template) are not
// followed: a client call made only from such a method would be missed, so
// keep AWS calls out of them.
package iaminventory
