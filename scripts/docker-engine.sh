#!/usr/bin/env bash
# docker-engine.sh up|down|status: the Docker engine for `sam local` (make sam-local).
#
#   up      if an engine answers (docker info), use it and say so. Otherwise install
#           Debian's docker.io when dockerd is missing (apt; root, else sudo) and start
#           dockerd as root with no bridge network (--bridge=none, --iptables=false,
#           --ip6tables=false: containers get no network of their own, only the host's,
#           loopback included), logging to DIR/dockerd.log; its PID goes to
#           DIR/dockerd.pid, which marks the engine as started by us.
#   down    stop the engine by the PID in DIR/dockerd.pid, only if that process is the
#           dockerd we started; an engine that was already running is left alone.
#   status  say whether an engine answers and whether we started it.
#
# Env: DOCKER_ENGINE_DIR (.local/docker), DOCKER_ENGINE_TIMEOUT (60 s to answer).
# Exit 3 from up: the engine cannot start here (its log's tail is printed): use
# `make run`, which needs no Docker.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
DIR=${DOCKER_ENGINE_DIR:-$ROOT/.local/docker}
TIMEOUT=${DOCKER_ENGINE_TIMEOUT:-60}
PIDFILE=$DIR/dockerd.pid
LOG=$DIR/dockerd.log

say() { printf 'docker-engine: %s\n' "$*" >&2; }

as_root() {
	if [[ $(id -u) -eq 0 ]]; then "$@"; else sudo "$@"; fi
}

answers() { docker info >/dev/null 2>&1; }

# our_pid prints the PID in PIDFILE when it is a live dockerd.
our_pid() {
	[[ -f $PIDFILE ]] || return 1
	local pid
	pid=$(<"$PIDFILE")
	[[ $pid =~ ^[0-9]+$ ]] || return 1
	[[ -r /proc/$pid/comm && $(</proc/$pid/comm) == dockerd ]] || return 1
	echo "$pid"
}

up() {
	if answers; then
		if pid=$(our_pid); then
			say "the engine is running (pid $pid, started by an earlier make sam-local that did not stop it; scripts/docker-engine.sh down stops it)"
		else
			say "a Docker engine is running already; using it (not stopped at the end)"
		fi
		return 0
	fi
	if ! command -v dockerd >/dev/null 2>&1 && [[ ! -x /usr/sbin/dockerd ]]; then
		say "installing Debian's docker.io (apt: dockerd, containerd, runc; about 80 MB, a minute or two)"
		as_root apt-get update -q >&2
		as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends docker.io >&2
	fi
	local dockerd
	dockerd=$(command -v dockerd || echo /usr/sbin/dockerd)
	command -v docker >/dev/null 2>&1 || {
		say "no docker client on PATH after installing docker.io"
		exit 3
	}
	mkdir -p "$DIR"
	say "starting $dockerd as root: --bridge=none --iptables=false --ip6tables=false (log: $LOG)"
	# Its own session: a Ctrl-C in the terminal reaches make sam-local, which stops the
	# containers first and then this engine, by PID.
	as_root setsid "$dockerd" --bridge=none --iptables=false --ip6tables=false >"$LOG" 2>&1 </dev/null &
	local launcher=$!
	local waited=0 pid=
	while ((waited < TIMEOUT * 5)); do
		if answers; then
			if [[ -r /proc/$launcher/comm && $(</proc/$launcher/comm) == dockerd ]]; then
				pid=$launcher
			else
				pid=$(pgrep -x -n dockerd || true)
			fi
			break
		fi
		if ! kill -0 "$launcher" 2>/dev/null && ! pgrep -x dockerd >/dev/null; then
			break
		fi
		sleep 0.2
		waited=$((waited + 1))
	done
	if [[ -z $pid ]]; then
		say "the Docker engine did not start within ${TIMEOUT}s; the end of $LOG:"
		tail -n 15 "$LOG" >&2 || true
		say "without an engine, sam local cannot run here: make run runs the same functions without Docker"
		exit 3
	fi
	echo "$pid" >"$PIDFILE"
	say "engine up (pid $pid, $(docker version --format '{{.Server.Version}}' 2>/dev/null || echo '?'))"
}

down() {
	local pid
	if ! pid=$(our_pid); then
		rm -f "$PIDFILE"
		say "no engine started by make sam-local is running; nothing to stop"
		return 0
	fi
	say "stopping the Docker engine we started (pid $pid)"
	as_root kill -TERM "$pid"
	for _ in $(seq 1 150); do
		[[ -d /proc/$pid ]] || break
		sleep 0.2
	done
	if [[ -d /proc/$pid ]]; then
		say "dockerd $pid still running after 30 s; sending SIGKILL"
		as_root kill -KILL "$pid" || true
	fi
	rm -f "$PIDFILE"
	say "engine stopped"
}

status() {
	if answers; then
		if pid=$(our_pid); then echo "running (pid $pid, started by make sam-local)"; else echo "running (not started by make sam-local)"; fi
	else
		echo "not running"
		return 1
	fi
}

case ${1:-} in
up) up ;;
down) down ;;
status) status ;;
*)
	say "usage: docker-engine.sh up|down|status"
	exit 2
	;;
esac
