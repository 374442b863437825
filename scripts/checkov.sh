#!/usr/bin/env bash
# checkov.sh: scan template.yaml with checkov (CloudFormation framework, which
# reads the SAM resources as they are written) and judge the result: it fails
# when any check fails, when a check is skipped without a reason (a Metadata
# checkov skip with no comment), when the template does not parse, or when
# nothing was checked. It prints checkov's own report (failed checks in full),
# then one summary line (passed, failed, skipped) and every skip with its reason.
# Env: CHECKOV (the checkov executable; `make checkov` installs a pinned one into
# .local/checkov-venv), TEMPLATE (template.yaml), CHECKOV_OUT (.local/checkov:
# the JSON report, results.json). No network: --skip-download.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

CHECKOV=${CHECKOV:-checkov}
TEMPLATE=${TEMPLATE:-template.yaml}
CHECKOV_OUT=${CHECKOV_OUT:-.local/checkov}
PYTHON=${PYTHON:-python3}

say() { printf 'checkov: %s\n' "$*"; }

mkdir -p "$CHECKOV_OUT"
report=$CHECKOV_OUT/results.json
rm -f "$report"
say "$CHECKOV -f $TEMPLATE --framework cloudformation (report: $report)"
rc=0
"$CHECKOV" -f "$TEMPLATE" --framework cloudformation --skip-download --compact \
	-o cli -o json --output-file-path "console,$report" || rc=$?
if [[ ! -s $report ]]; then
	say "ERROR: checkov wrote no report (exit $rc)"
	exit 1
fi

# One summary line, the skips with their reasons, the failures; exit 1 on any
# failure, unexplained skip, parsing error or empty scan.
"$PYTHON" - "$report" "$TEMPLATE" <<'PY'
import json, sys

path, template = sys.argv[1], sys.argv[2]
with open(path) as f:
    doc = json.load(f)
# One framework gives one report object; checkov writes a list when there are several.
reports = doc if isinstance(doc, list) else [doc]
passed = failed = skipped = parsing = 0
skips, failures, unexplained = [], [], []
for r in reports:
    s = r.get("summary", {})
    passed += s.get("passed", 0)
    failed += s.get("failed", 0)
    skipped += s.get("skipped", 0)
    parsing += s.get("parsing_errors", 0)
    res = r.get("results", {})
    for c in res.get("skipped_checks", []):
        reason = (c.get("check_result", {}).get("suppress_comment") or "").strip()
        skips.append((c["check_id"], c["resource"], reason))
        if not reason or reason == "No comment provided":
            unexplained.append((c["check_id"], c["resource"]))
    for c in res.get("failed_checks", []):
        failures.append((c["check_id"], c["resource"], c.get("check_name", "")))

version = reports[0].get("summary", {}).get("checkov_version", "?") if reports else "?"
print(f"checkov {version}, {template}: passed {passed}, failed {failed}, skipped {skipped}, parsing errors {parsing}")
if skips:
    print("checkov: skipped checks, with their reasons (the resource's Metadata checkov skip):")
    for cid, res, reason in skips:
        print(f"  {cid} {res}: {reason or '(no reason)'}")
bad = False
for cid, res, name in failures:
    print(f"checkov: FAILED {cid} {res}: {name}")
    bad = True
for cid, res in unexplained:
    print(f"checkov: FAILED {cid} {res} is skipped without a reason: give the skip a comment")
    bad = True
if parsing:
    print(f"checkov: FAILED {parsing} parsing error(s)")
    bad = True
if passed + failed + skipped == 0:
    print("checkov: FAILED nothing was checked")
    bad = True
sys.exit(1 if bad else 0)
PY
