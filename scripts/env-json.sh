#!/usr/bin/env bash
# env-json.sh: print the SAM CLI's environment file (env.json) for `sam local`
# against the local stack on 127.0.0.1, from the same settings as the Makefile
# and scripts/lib.sh. The committed env.json is this script's output for the
# defaults (infra/templatetest fails when they drift apart); `make env-json`
# writes the output for the current settings to .local/env.json.
# Env (defaults): DDB_PORT (8000), SQS_PORT (9324), TABLE_NAME (hookwall-events),
# QUEUE_NAME (hookwall-events), DLQ_NAME (hookwall-events-dlq).
set -euo pipefail

DDB_PORT=${DDB_PORT:-8000}
SQS_PORT=${SQS_PORT:-9324}
TABLE_NAME=${TABLE_NAME:-hookwall-events}
QUEUE_NAME=${QUEUE_NAME:-hookwall-events}
DLQ_NAME=${DLQ_NAME:-hookwall-events-dlq}

die() {
	printf 'env-json: %s\n' "$*" >&2
	exit 2
}
for v in DDB_PORT SQS_PORT; do
	[[ ${!v} =~ ^[0-9]{1,5}$ ]] && ((10#${!v} >= 1 && 10#${!v} <= 65535)) || die "$v=${!v} is not a port (1 to 65535)"
done
for v in TABLE_NAME QUEUE_NAME DLQ_NAME; do
	# The names go into JSON and URLs unescaped: DynamoDB's and SQS's own alphabets.
	[[ ${!v} =~ ^[A-Za-z0-9_.-]{1,80}$ ]] || die "$v=${!v} is not a table or queue name ([A-Za-z0-9_.-], at most 80)"
done

ddb=http://127.0.0.1:$((10#$DDB_PORT))
sqs=http://127.0.0.1:$((10#$SQS_PORT))
queue=$sqs/000000000000/$QUEUE_NAME
dlq=$sqs/000000000000/$DLQ_NAME

cat <<JSON
{
  "Parameters": {
    "TABLE_NAME": "$TABLE_NAME",
    "QUEUE_URL": "$queue",
    "TENANTS_SECRET_ARN": "",
    "HOOKWALL_TENANTS_FILE": "/var/task/local-tenants.json",
    "LOG_LEVEL": "debug",
    "AWS_ENDPOINT_URL_DYNAMODB": "$ddb",
    "AWS_ENDPOINT_URL_SQS": "$sqs"
  },
  "ProcessorFunction": {
    "DLQ_URL": "$dlq",
    "EVENT_BUS_NAME": "",
    "AWS_ENDPOINT_URL_EVENTBRIDGE": ""
  },
  "CompensatorFunction": {
    "DLQ_URL": "$dlq",
    "EVENT_BUS_NAME": "",
    "AWS_ENDPOINT_URL_EVENTBRIDGE": ""
  }
}
JSON
