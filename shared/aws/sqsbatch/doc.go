// Package sqsbatch adapts an engine on the leased-attempt kernel (the
// processor's dispatch.Dispatcher, the compensator's compensate.Compensator)
// to the Lambda SQS event source with partial batch responses: an
// events.SQSEvent in, an events.SQSEventResponse naming the messages to keep
// out. It never fails the whole batch for one message. A local runner that
// polls SQS itself can use [Messages] and [Response] with the same engine.
package sqsbatch
