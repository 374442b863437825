#!/usr/bin/env bash
# peer.sh: `make peer`. Hookwall (dev/cmd/hookwall-peer) and the Powertools peer
# bench (PEER_SRC, run from a copy in PEER_WORK, never inside shared/) in
# its `shuffled` mode, alternately, ROUNDS rounds, both on the DynamoDB Local
# of scripts/services-up.sh (DDB_PORT), then the medians and the ratios
# Hookwall/Powertools (hookwall-peer -compare).
#
# Env (defaults): ROUNDS (3), PEER_N (2000), PEER_C (16), PEER_WARMUP (3000),
# PEER_SRC (../shared/peers/powertools), PEER_WORK (.local/peer-powertools),
# PEER_OUT (.local/peer/<UTC time>), plus the stack's (scripts/lib.sh:
# DDB_PORT, SQS_PORT, STACK_RUN_DIR, STACK_ENV_FILE, ...).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
cd "$ROOT"
ROUNDS=${ROUNDS:-3}
PEER_N=${PEER_N:-2000}
PEER_C=${PEER_C:-16}
PEER_WARMUP=${PEER_WARMUP:-3000}
PEER_SRC=${PEER_SRC:-$ROOT/../shared/peers/powertools}
PEER_WORK=${PEER_WORK:-$ROOT/.local/peer-powertools}
PEER_OUT=${PEER_OUT:-$ROOT/.local/peer/$(date -u +%Y%m%dT%H%M%SZ)}
RUN_DIR=${STACK_RUN_DIR:-$ROOT/.local/run}
ENV_FILE=${STACK_ENV_FILE:-$RUN_DIR/env.sh}
log() { printf '[peer] %s\n' "$*" >&2; }

[[ -f $PEER_SRC/bench.mjs ]] || { log "no peer bench at $PEER_SRC"; exit 1; }
"$ROOT/scripts/services-up.sh" >/dev/null
# shellcheck disable=SC1090
source "$ENV_FILE"
DDB_PID=$(<"$RUN_DIR/ddb.pid")

# The peer runs from a copy (node_modules kept between runs).
mkdir -p "$PEER_WORK" "$PEER_OUT"
cp -r "$PEER_SRC/." "$PEER_WORK/"
chmod -R u+w "$PEER_WORK"
if [[ ! -d $PEER_WORK/node_modules/@aws-lambda-powertools/idempotency ]]; then
	log "installing the peer's pinned packages (npm ci) in $PEER_WORK"
	(cd "$PEER_WORK" && npm ci --no-audit --no-fund >&2)
fi
# Its table, on the same DynamoDB Local as Hookwall's. admin.mjs fails on a
# second run only because the table's TTL is already enabled: that is fine.
if ! out=$(cd "$PEER_WORK" && node ddb/admin.mjs create --endpoint "$AWS_ENDPOINT_URL_DYNAMODB" \
	--table IdempotencyTable --key-attr id 2>&1); then
	[[ $out == *"TimeToLive is already enabled"* ]] || { printf '%s\n' "$out" >&2; log "IdempotencyTable: create failed"; exit 1; }
fi

BIN=$ROOT/.local/bin/hookwall-peer
mkdir -p "$(dirname "$BIN")"
(cd "$ROOT/dev" && ${GO:-go} build -o "$BIN" ./cmd/hookwall-peer)

hookwall() {
	log "round $1: Hookwall"
	"$BIN" -n "$PEER_N" -c "$PEER_C" -warmup "$PEER_WARMUP" -ddb-pid-file "$RUN_DIR/ddb.pid" >"$PEER_OUT/hookwall-$1.json"
}
powertools() {
	log "round $1: Powertools"
	(cd "$PEER_WORK" && node bench.mjs --mode shuffled --n "$PEER_N" --c "$PEER_C" --warmup "$PEER_WARMUP" \
		--endpoint "$AWS_ENDPOINT_URL_DYNAMODB" --ddb-pid "$DDB_PID") >"$PEER_OUT/powertools-$1.json"
}
for r in $(seq 1 "$ROUNDS"); do
	# Alternate which goes first, so that neither always follows the other.
	if ((r % 2)); then hookwall "$r" && powertools "$r"; else powertools "$r" && hookwall "$r"; fi
done
log "results in $PEER_OUT"
printf 'machine: %s, %s CPUs, load %s\n\n' "$(uname -srm)" "$(nproc)" "$(cut -d' ' -f1-3 /proc/loadavg)"
"$BIN" -compare "$PEER_OUT"
