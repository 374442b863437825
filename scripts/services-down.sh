#!/usr/bin/env bash
# services-down.sh: stop the DynamoDB Local and SQS server processes that
# services-up.sh started (by the PIDs in .local/run/*.pid), wait for them to
# exit, and remove the PID files. Harmless when nothing runs; never touches a
# process it did not start. Usage: services-down.sh [ddb] [sqs] (default both).
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

[[ -d $RUN_DIR ]] || exit 0
if command -v flock >/dev/null 2>&1; then
	exec 9>"$RUN_DIR/.lock"
	flock -w 120 9 || die "timed out waiting for another services-up/services-down ($RUN_DIR/.lock)"
fi

stop_service() {
	local name=$1 desc=$2 pid i
	if ! pid=$(our_pid "$name"); then
		[[ -f $RUN_DIR/$name.pid ]] && log "$desc: not running (removing stale $name.pid)"
		rm -f "$RUN_DIR/$name.pid"
		return 0
	fi
	log "$desc: stopping pid $pid"
	kill -TERM "$pid" 2>/dev/null || true
	for i in $(seq 1 100); do # up to 10 s
		pid_running "$pid" || break
		sleep 0.1
	done
	if pid_running "$pid"; then
		log "$desc: pid $pid still alive after 10 s, sending SIGKILL"
		kill -KILL "$pid" 2>/dev/null || true
		for i in $(seq 1 50); do
			pid_running "$pid" || break
			sleep 0.1
		done
	fi
	rm -f "$RUN_DIR/$name.pid"
	log "$desc: stopped"
}

# Arguments: which services to stop (ddb, sqs; default both). The runner of
# `make run` stops only those it started.
(($#)) || set -- sqs ddb
for name in "$@"; do
	case $name in
	sqs) stop_service sqs "SQS server" ;;
	ddb) stop_service ddb "DynamoDB Local" ;;
	*) die "unknown service '$name' (want ddb or sqs)" ;;
	esac
done
[[ -n $(our_pid ddb) || -n $(our_pid sqs) ]] || rm -f "$RUN_DIR/env.sh"
