#!/usr/bin/env bash
# protocol.sh: the side-by-side performance protocol of issue 33 (`make perf`,
# `make peer`, `make perf-release`, and a bisection step).
#
#   scripts/perf/protocol.sh [SIDE...]       (default: hookwall@. powertools)
#
# A SIDE is `hookwall@REV` (the Hookwall twin, dev/cmd/hookwall-peer, built from
# git revision REV, or from the working tree for `.`) or `powertools` (the
# Powertools TypeScript idempotency peer bench, from PEER_SRC). Every round
# runs each side once, in an order that rotates from round to round (with two
# sides: alternated), and every run gets a FRESH stack of its own: a new
# DynamoDB Local (in memory) and, for Hookwall, a new queue server, started
# before the run and stopped after it, so that no run inherits another's JVM,
# table or queue. Each run warms up at its own pace (PERF_WARMUP unique events)
# before its measured window of PERF_N unique events (30% delivered twice, 10%
# three times, PERF_C concurrent deliveries).
#
# Per run, in $PERF_OUT/<side>-<round>.json (the bench's own JSON, plus a
# `protocol` member): deliveries/s, latency p50/p99, and the CPU of the whole
# machine: the client process, DynamoDB Local and the queue server, each per
# delivery, the machine's busy CPU per delivery and the other processes'
# (noise), and the load average. scripts/perf/summary.py prints the medians
# and the ratios of the first side to each other side.
#
# Warm-up is to a steady state, not a count: before the measured
# invocation, the side's own bench runs against the fresh stack in short
# invocations (1,000 unique events each, no check) until at least
# PERF_WARMUP_S seconds have passed and three invocations in a row ran within
# PERF_WARMUP_TOL percent of their mean deliveries/s (at most
# PERF_WARMUP_MAX_S seconds), so that each stack is "warmed at its own rate"
# (issue 33) whatever calls a side makes per event: DynamoDB Local's JIT
# warms with the calls it serves, and a fixed count of events leaves the
# server of a side that makes fewer calls per event colder
# (docs/PERFORMANCE.md).
#
# Env (defaults): ROUNDS (3), PERF_N (2000), PERF_C (16), PERF_WARMUP (3000),
# PERF_WARMUP_S (45), PERF_WARMUP_MAX_S (150), PERF_WARMUP_TOL (5),
# PERF_DDB_PORT (8100), PERF_SQS_PORT (9424), PERF_OUT
# (.local/perf/<UTC time>), PERF_WORK (.local/perf-work: builds, the peer's
# npm install), PEER_SRC (../shared/peers/powertools), GO (go).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$ROOT"
ROUNDS=${ROUNDS:-3}
PERF_N=${PERF_N:-2000}
PERF_C=${PERF_C:-16}
PERF_WARMUP=${PERF_WARMUP:-3000}
PERF_WARMUP_S=${PERF_WARMUP_S:-45}
PERF_WARMUP_MAX_S=${PERF_WARMUP_MAX_S:-150}
PERF_WARMUP_TOL=${PERF_WARMUP_TOL:-5}
PERF_DDB_PORT=${PERF_DDB_PORT:-8100}
PERF_SQS_PORT=${PERF_SQS_PORT:-9424}
PERF_OUT=${PERF_OUT:-$ROOT/.local/perf/$(date -u +%Y%m%dT%H%M%SZ)}
PERF_WORK=${PERF_WORK:-$ROOT/.local/perf-work}
PEER_SRC=${PEER_SRC:-$ROOT/../shared/peers/powertools}
GO=${GO:-go}
log() { printf '[perf] %s\n' "$*" >&2; }
die() {
	log "ERROR: $*"
	exit 1
}

sides=("$@")
((${#sides[@]})) || sides=("hookwall@." powertools)
mkdir -p "$PERF_OUT" "$PERF_WORK/bin"

# build_hookwall REV: the twin of revision REV (. = the working tree) into
# $PERF_WORK/bin, built in the package's own module (so it works whether
# cmd/hookwall-peer is in the root module or in a module of its own).
declare -A bins
build_hookwall() {
	local rev=$1 src id bin
	if [[ $rev == . ]]; then
		src=$ROOT id=worktree
	else
		id=$(git rev-parse --short=12 "$rev^{commit}") || die "no such revision: $rev"
		src=$PERF_WORK/src-$id
		if [[ ! -d $src ]]; then
			log "extracting $rev ($id) into $src"
			mkdir -p "$src"
			git archive "$id" | tar -x -C "$src"
		fi
	fi
	bin=$PERF_WORK/bin/hookwall-peer-$id
	local pkg=$src/dev/cmd/hookwall-peer # since the harnesses' own module; before it, cmd/hookwall-peer
	[[ -d $pkg ]] || pkg=$src/cmd/hookwall-peer
	[[ -d $pkg ]] || die "$rev has no dev/cmd/hookwall-peer nor cmd/hookwall-peer"
	log "building the Hookwall twin of $rev into $bin"
	(cd "$pkg" && "$GO" build -o "$bin" .)
	bins[$rev]=$bin
	srcs[$rev]=$src
}
declare -A srcs
for s in "${sides[@]}"; do
	case $s in
	hookwall@*) [[ -n ${bins[${s#hookwall@}]:-} ]] || build_hookwall "${s#hookwall@}" ;;
	powertools)
		[[ -f $PEER_SRC/bench.mjs ]] || die "no peer bench at $PEER_SRC"
		mkdir -p "$PERF_WORK/peer"
		cp -r "$PEER_SRC/." "$PERF_WORK/peer/"
		chmod -R u+w "$PERF_WORK/peer"
		if [[ ! -d $PERF_WORK/peer/node_modules/@aws-lambda-powertools/idempotency ]]; then
			log "installing the peer's pinned packages (npm ci) in $PERF_WORK/peer"
			(cd "$PERF_WORK/peer" && npm ci --no-audit --no-fund >&2)
		fi
		;;
	*) die "unknown side $s (hookwall@REV or powertools)" ;;
	esac
done

# cpu_ms PID: user+system CPU of a process, in ms (0 when gone).
cpu_ms() {
	local f
	f=$(cut -d')' -f2- "/proc/$1/stat" 2>/dev/null) || {
		echo 0
		return
	}
	read -r -a a <<<"$f"
	echo $(((a[11] + a[12]) * 1000 / $(getconf CLK_TCK)))
}

# steady RATE...: whether the last three rates are within PERF_WARMUP_TOL
# percent of their mean (the throughput stopped rising).
steady() {
	(($# >= 3)) || return 1
	python3 -c 'import sys; r = [float(x) for x in sys.argv[2:]][-3:]; m = sum(r) / 3; sys.exit(0 if max(abs(x - m) for x in r) <= float(sys.argv[1]) / 100 * m else 1)' "$PERF_WARMUP_TOL" "$@"
}

# prewarm SIDE RUN_DIR: (Powertools: its table, first) the side's own bench,
# 1,000 unique events an invocation, no warm-up and no check, until the
# stack is warm: PERF_WARMUP_S seconds have passed and the last three
# invocations' deliveries/s are within PERF_WARMUP_TOL percent of their mean
# (the throughput stopped rising: DynamoDB Local's JIT is warm), or
# PERF_WARMUP_MAX_S seconds have passed.
prewarm() {
	local side=$1 run_dir=$2 start=$SECONDS k=0 rate rates=()
	[[ $side == powertools ]] && (cd "$PERF_WORK/peer" && node ddb/admin.mjs create --endpoint "$AWS_ENDPOINT_URL_DYNAMODB" \
		--table IdempotencyTable --key-attr id >/dev/null)
	while ((SECONDS - start < PERF_WARMUP_MAX_S)); do
		case $side in
		hookwall@*)
			(cd "${srcs[${side#hookwall@}]}" && HOOKWALL_VECTORS_DIR=${HOOKWALL_VECTORS_DIR:-$ROOT/../shared/vectors} \
				"${bins[${side#hookwall@}]}" -n 1000 -c "$PERF_C" -warmup 0 -skip-verify -seed $((1000 + k))) >"$run_dir/prewarm.json" 2>/dev/null ||
				die "$side: pre-warm invocation $k failed"
			;;
		powertools)
			(cd "$PERF_WORK/peer" && node bench.mjs --mode shuffled --n 1000 --c "$PERF_C" --warmup 0 --skip-verify \
				--seed $((1000 + k)) --endpoint "$AWS_ENDPOINT_URL_DYNAMODB") >"$run_dir/prewarm.json" 2>/dev/null ||
				die "$side: pre-warm invocation $k failed"
			;;
		esac
		rate=$(python3 -c 'import json,sys; print(round(json.load(open(sys.argv[1]))["shuffled"]["deliveries_per_s"]))' "$run_dir/prewarm.json")
		rates+=("$rate")
		k=$((k + 1))
		if ((SECONDS - start >= PERF_WARMUP_S)) && steady "${rates[@]}"; then
			break
		fi
	done
	log "pre-warmed $side in $((SECONDS - start)) s: $k invocations of 1,000 unique events, deliveries/s ${rates[*]}"
}

# run SIDE ROUND: one run on a fresh stack.
run() {
	local side=$1 round=$2 name run_dir out sqs_pid sqs0 sqs1 rc=0
	name=${side//[^A-Za-z0-9]/_}
	while [[ $name == *_ ]]; do name=${name%_}; done # as summary.py names it
	run_dir=$PERF_WORK/stack-$name-$round
	out=$PERF_OUT/$name-$round.json
	rm -rf "$run_dir"
	mkdir -p "$run_dir"
	export STACK_RUN_DIR=$run_dir STACK_ENV_FILE=$run_dir/env.sh DDB_PORT=$PERF_DDB_PORT SQS_PORT=$PERF_SQS_PORT
	"$ROOT/scripts/services-up.sh" >/dev/null
	# shellcheck disable=SC1091
	source "$run_dir/env.sh"
	sqs_pid=$(<"$run_dir/sqs.pid")
	prewarm "$side" "$run_dir"
	sqs0=$(cpu_ms "$sqs_pid") # after the pre-warm: the run's own deliveries only
	log "round $round: $side (load $(cut -d' ' -f1-3 /proc/loadavg))"
	case $side in
	hookwall@*)
		local rev=${side#hookwall@}
		(cd "${srcs[$rev]}" && HOOKWALL_VECTORS_DIR=${HOOKWALL_VECTORS_DIR:-$ROOT/../shared/vectors} \
			"${bins[$rev]}" -n "$PERF_N" -c "$PERF_C" -warmup "$PERF_WARMUP" -ddb-pid-file "$run_dir/ddb.pid") >"$out.tmp" || rc=$?
		;;
	powertools)
		(cd "$PERF_WORK/peer" && node bench.mjs --mode shuffled --n "$PERF_N" --c "$PERF_C" --warmup "$PERF_WARMUP" \
				--endpoint "$AWS_ENDPOINT_URL_DYNAMODB" --ddb-pid "$(<"$run_dir/ddb.pid")") >"$out.tmp" || rc=$?
		;;
	esac
	sqs1=$(cpu_ms "$sqs_pid")
	"$ROOT/scripts/services-down.sh" >/dev/null 2>&1 || log "WARNING: services-down failed for $run_dir"
	((rc == 0)) || die "$side, round $round: exit $rc (output in $out.tmp)"
	# The queue server's CPU is read over the whole run (warm-up included):
	# per delivery, over every delivery of the run (a unique event is 1.5
	# deliveries in this workload).
	python3 - "$out.tmp" "$out" "$side" "$round" "$((sqs1 - sqs0))" "$PERF_WARMUP" <<'EOF'
import json, sys
src, dst, side, rnd, sqs_ms, warmup = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), float(sys.argv[5]), int(sys.argv[6])
d = json.load(open(src))
s = d["shuffled"]
total = s["total_deliveries"] + round(warmup * 1.5)
d["protocol"] = {"side": side, "round": rnd, "fresh_stack": True,
                 "queue_server_ms_whole_run": sqs_ms if side != "powertools" else 0,
                 "queue_server_ms_per_delivery": (sqs_ms / total) if side != "powertools" else 0}
json.dump(d, open(dst, "w"), indent=1)
EOF
	rm -f "$out.tmp"
}

# The Hookwall twin runs the receiver without a processor, so no record
# leaves RECEIVED; a deployment's processor takes each within milliseconds.
# Past the re-enqueue grace a duplicate would take a record's hand-off over
# (two more writes and a message) where a deployment answers it at once:
# the grace outlasts every run (the twin sets it too since issue 33; set
# here for older revisions' twins).
export HOOKWALL_REENQUEUE_GRACE=${HOOKWALL_REENQUEUE_GRACE:-1h}

log "sides: ${sides[*]}; $ROUNDS rounds of $PERF_N unique events (warm-up $PERF_WARMUP), C=$PERF_C; out: $PERF_OUT"
k=${#sides[@]}
for r in $(seq 1 "$ROUNDS"); do
	for j in $(seq 0 $((k - 1))); do
		run "${sides[$(((j + r - 1) % k))]}" "$r"
	done
done
printf 'machine: %s, %s CPUs, load %s\n' "$(uname -srm)" "$(nproc)" "$(cut -d' ' -f1-3 /proc/loadavg)"
python3 "$ROOT/scripts/perf/summary.py" "$PERF_OUT" "${sides[@]}"
