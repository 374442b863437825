#!/usr/bin/env bash
# release-guard.sh: `make perf-release`. The protocol (scripts/perf/protocol.sh)
# with this tree against the previous release built from git, alternated, each
# run on a fresh stack; it prints the medians and the ratios this tree /
# release, and a line for every figure that is more than 10% worse. It is a
# report, not a timed assertion: it fails only when a run lost or doubled an
# event, or when something could not run.
#
# The release is RELEASE_REV when set; else the newest release with a commit
# in releases.tsv (version, commit, date, note; tab-separated); else 903736a
# (v0.1.0). Env: those of protocol.sh (ROUNDS, PERF_N, PERF_WARMUP, PERF_C,
# PERF_DDB_PORT, PERF_SQS_PORT, PERF_OUT).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$ROOT"
rev=${RELEASE_REV:-}
if [[ -z $rev && -f releases.tsv ]]; then
	rev=$(awk -F'\t' '!/^#/ && NF >= 2 && $2 != "unreleased" {r = $2} END {print r}' releases.tsv)
fi
rev=${rev:-903736a}
if ! git cat-file -e "$rev^{commit}" 2>/dev/null; then
	printf '[perf] the release commit %s is not in this clone (a shallow clone?): fetching it\n' "$rev" >&2
	git fetch -q --depth=1 origin "$rev" || { printf '[perf] ERROR: cannot fetch %s\n' "$rev" >&2; exit 1; }
fi
export PERF_OUT=${PERF_OUT:-$ROOT/.local/perf/release-$(date -u +%Y%m%dT%H%M%SZ)}
mkdir -p "$(dirname "$PERF_OUT")" # the report's copy (tee) goes beside the runs' directory
printf '[perf] this tree against the release at %s\n' "$rev" >&2
"$ROOT/scripts/perf/protocol.sh" "hookwall@." "hookwall@$rev" | tee "$PERF_OUT.txt"
python3 - "$PERF_OUT.txt" <<'PY'
import sys
worse = {"deliveries/s": -1}  # higher is better; every other figure: lower is better
flagged = []
for line in open(sys.argv[1]):
    cells = [c.strip() for c in line.strip().strip("|").split("|")]
    if len(cells) != 4 or cells[0] in ("metric", "") or cells[0].startswith("---") or cells[0].startswith("other") or cells[0].startswith("load") or cells[0].startswith("machine"):
        continue
    try:
        ratio = float(cells[3])
    except ValueError:
        continue
    if (worse.get(cells[0], 1) > 0 and ratio > 1.10) or (worse.get(cells[0], 1) < 0 and ratio < 1 / 1.10):
        flagged.append(f"{cells[0]}: this tree / release {ratio:.2f}")
print()
if flagged:
    print("[perf] MORE THAN 10% WORSE than the release (check it on a quiet machine before it lands):")
    for f in flagged:
        print("  " + f)
else:
    print("[perf] no figure more than 10% worse than the release")
PY
