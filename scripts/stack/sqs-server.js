// sqs-server.js: local SQS (JSON 1.0 and Query protocols) on 127.0.0.1 via
// local-aws-sqs, with the Hookwall queues pre-created. See
// shared/design/local-stack.md, section 2. Started by scripts/services-up.sh from
// .local/sqs (where local-aws-sqs is installed).
//
// Env: SQS_PORT (9324), QUEUE_NAME (hookwall-events), DLQ_NAME
// (hookwall-events-dlq), MAX_RECEIVE_COUNT (10), VISIBILITY_TIMEOUT (30).
"use strict";
const { createSqsServer } = require("local-aws-sqs");

const env = (name, def) => (process.env[name] && process.env[name] !== "" ? process.env[name] : def);
const port = Number(process.argv[2] || env("SQS_PORT", "9324"));
const region = "us-east-1";
const accountId = "000000000000";
const queueName = env("QUEUE_NAME", "hookwall-events");
const dlqName = env("DLQ_NAME", "hookwall-events-dlq");
const maxReceiveCount = Number(env("MAX_RECEIVE_COUNT", "10"));
const visibilityTimeout = env("VISIBILITY_TIMEOUT", "30");

(async () => {
  const server = await createSqsServer({
    port,
    hostname: "127.0.0.1",
    region,
    accountId,
    emulateQueueCreationLifecycle: false, // default true: re-creating a deleted name fails for 60 s
    queues: [
      // MaximumMessageSize: 1 MiB, as the template sets (Hookwall's own
      // messages stay within 256 KiB; see queue.MaxBatchBytes).
      { QueueName: dlqName, Attributes: { MaximumMessageSize: "1048576" } },
      {
        QueueName: queueName,
        Attributes: {
          MaximumMessageSize: "1048576",
          VisibilityTimeout: String(visibilityTimeout),
          RedrivePolicy: JSON.stringify({
            deadLetterTargetArn: `arn:aws:sqs:${region}:${accountId}:${dlqName}`,
            maxReceiveCount,
          }),
        },
      },
    ],
  });
  console.log(
    `sqs-server: listening on http://127.0.0.1:${port} (queues ${queueName}, ${dlqName}; ` +
      `maxReceiveCount=${maxReceiveCount}, VisibilityTimeout=${visibilityTimeout})`
  );
  const stop = () => server.close(() => process.exit(0));
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
})().catch((e) => {
  console.error(e);
  process.exit(1);
});
