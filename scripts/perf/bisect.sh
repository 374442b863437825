#!/usr/bin/env bash
# bisect.sh: bisect a performance regression with the side-by-side protocol
# (issue 33 item 1), without checking anything out.
#
#   scripts/perf/bisect.sh GOOD BAD        (make perf-bisect GOOD=… BAD=…)
#
# The candidates are the first-parent commits of GOOD..BAD (a merge is one
# step: the branch it brings in is looked into afterwards, by hand, with the
# same command). Each step runs protocol.sh with the candidate and GOOD
# alternated (BISECT_ROUNDS rounds, fresh stacks, each pre-warmed to a
# steady state) and reads the stack CPU per delivery (client + DynamoDB
# Local + queue server): the candidate is bad when its median is over
# BISECT_THRESHOLD times GOOD's. Stack CPU is the figure that moves least
# with the machine's load (throughput and p99 move with it); the threshold
# sits between the noise of one round (about 5-10%) and the regression
# being looked for.
#
# Output: each step's line on stderr and in $BISECT_OUT/steps.tsv (commit,
# ratio, verdict, the protocol's output directory), the first bad commit,
# then its confirmation: GOOD, the last good and the first bad commits
# measured again over BISECT_CONFIRM_ROUNDS alternated rounds (0: none);
# exit 2 when the confirmation finds no step at that boundary.
#
# Env (defaults): BISECT_ROUNDS (1), BISECT_THRESHOLD (1.15),
# BISECT_CONFIRM_ROUNDS (3), BISECT_OUT
# (.local/perf/bisect-<UTC time>); the protocol's own (PERF_N, PERF_WARMUP_MAX_S…).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$ROOT"
good=${1:?usage: bisect.sh GOOD BAD}
bad=${2:?usage: bisect.sh GOOD BAD}
BISECT_ROUNDS=${BISECT_ROUNDS:-1}
BISECT_THRESHOLD=${BISECT_THRESHOLD:-1.15}
BISECT_CONFIRM_ROUNDS=${BISECT_CONFIRM_ROUNDS:-3}
BISECT_OUT=${BISECT_OUT:-$ROOT/.local/perf/bisect-$(date -u +%Y%m%dT%H%M%SZ)}
mkdir -p "$BISECT_OUT"
log() { printf '[bisect] %s\n' "$*" >&2; }

good=$(git rev-parse --short=12 "$good^{commit}")
bad=$(git rev-parse --short=12 "$bad^{commit}")
mapfile -t revs < <(git rev-list --first-parent --reverse --abbrev-commit --abbrev=12 "$good..$bad")
((${#revs[@]})) || {
	log "no commit between $good and $bad"
	exit 1
}
log "${#revs[@]} first-parent commits in $good..$bad; about $(awk -v n="${#revs[@]}" 'BEGIN{print int(log(n)/log(2)+1)}') steps"

# stack_ratio OUT SIDE GOOD: median stack CPU per delivery of SIDE over
# GOOD's in the protocol's output OUT.
stack_ratio() {
	python3 - "$ROOT/scripts/perf" "$@" <<'EOF'
import statistics, sys, glob, json
sys.path.insert(0, sys.argv[1])
from summary import figures, side_name  # the protocol's own figures and run names
out, rev, good = sys.argv[2:]
def stack(side):
    runs = [figures(json.load(open(f))) for f in glob.glob(f"{out}/{side_name('hookwall@' + side)}-*.json")]
    return statistics.median(r["stack CPU ms/delivery (client+DDB+queue)"] for r in runs)
print(f"{stack(rev) / stack(good):.3f}")
EOF
}

# ratio REV: median stack CPU per delivery of REV over GOOD's, one protocol run.
ratio() {
	local rev=$1 out=$BISECT_OUT/$1
	ROUNDS=$BISECT_ROUNDS PERF_OUT=$out "$ROOT/scripts/perf/protocol.sh" "hookwall@$rev" "hookwall@$good" >"$out.log" 2>&1 || {
		log "$rev: the protocol failed (see $out.log)"
		return 1
	}
	stack_ratio "$out" "$rev" "$good"
}

lo=-1 hi=$((${#revs[@]} - 1)) # revs[lo] is good (GOOD itself when -1), revs[hi] is bad (BAD)
printf 'commit\tstack CPU ratio to %s\tverdict\tprotocol output\n' "$good" >"$BISECT_OUT/steps.tsv"
while ((hi - lo > 1)); do
	mid=$(((lo + hi) / 2))
	rev=${revs[$mid]}
	r=$(ratio "$rev") || exit 1
	if awk -v r="$r" -v t="$BISECT_THRESHOLD" 'BEGIN{exit !(r > t)}'; then
		verdict=bad hi=$mid
	else
		verdict=good lo=$mid
	fi
	log "$rev ($(git log -1 --format=%s "$rev" | cut -c1-70)): stack CPU ${r}x $good's: $verdict"
	printf '%s\t%s\t%s\t%s\n' "$rev" "$r" "$verdict" "$BISECT_OUT/$rev" >>"$BISECT_OUT/steps.tsv"
done
first=${revs[$hi]}
log "first bad commit (first parent): $first $(git log -1 --format=%s "$first" | cut -c1-100)"
printf 'first bad\t%s\n' "$first" >>"$BISECT_OUT/steps.tsv"

# The answer checked: one round a step is cheap but noisy (a fresh stack's
# DynamoDB Local varies by 20-30% from run to run), so the boundary is
# measured again, GOOD, the last good and the first bad commits alternated
# over BISECT_CONFIRM_ROUNDS rounds. The answer stands when the first bad
# commit's stack CPU is over BISECT_THRESHOLD times the last good one's.
((BISECT_CONFIRM_ROUNDS > 0)) || exit 0
last=$good
((lo >= 0)) && last=${revs[$lo]}
out=$BISECT_OUT/confirm
sides=("hookwall@$good" "hookwall@$first")
[[ $last != "$good" ]] && sides=("hookwall@$good" "hookwall@$last" "hookwall@$first")
ROUNDS=$BISECT_CONFIRM_ROUNDS PERF_OUT=$out "$ROOT/scripts/perf/protocol.sh" "${sides[@]}" >"$out.log" 2>&1 || {
	log "the confirmation failed (see $out.log)"
	exit 1
}
r_first=$(stack_ratio "$out" "$first" "$good")
r_last=1.000
[[ $last != "$good" ]] && r_last=$(stack_ratio "$out" "$last" "$good")
step=$(awk -v a="$r_first" -v b="$r_last" 'BEGIN{printf "%.3f", a / b}')
printf 'confirm\t%s %s, %s %s (of %s, %s rounds)\tstep %s\t%s\n' "$last" "$r_last" "$first" "$r_first" "$good" "$BISECT_CONFIRM_ROUNDS" "$step" "$out" >>"$BISECT_OUT/steps.tsv"
if awk -v r="$step" -v t="$BISECT_THRESHOLD" 'BEGIN{exit !(r > t)}'; then
	log "confirmed over $BISECT_CONFIRM_ROUNDS rounds: $first costs ${step}x the stack CPU of $last ($r_first and $r_last of $good's)"
else
	log "NOT confirmed over $BISECT_CONFIRM_ROUNDS rounds: $first costs ${step}x the stack CPU of $last ($r_first and $r_last of $good's), within the threshold: the steps were noise; rerun with more BISECT_ROUNDS"
	exit 2
fi
