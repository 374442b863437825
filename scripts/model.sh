#!/usr/bin/env bash
# scripts/model.sh: check model/hookwall.pml exhaustively with spin.
#
#   1. safety with the fix       (assertions, invalid end states)  must pass
#   2. liveness with the fix     (ltl settles, weak fairness)      must pass
#   3. safety, -DNO_GRACE_FIX    the 2xx promise must be violated
#   4. liveness, -DNO_GRACE_FIX -DNO_SWEEPER
#                                an acceptance cycle must be found (the
#                                stranded claim); its trail is printed. The
#                                sweeper is left out because it rescues a
#                                stranded claim (a second line of defence).
#   5. safety, faults 3, no extra duplicate
#                                must pass: the third fault reaches the
#                                compensator's requeue outcomes (write error
#                                or lost answer, send failed or lost answer)
#   6. safety, -DNO_REQUEUE      the compensator before 08948cd: the
#                                "requeues remain" assertion must be violated
#                                (a redriven event that never ran ends DEAD)
#   Runs 1-6 leave the target up and nothing paused (-DOUTAGES=0
#   -DPAUSES=0); the breaker still opens there on handler errors, so they
#   cover holds and probes under every fault. Runs 7-12 add an outage of the
#   target and an operator's pause and resume (issue #19):
#   7. hold-safety, no fault     an outage, a pause, a duplicate: must pass
#                                (never FAILED/DEAD for an outage or a pause
#                                alone, no call while open but the probe)
#   8. hold-faults-safety        an outage and HOLD_FAULTS faults: must pass
#   9. hold-liveness, no fault   an outage and a pause: settles, must pass
#  10. hold-faults-liveness      an outage and HOLD_FAULTS faults: must pass
#  11. safety, -DNO_HOLD_GUARD   the admission ignored: a call while the
#                                breaker is open must be found
#  12. safety, -DNO_HOLD_AFTER_CALL
#                                the plan's hold at admission only: a failed
#                                call that opens the breaker still spends the
#                                attempt; FAILED for an outage alone must be
#                                found
#   Runs 13-16 check the sweep index read from a cursor (issue #20: the
#   terminal writes keep the entry; the sweeper passes terminal records and
#   sees a record only while its entry is ahead of the shard's cursor). The
#   stranded claim of -DNO_GRACE_FIX stands for every record only the
#   sweeper can save (target up, nothing paused, no extra duplicate):
#  13. stranded-claim-swept, -DNO_GRACE_FIX with the sweeper, faults 2
#                                liveness must pass: the sweeper behind its
#                                cursor still rescues the stranded claim
#  14. -DNO_CLAIM_INDEX          the claim writes no index entry (only the
#                                processor's first write would): the
#                                acceptance cycle must be found
#  15. -DSWEEP_CURSOR_SKIPS      the cursor passes a due record that is not
#                                stuck yet without a Resweep: the acceptance
#                                cycle must be found
#  16. -DMOVED_ON_PASSES         the cursor passes a record that moved on
#                                between the sweeper's read and its
#                                MarkRequeued (a take-over, then the
#                                receiver dies): the cycle must be found
#   Runs 17-20 check model/stale.pml (issue #29 item 4: a replay of a
#   finished event racing its own dead letter; the generation check):
#  17. stale-safety              never a later life compensated: must pass
#  18. stale-liveness            the replayed event ends SUCCEEDED: must pass
#  19. -DNO_GENERATION safety    the stale dead letter compensates the
#                                replay: the assertion must be violated
#  20. -DNO_GENERATION liveness  the replay is dropped as a duplicate of a
#                                COMPENSATED event: an acceptance cycle
#   Runs 21-24 check model/poison.pml (issue #29 items 1 and 10: poison
#   events and the breaker; a failed probe spends the carrier's attempt, the
#   give-back at most once per event):
#  21. poison-safety             a poison event makes at most MAXATT+1 calls
#  22. poison-liveness           every poison event FAILED, the healthy one
#                                SUCCEEDED: must pass
#  23. -DPROBE_GIVES_BACK        the poison events carry the probes forever:
#                                an acceptance cycle (never FAILED)
#  24. -DGIVE_BACK_ALWAYS        the give-back not limited to once: the
#                                MAXATT+1 calls bound must be violated
#
# Exit 0 only when every run ends as expected. Non-interactive: installs the
# Debian package spin when it is missing and we are root, otherwise stops
# with a hint. Needs a C compiler ($CC, default gcc). Work happens in a
# temporary directory, removed on exit. Knobs (environment):
#   SAFETY_FAULTS (default 2), LIVE_FAULTS (default 2), REQUEUE_FAULTS
#   (default 3, run 5), HOLD_FAULTS (default 1, runs 8 and 10), PAN_TIMEOUT
#   (s, 100),
#   OPT (C optimisation of runs 1, 2 and 10, default -O1: the verifiers
#   compile in half the time of -O2 and the searches are short; the others
#   use -O0)
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
model=$root/model/hookwall.pml
SAFETY_FAULTS=${SAFETY_FAULTS:-2}
LIVE_FAULTS=${LIVE_FAULTS:-2}
REQUEUE_FAULTS=${REQUEUE_FAULTS:-3}
HOLD_FAULTS=${HOLD_FAULTS:-1}
PAN_TIMEOUT=${PAN_TIMEOUT:-100}
CC=${CC:-gcc}
OPT=${OPT:--O1}

die() { echo "model.sh: $*" >&2; exit 2; }

[[ -f $model ]] || die "no model at $model"

if ! command -v spin >/dev/null 2>&1; then
	if [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null 2>&1; then
		echo "model.sh: installing spin (apt-get)"
		export DEBIAN_FRONTEND=noninteractive
		if ! apt-get install -y -q spin </dev/null >/dev/null; then
			apt-get update -q </dev/null >/dev/null
			apt-get install -y -q spin </dev/null >/dev/null
		fi
	else
		die "spin is not installed and this is not root with apt-get: install it (Debian/Ubuntu: sudo apt-get install -y spin) and run again"
	fi
fi
command -v spin >/dev/null 2>&1 || die "spin still missing after apt-get"
command -v "$CC" >/dev/null 2>&1 || die "no C compiler '$CC' (set CC or install gcc)"
command -v timeout >/dev/null 2>&1 || die "timeout (coreutils) missing"

work=$(mktemp -d "${TMPDIR:-/tmp}/hookwall-model.XXXXXX")
trap 'rm -rf "$work"' EXIT

echo "model.sh: $(spin -V 2>&1 | head -1); model $model; work dir $work"

# summary FILE: the lines of pan's report that matter.
summary() {
	grep -E '^(State-vector|pan:1:|pan: elapsed)|states, stored|states, matched|acceptance   cycles|assertion violations' "$1" |
		sed 's/^/    /'
}

# trail DIR SPINFLAGS...: the counterexample replayed (spin -t -p), shown by
# the model's own narration ("@ ..." printf lines) and the cycle marker.
trail() {
	local dir=$1; shift
	(cd "$dir" && spin "$@" -t -p hookwall.pml </dev/null >trail.out 2>&1) || true
	echo "$(grep -cE '^ +[0-9]+:' "$dir/trail.out") steps; the events:"
	grep -E '^ *@ |START OF CYCLE' "$dir/trail.out" | sed -E 's/^ *@ //'
}

fail=0
pml=$model   # the model run() checks (runs 17-24: the companions)

# run NAME EXPECT(pass|assert|cycle) "SPINFLAGS" "CCFLAGS" "PANFLAGS" [OPT] [ASSERTION]
# (the defect runs search a few thousand states: -O0 compiles 4x faster;
# ASSERTION: a fixed string the violated assertion, as pan prints it, must
# contain)
run() {
	local name=$1 expect=$2 sflags=$3 cflags=$4 pflags=$5 opt=${6:-$OPT} want=${7:-}
	local dir=$work/$name
	mkdir -p "$dir"
	cp "$pml" "$dir/hookwall.pml"   # (under the one name the trail replays)
	echo
	echo "== $name: spin $sflags -a; $CC $opt $cflags; ./pan $pflags (expect: $expect)"
	# shellcheck disable=SC2086
	(cd "$dir" && spin $sflags -a hookwall.pml </dev/null >spin.out 2>&1) || { cat "$dir/spin.out"; echo "   FAIL: spin -a"; fail=1; return; }
	# shellcheck disable=SC2086
	(cd "$dir" && $CC $opt -w $cflags -o pan pan.c >cc.out 2>&1) || { cat "$dir/cc.out"; echo "   FAIL: compile"; fail=1; return; }
	local rc=0
	# shellcheck disable=SC2086
	(cd "$dir" && timeout "$PAN_TIMEOUT" ./pan $pflags </dev/null >pan.out 2>&1) || rc=$?
	summary "$dir/pan.out"
	if [[ $rc -eq 124 ]]; then echo "   FAIL: pan timed out after ${PAN_TIMEOUT}s"; fail=1; return; fi
	if grep -qE 'max search depth too small|out of memory|aborting' "$dir/pan.out"; then
		grep -E 'max search depth too small|out of memory|aborting' "$dir/pan.out" | sed 's/^/    /'
		echo "   FAIL: search incomplete"; fail=1; return
	fi
	local errors
	errors=$(sed -nE 's/.*errors: ([0-9]+).*/\1/p' "$dir/pan.out" | tail -1)
	[[ -n $errors ]] || { tail -20 "$dir/pan.out"; echo "   FAIL: no result from pan (rc $rc)"; fail=1; return; }
	case $expect in
	pass)
		if [[ $errors -eq 0 ]]; then echo "   ok: errors: 0"; else
			echo "   FAIL: errors: $errors, expected none; trail:"; trail "$dir" $sflags | head -80 | sed 's/^/    /'; fail=1
		fi ;;
	assert)
		if [[ $errors -gt 0 ]] && grep 'assertion violated' "$dir/pan.out" | grep -qF -- "$want"; then
			echo "   ok: the expected assertion violation was found; trail:"
			trail "$dir" $sflags | head -40 | sed 's/^/    /'
		else echo "   FAIL: expected an assertion violation${want:+ containing '$want'}"; fail=1; fi ;;
	cycle)
		if [[ $errors -gt 0 ]] && grep -q 'acceptance cycle' "$dir/pan.out"; then
			echo "   ok: the expected liveness violation (acceptance cycle) was found; trail:"
			trail "$dir" $sflags | head -60 | sed 's/^/    /'
		else echo "   FAIL: expected an acceptance cycle"; fail=1; fi ;;
	esac
}

# the target stays up, nothing is paused (the breaker opens on handler errors)
up="-DOUTAGES=0 -DPAUSES=0"
run safety        pass   "-DMAXFAULTS=$SAFETY_FAULTS $up"        "-DSAFETY -DNOCLAIM" "-m100000"
run liveness      pass   "-DMAXFAULTS=$LIVE_FAULTS $up"          "-DNFAIR=4"          "-a -f -m100000"
run defect-safety assert "-DNO_GRACE_FIX -DMAXFAULTS=1 $up"      "-DSAFETY -DNOCLAIM" "-m100000" -O0 "(st!=1)"
run defect-stranded-claim cycle "-DNO_GRACE_FIX -DNO_SWEEPER -DMAXFAULTS=1 -DMAXDUPS=0 $up" "-DNFAIR=4" "-a -f -A -m100000" -O0
# (-O0: compiles in 1.5 s instead of 8-12 s; the 2.3 M-state search takes
# 4-6 s instead of 3-4 s)
run requeue-safety pass  "-DMAXFAULTS=$REQUEUE_FAULTS -DMAXDUPS=0 $up" "-DSAFETY -DNOCLAIM" "-m100000" -O0
run defect-no-requeue assert "-DNO_REQUEUE -DMAXFAULTS=2 $up"    "-DSAFETY -DNOCLAIM" "-m100000" -O0 "everfailed"
# an outage of the target (OUTAGES=1) and a pause (PAUSES=1), the defaults
run hold-safety   pass   "-DMAXFAULTS=0"                         "-DSAFETY -DNOCLAIM" "-m100000" -O0
run hold-faults-safety pass "-DMAXFAULTS=$HOLD_FAULTS -DMAXDUPS=0 -DPAUSES=0" "-DSAFETY -DNOCLAIM" "-m100000" -O0
run hold-liveness pass   "-DMAXFAULTS=0 -DMAXDUPS=0"             "-DNFAIR=4"          "-a -f -m100000" -O0
run hold-faults-liveness pass "-DMAXFAULTS=$HOLD_FAULTS -DMAXDUPS=0 -DPAUSES=0" "-DNFAIR=4" "-a -f -m100000"
run defect-no-hold-guard assert "-DNO_HOLD_GUARD -DMAXFAULTS=0"  "-DSAFETY -DNOCLAIM" "-m100000" -O0 "osince[me]"
run defect-hold-at-admission-only assert "-DNO_HOLD_AFTER_CALL -DMAXFAULTS=0" "-DSAFETY -DNOCLAIM" "-m100000" -O0 "(faults<0)"

# the sweep index behind a cursor (issue #20); the stranded claim of
# NO_GRACE_FIX is the record only the sweeper saves
swept="-DNO_GRACE_FIX -DMAXDUPS=0 $up"
run stranded-claim-swept pass "$swept -DMAXFAULTS=2"            "-DNFAIR=4" "-a -f -A -m100000" -O0
run defect-no-claim-index cycle "$swept -DNO_CLAIM_INDEX -DMAXFAULTS=1" "-DNFAIR=4" "-a -f -A -m100000" -O0
run defect-cursor-skips cycle "$swept -DSWEEP_CURSOR_SKIPS -DMAXFAULTS=1" "-DNFAIR=4" "-a -f -A -m100000" -O0
run defect-moved-on-passes cycle "$swept -DMOVED_ON_PASSES -DMAXFAULTS=2" "-DNFAIR=4" "-a -f -A -m100000" -O0

# a replay of a finished event racing its own dead letter (issue #29 item 4)
pml=$root/model/stale.pml
[[ -f $pml ]] || die "no model at $pml"
run stale-safety        pass   ""                "-DSAFETY -DNOCLAIM" "-m100000" -O0
run stale-liveness      pass   ""                "-DNFAIR=6"          "-a -f -m100000" -O0
run defect-no-generation assert "-DNO_GENERATION" "-DSAFETY -DNOCLAIM" "-m100000" -O0 "(gen==0)"
# (no weak fairness: the counterexample is a run that ends COMPENSATED)
run defect-no-generation-liveness cycle "-DNO_GENERATION" "" "-a -A -m100000" -O0

# poison events and the breaker (issue #29 items 1 and 10)
pml=$root/model/poison.pml
[[ -f $pml ]] || die "no model at $pml"
run poison-safety       pass   ""                "-DSAFETY -DNOCLAIM" "-m100000" -O0
run poison-liveness     pass   ""                "-DNFAIR=4"          "-a -f -m100000" -O0
run defect-probe-gives-back cycle "-DPROBE_GIVES_BACK" "-DNFAIR=4"    "-a -f -A -m100000" -O0
run defect-give-back-always assert "-DGIVE_BACK_ALWAYS" "-DSAFETY -DNOCLAIM" "-m100000" -O0 "(calls[e]<=(2+1))"

echo
if [[ $fail -ne 0 ]]; then
	echo "model.sh: FAILED (an unexpected result above)"
	exit 1
fi
echo "model.sh: all twenty-four runs as expected"
