#!/usr/bin/env bash
# services-up.sh: install (if needed) and start DynamoDB Local and the SQS
# server on 127.0.0.1, then create the events table (TTL on expiresAt) and the
# queues. Idempotent: a service already answering on its port is left alone,
# so running this twice leaves one of each.
#
# Progress goes to stderr; the env exports the app needs go to stdout (and to
# .local/run/env.sh), so `eval "$(scripts/services-up.sh)"` works.
# PIDs: .local/run/{ddb,sqs}.pid; logs: .local/run/{ddb,sqs}.log.
# Env: see scripts/lib.sh (DDB_PORT, SQS_PORT, TABLE_NAME, QUEUE_NAME, DLQ_NAME, ...).
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

validate_settings
need_cmds java javac node npm curl
mkdir -p "$RUN_DIR"

# One services-up/down at a time (two `make test` runs started together).
if command -v flock >/dev/null 2>&1; then
	exec 9>"$RUN_DIR/.lock"
	flock -w 120 9 || die "timed out waiting for another services-up/services-down ($RUN_DIR/.lock)"
fi

"$ROOT/scripts/stack-install.sh"

# start_service NAME PORT DESCRIPTION CMD...: start CMD in the background (own
# session, cwd RUN_DIR) unless the port already answers or our earlier
# instance is still starting. CMD's PID (exec, no wrapper) goes to NAME.pid.
start_service() {
	local name=$1 port=$2 desc=$3 pid
	shift 3
	if pid=$(our_pid "$name"); then
		log "$desc: already running (pid $pid, port $port)"
		return 0
	fi
	rm -f "$RUN_DIR/$name.pid"
	if "${name}_answers"; then
		log "$desc: something already answers on 127.0.0.1:$port (not started by this script; services-down will leave it)"
		return 0
	fi
	log "$desc: starting on 127.0.0.1:$port (log ${RUN_DIR#"$ROOT"/}/$name.log)"
	# setsid: survives Ctrl-C in the calling terminal; exec keeps $! == server PID;
	# 9>&- so the server does not inherit (and hold) the lock.
	(cd "$RUN_DIR" && exec setsid "$@" </dev/null >"$RUN_DIR/$name.log" 2>&1 9>&-) &
	pid=$!
	echo "$pid" >"$RUN_DIR/$name.pid"
	STARTED+=("$name")
}

# wait_service NAME PORT DESCRIPTION: wait until it answers; on timeout or
# early exit show the log tail, stop what we started, and fail.
wait_service() {
	local name=$1 port=$2 desc=$3 deadline=$((SECONDS + SERVICES_START_TIMEOUT)) t0=$SECONDS pid
	until "${name}_answers"; do
		if [[ -f $RUN_DIR/$name.pid ]] && ! our_pid "$name" >/dev/null; then
			log_tail "$name"
			rm -f "$RUN_DIR/$name.pid"
			die "$desc exited before answering on 127.0.0.1:$port (log above: ${RUN_DIR#"$ROOT"/}/$name.log)"
		fi
		if ((SECONDS >= deadline)); then
			log_tail "$name"
			if pid=$(our_pid "$name"); then
				kill "$pid" 2>/dev/null || true
				rm -f "$RUN_DIR/$name.pid"
			fi
			die "$desc did not answer on 127.0.0.1:$port within ${SERVICES_START_TIMEOUT}s (SERVICES_START_TIMEOUT); last HTTP status $RESP_CODE"
		fi
		sleep 0.2
	done
	log "$desc: answering on 127.0.0.1:$port (waited $((SECONDS - t0)) s)"
}

# On failure, stop what this run started (logs stay in .local/run/).
STARTED=()
on_exit() {
	local rc=$? name pid
	((rc != 0)) || return 0
	for name in "${STARTED[@]}"; do
		if pid=$(our_pid "$name"); then
			log "stopping $name (pid $pid) started by this failed run"
			kill "$pid" 2>/dev/null || true
		fi
		rm -f "$RUN_DIR/$name.pid"
	done
	exit "$rc"
}
trap on_exit EXIT

start_service ddb "$DDB_PORT" "DynamoDB Local" \
	env DDB_LOCAL_TELEMETRY=0 java $DDB_JAVA_OPTS \
	-Djava.library.path="$DDB_DIR/DynamoDBLocal_lib" \
	-cp "$DDB_DIR/DynamoDBLocal.jar:$DDB_DIR/launcher" \
	DdbLocal127 -inMemory -sharedDb -disableTelemetry -port "$DDB_PORT"
start_service sqs "$SQS_PORT" "SQS server" \
	node "$SQS_DIR/sqs-server.js" "$SQS_PORT"
wait_service sqs "$SQS_PORT" "SQS server"
wait_service ddb "$DDB_PORT" "DynamoDB Local"

# --- DynamoDB table -----------------------------------------------------------
ddb() { aws_json "$DDB_URL" "DynamoDB_20120810.$1" "$2"; }

# The sweeper's sparse GSI (as template.yaml's EventsTable): sweepShard HASH S,
# sweepAt RANGE N, KEYS_ONLY.
SWEEP_ATTRS='{"AttributeName":"sweepShard","AttributeType":"S"},{"AttributeName":"sweepAt","AttributeType":"N"}'
SWEEP_GSI='{"IndexName":"sweep","KeySchema":[{"AttributeName":"sweepShard","KeyType":"HASH"},{"AttributeName":"sweepAt","KeyType":"RANGE"}],"Projection":{"ProjectionType":"KEYS_ONLY"}}'
# The held records' sparse GSI (as template.yaml's EventsTable): heldOn HASH S,
# heldSince RANGE N, KEYS_ONLY.
HELD_ATTRS='{"AttributeName":"heldOn","AttributeType":"S"},{"AttributeName":"heldSince","AttributeType":"N"}'
HELD_GSI='{"IndexName":"held","KeySchema":[{"AttributeName":"heldOn","KeyType":"HASH"},{"AttributeName":"heldSince","KeyType":"RANGE"}],"Projection":{"ProjectionType":"KEYS_ONLY"}}'

ddb DescribeTable "{\"TableName\":\"$TABLE_NAME\"}"
if [[ $RESP_CODE != 200 ]]; then
	[[ $RESP_BODY == *ResourceNotFoundException* ]] || die "DescribeTable $TABLE_NAME: HTTP $RESP_CODE $RESP_BODY"
	ddb CreateTable "{\"TableName\":\"$TABLE_NAME\",\"BillingMode\":\"PAY_PER_REQUEST\",
\"AttributeDefinitions\":[{\"AttributeName\":\"pk\",\"AttributeType\":\"S\"},{\"AttributeName\":\"sk\",\"AttributeType\":\"S\"},$SWEEP_ATTRS,$HELD_ATTRS],
\"KeySchema\":[{\"AttributeName\":\"pk\",\"KeyType\":\"HASH\"},{\"AttributeName\":\"sk\",\"KeyType\":\"RANGE\"}],
\"GlobalSecondaryIndexes\":[$SWEEP_GSI,$HELD_GSI]}"
	if [[ $RESP_CODE == 200 ]]; then
		log "table $TABLE_NAME: created (PAY_PER_REQUEST, pk HASH S, sk RANGE S, GSIs sweep and held)"
	elif [[ $RESP_BODY != *ResourceInUseException* ]]; then
		die "CreateTable $TABLE_NAME: HTTP $RESP_CODE $RESP_BODY"
	fi
else
	log "table $TABLE_NAME: exists"
fi
for _ in $(seq 1 100); do
	ddb DescribeTable "{\"TableName\":\"$TABLE_NAME\"}"
	[[ $RESP_CODE == 200 && "$(json_get Table.TableStatus <<<"$RESP_BODY")" == ACTIVE ]] && break
	sleep 0.1
done
[[ "$(json_get Table.TableStatus <<<"$RESP_BODY")" == ACTIVE ]] || die "table $TABLE_NAME is not ACTIVE: $RESP_BODY"
keys=$(json_get Table.KeySchema <<<"$RESP_BODY")
[[ $keys == '[{"AttributeName":"pk","KeyType":"HASH"},{"AttributeName":"sk","KeyType":"RANGE"}]' ]] ||
	log "WARNING: table $TABLE_NAME has key schema $keys, expected pk HASH + sk RANGE"

# A table created before the sweep index gets it added (never recreated).
if [[ "$(json_get Table.GlobalSecondaryIndexes <<<"$RESP_BODY")" != *'"IndexName":"sweep"'* ]]; then
	ddb UpdateTable "{\"TableName\":\"$TABLE_NAME\",\"AttributeDefinitions\":[$SWEEP_ATTRS],
\"GlobalSecondaryIndexUpdates\":[{\"Create\":$SWEEP_GSI}]}"
	[[ $RESP_CODE == 200 ]] || die "UpdateTable $TABLE_NAME (add GSI sweep): HTTP $RESP_CODE $RESP_BODY"
	log "table $TABLE_NAME: GSI sweep added"
else
	log "table $TABLE_NAME: GSI sweep exists"
fi

# A table created before the held index gets it added (never recreated). One
# index per UpdateTable: wait for the table (and a sweep index just added) to
# be ACTIVE first.
wait_active() {
	for _ in $(seq 1 100); do
		ddb DescribeTable "{\"TableName\":\"$TABLE_NAME\"}"
		[[ $RESP_CODE == 200 && "$(json_get Table.TableStatus <<<"$RESP_BODY")" == ACTIVE &&
			"$(json_get Table.GlobalSecondaryIndexes <<<"$RESP_BODY")" != *CREATING* ]] && return 0
		sleep 0.1
	done
	die "table $TABLE_NAME is not ACTIVE: $RESP_BODY"
}
wait_active
if [[ "$(json_get Table.GlobalSecondaryIndexes <<<"$RESP_BODY")" != *'"IndexName":"held"'* ]]; then
	ddb UpdateTable "{\"TableName\":\"$TABLE_NAME\",\"AttributeDefinitions\":[$HELD_ATTRS],
\"GlobalSecondaryIndexUpdates\":[{\"Create\":$HELD_GSI}]}"
	[[ $RESP_CODE == 200 ]] || die "UpdateTable $TABLE_NAME (add GSI held): HTTP $RESP_CODE $RESP_BODY"
	log "table $TABLE_NAME: GSI held added"
else
	log "table $TABLE_NAME: GSI held exists"
fi

ddb DescribeTimeToLive "{\"TableName\":\"$TABLE_NAME\"}"
ttl_status=$(json_get TimeToLiveDescription.TimeToLiveStatus <<<"$RESP_BODY")
ttl_attr=$(json_get TimeToLiveDescription.AttributeName <<<"$RESP_BODY")
if [[ $ttl_status == ENABLED || $ttl_status == ENABLING ]]; then
	[[ $ttl_attr == expiresAt ]] || log "WARNING: table $TABLE_NAME has TTL on '$ttl_attr', expected expiresAt"
	log "table $TABLE_NAME: TTL $ttl_status on $ttl_attr"
else
	ddb UpdateTimeToLive "{\"TableName\":\"$TABLE_NAME\",\"TimeToLiveSpecification\":{\"Enabled\":true,\"AttributeName\":\"expiresAt\"}}"
	[[ $RESP_CODE == 200 ]] || die "UpdateTimeToLive $TABLE_NAME: HTTP $RESP_CODE $RESP_BODY"
	ddb DescribeTimeToLive "{\"TableName\":\"$TABLE_NAME\"}"
	ttl_status=$(json_get TimeToLiveDescription.TimeToLiveStatus <<<"$RESP_BODY")
	[[ $ttl_status == ENABLED || $ttl_status == ENABLING ]] || die "TTL not enabled on $TABLE_NAME: $RESP_BODY"
	log "table $TABLE_NAME: TTL enabled on expiresAt"
fi

# --- SQS queues -------------------------------------------------------------------
# Normally pre-created by sqs-server.js; (re)create them if missing (e.g. the
# server was already running, or a test deleted them). CreateQueue with the
# same attributes is idempotent.
sqs() { aws_json "$SQS_URL" "AmazonSQS.$1" "$2"; }

# ensure_queue NAME ATTRIBUTES_JSON: print the queue URL.
ensure_queue() {
	local name=$1 attrs=$2
	sqs GetQueueUrl "{\"QueueName\":\"$name\"}"
	if [[ $RESP_CODE != 200 ]]; then
		sqs CreateQueue "{\"QueueName\":\"$name\",\"Attributes\":$attrs}"
		[[ $RESP_CODE == 200 ]] || die "CreateQueue $name: HTTP $RESP_CODE $RESP_BODY"
		log "queue $name: created"
	else
		log "queue $name: exists"
	fi
	json_get QueueUrl <<<"$RESP_BODY"
}

dlq_url=$(ensure_queue "$DLQ_NAME" '{"MaximumMessageSize":"1048576"}')
sqs GetQueueAttributes "{\"QueueUrl\":\"$dlq_url\",\"AttributeNames\":[\"QueueArn\"]}"
dlq_arn=$(json_get Attributes.QueueArn <<<"$RESP_BODY")
[[ -n $dlq_arn ]] || die "GetQueueAttributes $DLQ_NAME: no QueueArn: HTTP $RESP_CODE $RESP_BODY"
redrive="{\\\"deadLetterTargetArn\\\":\\\"$dlq_arn\\\",\\\"maxReceiveCount\\\":$MAX_RECEIVE_COUNT}"
queue_url=$(ensure_queue "$QUEUE_NAME" "{\"MaximumMessageSize\":\"1048576\",\"VisibilityTimeout\":\"$VISIBILITY_TIMEOUT\",\"RedrivePolicy\":\"$redrive\"}")
sqs GetQueueAttributes "{\"QueueUrl\":\"$queue_url\",\"AttributeNames\":[\"All\"]}"
have_vt=$(json_get Attributes.VisibilityTimeout <<<"$RESP_BODY")
have_mrc=$(json_get Attributes.RedrivePolicy <<<"$RESP_BODY" | json_get maxReceiveCount)
[[ $have_vt == "$VISIBILITY_TIMEOUT" && $have_mrc == "$MAX_RECEIVE_COUNT" ]] ||
	log "WARNING: queue $QUEUE_NAME has VisibilityTimeout=$have_vt maxReceiveCount=$have_mrc, wanted $VISIBILITY_TIMEOUT/$MAX_RECEIVE_COUNT (restart with services-down/services-up)"

# --- env ----------------------------------------------------------------------
env_text="export AWS_ENDPOINT_URL_DYNAMODB=$DDB_URL
export AWS_ENDPOINT_URL_SQS=$SQS_URL
export TABLE_NAME=$TABLE_NAME
export QUEUE_URL=$queue_url
export DLQ_URL=$dlq_url
export AWS_REGION=$STACK_REGION
export AWS_ACCESS_KEY_ID=test
export AWS_SECRET_ACCESS_KEY=test"
env_file=${STACK_ENV_FILE:-$RUN_DIR/env.sh} # the runner of `make run` passes its own
mkdir -p "$(dirname "$env_file")"
printf '%s\n' "$env_text" >"$env_file"
# On a terminal the exports follow the announcement; otherwise (make run's
# runner reads them from the pipe) the log line only says where they are.
if [[ -t 1 ]]; then
	log "ready. Env for the app (also in ${env_file#"$ROOT"/}):"
else
	log "ready (the env for the app is in ${env_file#"$ROOT"/})"
fi
printf '%s\n' "$env_text"
