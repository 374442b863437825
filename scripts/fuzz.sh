#!/usr/bin/env bash
# fuzz.sh: run every fuzz target in the module for FUZZTIME each.
# Targets are discovered with `go test -list '^Fuzz'` over FUZZ_PKGS; each runs
# as `go test -run '^$' -fuzz '^Name$' -fuzztime FUZZTIME <pkg>` (go test can
# fuzz only one target in one package at a time). All targets run even if one
# fails; exits non-zero if any failed (the failing input is saved under the
# package's testdata/fuzz/ by go test).
# Env: FUZZTIME (30s), FUZZ_PKGS (./...), GO (go), FUZZMINIMIZETIME (2s: the
# default 60 s lets a worker spend a whole short run minimising one new input,
# reporting no executions meanwhile).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

FUZZTIME=${FUZZTIME:-30s}
FUZZMINIMIZETIME=${FUZZMINIMIZETIME:-2s}
FUZZ_PKGS=${FUZZ_PKGS:-./...}
GO=${GO:-go}

# `go test -list` prints each package's matching names, then "ok  <pkg> ...".
list=$("$GO" test -list '^Fuzz' $FUZZ_PKGS) || {
	printf '%s\n' "$list" >&2
	echo "fuzz: listing fuzz targets failed" >&2
	exit 1
}
targets=()
names=()
while IFS= read -r line; do
	if [[ $line =~ ^Fuzz[A-Za-z0-9_]*$ ]]; then
		names+=("$line")
	elif [[ $line =~ ^ok[[:space:]]+([^[:space:]]+) ]]; then
		for n in "${names[@]}"; do targets+=("${BASH_REMATCH[1]} $n"); done
		names=()
	fi
done <<<"$list"

if ((${#targets[@]} == 0)); then
	echo "fuzz: no fuzz targets found in $FUZZ_PKGS"
	exit 0
fi

echo "fuzz: ${#targets[@]} target(s), $FUZZTIME each"
failed=()
passed=()
for t in "${targets[@]}"; do
	pkg=${t% *}
	name=${t#* }
	echo "=== fuzz $pkg $name (fuzztime $FUZZTIME)"
	out=$(mktemp)
	if "$GO" test -run '^$' -fuzz "^${name}\$" -fuzztime "$FUZZTIME" -fuzzminimizetime "$FUZZMINIMIZETIME" "$pkg" 2>&1 | tee "$out"; [[ ${PIPESTATUS[0]} -eq 0 ]]; then
		# The last progress line carries the total executions and corpus size.
		execs=$(grep -o 'execs: [0-9]*' "$out" | tail -n1 | cut -d' ' -f2)
		corpus=$(grep -o 'total: [0-9]*' "$out" | tail -n1 | cut -d' ' -f2)
		passed+=("$pkg $name (${execs:-?} execs, corpus ${corpus:-?})")
	else
		failed+=("$pkg $name")
	fi
	rm -f "$out"
done

echo "fuzz: summary"
for t in "${passed[@]}"; do echo "  PASS $t"; done
for t in "${failed[@]+"${failed[@]}"}"; do echo "  FAIL $t"; done
if ((${#failed[@]})); then
	echo "fuzz: ${#failed[@]} of ${#targets[@]} target(s) failed" >&2
	exit 1
fi
