// Package chaos injects faults between Hookwall and its local AWS stand-ins
// (DynamoDB Local and the SQS server) for the hookwall-storm tool.
//
// Three layers:
//
//   - [StartStack] starts a private DynamoDB Local + SQS server pair on
//     chosen ports via scripts/services-up.sh (its own run dir, never the
//     shared stack on 8000/9324); [Stack.Stop] stops it via services-down.sh.
//   - [Start] runs toxiproxy in-process with one TCP proxy per [Target];
//     Hookwall's clients talk to [Harness.DynamoURL] / [Harness.SQSURL] and
//     the faults ([Harness.Latency], [Harness.Timeout], [Harness.ResetPeer],
//     [Harness.Outage], [Harness.AddToxic]) are switched on and off at run time.
//   - [Pause] freezes a server process (SIGSTOP) so that connections are
//     accepted by the kernel but nothing is answered.
//
// Toxiproxy decides toxicity per connection, not per request: when a toxic
// is added (or a connection is opened) each connection draws once whether
// the toxic applies to it. With HTTP keep-alive a pooled connection that drew
// "toxic" stays toxic for every request it carries until it is closed, and one
// that drew "clean" stays clean. Toxicity 1 (or 0) is exact. Note too that
// the AWS SDK retries connection errors (refused, reset, EOF) by default, so
// a partial fault may only show as extra latency.
//
// Typical use:
//
//	ddbPort, _ := chaos.FreePort()
//	sqsPort, _ := chaos.FreePort()
//	stack, err := chaos.StartStack(ctx, runDir, ddbPort, sqsPort)
//	...
//	defer stack.Stop()
//	h, err := chaos.Start(ctx, strings.TrimPrefix(stack.DynamoURL, "http://"),
//		strings.TrimPrefix(stack.SQSURL, "http://"))
//	...
//	defer h.Close()
//	cmd.Env = append(os.Environ(), stack.EnvVia(h)...) // Hookwall talks via the proxies
//	remove, err := h.Latency(chaos.Dynamo, 200*time.Millisecond, 50*time.Millisecond, 1)
//	...
//	remove()
package chaos
