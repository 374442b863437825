// Package sqsbatch adapts a [dispatch.Dispatcher] to the Lambda SQS event
// source with partial batch responses: an events.SQSEvent in, an
// events.SQSEventResponse naming the messages to keep out. It never fails the
// whole batch for one message. A local runner that polls SQS itself can use
// [Deliveries] and [Response] with the same dispatcher. [ResponseOf] builds
// the same response from another engine's results (the compensator's).
package sqsbatch
