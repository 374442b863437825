// Package pretraffic is the CodeDeploy pre-traffic hook of the receiver's and
// the processor's deployments (functions/pretraffic; docs/SAM.md "Gradual
// deployment"). CodeDeploy calls it with a DeploymentId and a
// LifecycleEventHookExecutionId before it moves any traffic to a new
// version; the hook invokes the new versions directly (their version ARNs,
// never the alias the platforms reach) and reports Succeeded or Failed with
// codedeploy:PutLifecycleEventHookExecutionStatus. The status call is made
// on every run, whatever failed before it: a run that never reports leaves
// the deployment waiting an hour before CodeDeploy fails it.
//
// Every check writes nothing, so a hook run leaves no record in the events
// table, no message on a queue and no effect in a business system:
//
//   - For each provider, the first tenant (by name) with a request that
//     writes nothing is sent that request signed with its own secrets from
//     the stack's tenants document: the URL-verification handshake of
//     WeCom, WeChat, Slack and Feishu (the answer must be the expected
//     echo), or a delivery of no event for LINE (the provider's success
//     reply). The same request signed with the provider's published demo
//     secrets must be refused (4xx). The receiver answers both before it
//     touches the table.
//   - The receiver's events API reads the record of a fresh, random key
//     from the deployed table: 404 (a 503 says the new version cannot read
//     it).
//   - The processor gets an SQS batch of one well-formed message for that
//     key. Its lease is one conditional write that requires the record to
//     exist, so nothing is written; the processor acknowledges the message
//     (no batch item failure, no function error).
//   - The events API reads the key again: still 404, so the processor wrote
//     nothing.
//
// A tenants document with only Standard Webhooks tenants has no request
// that writes nothing; the signed checks are then skipped (logged), the
// others still run. Both deployment groups call the same hook, and each run
// checks both new versions (the stack's update deploys them together).
package pretraffic
