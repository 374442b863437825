// Package samlocal is `make sam-local`: Hookwall's three functions in
// Lambda containers under the SAM CLI, against the same local services as
// `make run` (package localrun, whose services, lock, poller, schedule,
// forward target and banner commands it reuses). [Run]:
//
//   - starts the local services (scripts/services-up.sh) and the Docker
//     engine when none answers (scripts/docker-engine.sh: Debian's
//     docker.io, dockerd as root with --bridge=none, stopped by PID at
//     the end only if this run started it);
//   - builds the local Lambda base image (scripts/lambda-image.sh: FROM
//     scratch with busybox-static, cached by the hash of its inputs), as no
//     registry image can be pulled;
//   - runs `sam build` for the local architecture (the template's
//     Architecture parameter; x86_64 on an x86-64 machine, so nothing is
//     emulated) into .aws-sam/local-<arch>, copies the tenants document
//     into every function's build and writes env.json from DDB_PORT,
//     SQS_PORT and the table and queue names (scripts/env-json.sh);
//   - runs `sam local start-api` (the receiver and the events API) and
//     `sam local start-lambda` (the processor and the compensator) with
//     --invoke-image, --skip-pull-image and --docker-network host, through
//     the Docker shim of package dockershim, which puts the containers on
//     the host network (the SAM CLI does not; aws/aws-sam-cli#3609);
//   - drives the processor and the compensator through start-lambda
//     (lambda.Invoke, [Invoker]) from the main queue and the dead-letter
//     queue the way the SQS event source mapping does (localrun.Poller
//     with the template's BatchSize, MaximumBatchingWindowInSeconds and
//     partial batch responses; the queue's redrive policy, with the
//     template's MaxReceiveCount, moves a message to the dead-letter queue),
//     and the sweeper on the template's schedule;
//   - prints the same ready-to-paste send commands as `make run`, and on
//     Ctrl-C stops the event sources, the SAM CLI and its containers, then
//     what it started of the engine and the services.
//
// [InvokeSamples] is `make sam-invoke`: `sam local invoke` on every sample
// of events/, the receiver's signed anew right before.
package samlocal
