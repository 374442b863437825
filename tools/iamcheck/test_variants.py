#!/usr/bin/env python3
"""make iam-test: the IAM check must pass on the template and fail, naming the function, the action
and the resource, on six broken variants of it:

  no-batchgetitem   dynamodb:BatchGetItem removed from the compensator's role
                    -> DENIED (want Allowed) function=compensator action=dynamodb:BatchGetItem
  star-queue        a statement granting sqs:ReceiveMessage on "*" added to the processor's role
                    -> ALLOWED (want Denied) probe function=processor action=sqs:ReceiveMessage (another queue)
  team-no-grant     a team resource parameter (the first inventory "when" other than KmsKeyArn, e.g.
                    ApprovalsTable) set, with every statement that names it removed from the roles
                    -> DENIED (want Allowed) function=<its rows' function> action=<their actions> resource=(<Parameter>)
  unused-grant      dynamodb:DeleteItem added beside the processor's GetItem
                    -> UNUSED grant function=processor action=dynamodb:DeleteItem
  hook-star-invoke  lambda:InvokeFunction on "*" added to the pre-traffic hook's role
                    -> ALLOWED (want Denied) probe function=pretraffic action=lambda:InvokeFunction (another function)
  hook-no-report    codedeploy:PutLifecycleEventHookExecutionStatus removed from the hook's role (checked under
                    DeploymentType=AllAtOnce) -> DENIED (want Allowed) function=pretraffic on both deployment groups

The mutations are structural (on the parsed template, through !If branches), so they survive edits of
the template; when the thing a variant mutates is gone (no BatchGetItem in the compensator's role, no
statement naming the team parameter), the test fails and says so. Each variant's template is written
(as JSON, which CloudFormation and the translator read) to a temporary directory, translated by
translate.py and checked by check.mjs, exactly as `make iam` does.

Usage: test_variants.py --template template.yaml --inventory iam/inventory.json --probes iam/probes.json
                        [--node node] [--keep DIR]
"""

from __future__ import annotations

import argparse
import copy
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import translate  # noqa: E402

NO_VALUE = {"Ref": "AWS::NoValue"}


class VariantError(Exception):
    """The variant cannot be made from this template (its anchor is gone)."""


# --- the policy statements of a function's role in the SAM template ---------------------------

def _role_of(template: dict, function: str) -> str | None:
    res = template["Resources"][function]
    role = res.get("Properties", {}).get("Role")
    if isinstance(role, dict) and "Fn::GetAtt" in role:
        att = role["Fn::GetAtt"]
        name, attr = att.split(".", 1) if isinstance(att, str) else att
        if attr == "Arn" and template["Resources"].get(name, {}).get("Type") == "AWS::IAM::Role":
            return name
    return None


def statement_lists(template: dict, function: str) -> list[list]:
    """Every list of policy statements (Statement: [...]) that grants to the function's role: the
    role's inline policies, AWS::IAM::Policy/ManagedPolicy resources attached to it, or SAM's
    Policies of the function (when SAM makes the role)."""
    out: list[list] = []

    def doc_statements(doc):
        if isinstance(doc, dict) and "Fn::If" in doc:
            for branch in doc["Fn::If"][1:]:
                doc_statements(branch)
        elif isinstance(doc, dict) and isinstance(doc.get("Statement"), list):
            out.append(doc["Statement"])
        elif isinstance(doc, dict) and isinstance(doc.get("Statement"), dict):
            doc["Statement"] = [doc["Statement"]]
            out.append(doc["Statement"])

    role = _role_of(template, function)
    if role:
        for pol in template["Resources"][role].get("Properties", {}).get("Policies", []):
            branches = pol["Fn::If"][1:] if isinstance(pol, dict) and "Fn::If" in pol else [pol]
            for b in branches:
                if isinstance(b, dict) and "PolicyDocument" in b:
                    doc_statements(b["PolicyDocument"])
        for res in template["Resources"].values():
            if res.get("Type") in ("AWS::IAM::Policy", "AWS::IAM::ManagedPolicy"):
                roles = res.get("Properties", {}).get("Roles", [])
                if {"Ref": role} in roles:
                    doc_statements(res["Properties"].get("PolicyDocument"))
            if res.get("Type") == "AWS::IAM::RolePolicy" and res.get("Properties", {}).get("RoleName") == {"Ref": role}:
                doc_statements(res["Properties"].get("PolicyDocument"))
        return out
    for pol in template["Resources"][function].get("Properties", {}).get("Policies", []) or []:
        doc_statements(pol)
    return out


def filter_statements(lists: list[list], fn) -> int:
    """Applies fn(statement) -> statement | None to every statement (through Fn::If branches);
    None drops it. Returns how many statements fn changed or dropped."""
    changed = 0

    def one(stmt):
        nonlocal changed
        if isinstance(stmt, dict) and "Fn::If" in stmt:
            cond, a, b = stmt["Fn::If"]
            return {"Fn::If": [cond, one(a), one(b)]}
        if stmt == NO_VALUE or not isinstance(stmt, dict):
            return stmt
        before = json.dumps(stmt, sort_keys=True)
        new = fn(copy.deepcopy(stmt))
        if new is None:
            changed += 1
            return NO_VALUE
        if json.dumps(new, sort_keys=True) != before:
            changed += 1
        return new

    for lst in lists:
        lst[:] = [one(s) for s in lst]
        lst[:] = [s for s in lst if s != NO_VALUE]  # a top-level NoValue is allowed too, but keep it tidy
    return changed


def function_logical(name: str) -> str:
    return translate.FUNCTIONS[name]


# --- the variants ------------------------------------------------------------------------------

def remove_action(template: dict, function: str, action: str) -> None:
    def fn(stmt):
        if stmt.get("Effect") != "Allow" or "Action" not in stmt:
            return stmt
        acts = stmt["Action"] if isinstance(stmt["Action"], list) else [stmt["Action"]]
        kept = [a for a in acts if not (isinstance(a, str) and a.lower() == action.lower())]
        if len(kept) == len(acts):
            return stmt
        if not kept:
            return None
        stmt["Action"] = kept
        return stmt

    lists = statement_lists(template, function_logical(function))
    if not filter_statements(lists, fn):
        raise VariantError(f"no statement of the {function}'s role names {action} (granted through a wildcard, "
                           f"or not at all): the variant has nothing to remove")


def add_star_grant(template: dict, function: str, action: str) -> None:
    stmt = {"Sid": "IamcheckBrokenStarQueue", "Effect": "Allow", "Action": action, "Resource": "*"}
    logical = function_logical(function)
    role = _role_of(template, logical)
    if role:
        props = template["Resources"][role].setdefault("Properties", {})
        props.setdefault("Policies", []).append(
            {"PolicyName": "iamcheck-broken", "PolicyDocument": {"Version": "2012-10-17", "Statement": [stmt]}})
    else:
        props = template["Resources"][logical].setdefault("Properties", {})
        pols = props.get("Policies") or []
        props["Policies"] = (pols if isinstance(pols, list) else [pols]) + [{"Statement": [stmt]}]


def add_action(template: dict, function: str, beside: str, action: str) -> None:
    """Adds action to every Allow statement of function's role that grants beside."""
    def fn(stmt):
        acts = stmt.get("Action")
        acts = acts if isinstance(acts, list) else [acts]
        if stmt.get("Effect") == "Allow" and beside in acts:
            stmt["Action"] = acts + [action]
            return stmt
        return stmt

    lists = statement_lists(template, function_logical(function))
    before = json.dumps(lists)
    filter_statements(lists, fn)
    if json.dumps(lists) == before:
        raise VariantError(f"no statement of the {function}'s role grants {beside}: the variant has nowhere to add {action}")


def mentions_parameter(node, param: str) -> bool:
    text = json.dumps(node)
    return json.dumps({"Ref": param})[1:-1] in text or "${" + param + "}" in text


def remove_parameter_grants(template: dict, param: str) -> None:
    removed = 0
    for function in translate.FUNCTIONS:
        lists = statement_lists(template, function_logical(function))
        removed += filter_statements(lists, lambda s: None if mentions_parameter(s.get("Resource", s.get("NotResource")), param) else s)
    if not removed:
        raise VariantError(f"no statement of any role names the parameter {param} in its Resource: the template "
                           f"grants nothing on the team resource, so there is nothing to remove (and `make iam` "
                           f"should already fail on the unbroken template)")


# --- running the check ---------------------------------------------------------------------------

def start_check(node: str, template_path: Path, inventory: Path, probes: Path, work: Path, scenarios: list[str] | None):
    """translate.py (in this process), then check.mjs in a child process, left running so that the
    variants' checks run side by side. Returns the child, or an int exit status if translate failed."""
    out = work / "policies.json"
    rc = translate.main(["--template", str(template_path), "--inventory", str(inventory), "--probes", str(probes),
                         "--out", str(out)] + (["--scenarios", ",".join(scenarios)] if scenarios else []))
    if rc != 0:
        return rc
    return subprocess.Popen([node, str(HERE / "check.mjs"), "--policies", str(out), "--inventory", str(inventory),
                             "--probes", str(probes)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--template", required=True, type=Path)
    ap.add_argument("--inventory", required=True, type=Path)
    ap.add_argument("--probes", required=True, type=Path)
    ap.add_argument("--node", default="node")
    ap.add_argument("--no-base", action="store_true",
                    help="skip the unbroken template's check (make iam has just run it)")
    ap.add_argument("--keep", type=Path, help="keep each variant's template, policies and output in this directory")
    args = ap.parse_args(argv)

    t0 = time.monotonic()
    template = translate.load_template(args.template)
    inventory = json.loads(args.inventory.read_text())
    probes = json.loads(args.probes.read_text())
    rows = inventory.get("rows", [])
    whens = [w for w in translate.when_parameters(inventory, {"probes": []}) if w != "KmsKeyArn"]

    # Each variant returns (template, the failure lines it must cause, the scenarios to check: None for
    # all). A broken variant is checked in one scenario that shows its failure, which keeps the test quick.
    def variant_base(t):
        return t, [], None  # unchanged: must pass in every scenario

    def variant_no_batchgetitem(t):
        remove_action(t, "compensator", "dynamodb:BatchGetItem")
        want = [("DENIED (want Allowed)", "compensator", "dynamodb:BatchGetItem", r["resource"])
                for r in rows if r["function"] == "compensator" and "dynamodb:BatchGetItem" in r.get("actions", [])]
        if not want:
            raise VariantError("the inventory has no compensator row with dynamodb:BatchGetItem: nothing would notice")
        return t, want, ["default"]

    def variant_star_queue(t):
        fn = "processor"
        add_star_grant(t, fn, "sqs:ReceiveMessage")
        want = [("ALLOWED (want Denied) probe", fn, "sqs:ReceiveMessage", p["resource"])
                for p in probes.get("probes", []) if p["function"] == fn and p["action"] == "sqs:ReceiveMessage" and not p.get("when")]
        if not want:
            raise VariantError(f"iam/probes.json has no {fn} sqs:ReceiveMessage probe: nothing would notice")
        return t, want, ["default"]

    def variant_team_no_grant(t):
        if not whens:
            raise VariantError("no inventory row names a team resource parameter in 'when' (e.g. ApprovalsTable)")
        param = whens[0]
        remove_parameter_grants(t, param)
        want = sorted({("DENIED (want Allowed)", r["function"], a, r["resource"])
                       for r in rows if r.get("when") == param for a in r.get("actions", [])})
        return t, want, [param]

    def variant_unused_grant(t):
        # DeleteItem beside the processor's GetItem on the events table: no code path of the
        # processor deletes an item, so the grant must be reported as unused.
        add_action(t, "processor", "dynamodb:GetItem", "dynamodb:DeleteItem")
        want = [("UNUSED grant", "processor", "dynamodb:DeleteItem", r["resource"])
                for r in rows if r["function"] == "processor" and "dynamodb:GetItem" in r.get("actions", [])]
        if not want:
            raise VariantError("the inventory has no processor row with dynamodb:GetItem")
        return t, want, ["default"]

    def variant_hook_star_invoke(t):
        # The pre-traffic hook allowed to invoke any function: the probes that it invokes only the two
        # new versions must be allowed now.
        fn = "pretraffic"
        add_star_grant(t, fn, "lambda:InvokeFunction")
        want = [("ALLOWED (want Denied) probe", fn, "lambda:InvokeFunction", p["resource"])
                for p in probes.get("probes", []) if p["function"] == fn and p["action"] == "lambda:InvokeFunction" and not p.get("when")]
        if not want:
            raise VariantError(f"iam/probes.json has no {fn} lambda:InvokeFunction probe: nothing would notice")
        return t, want, ["default"]

    def variant_hook_no_report(t):
        # The hook's status call removed from its role: every deployment would wait an hour and fail.
        action = "codedeploy:PutLifecycleEventHookExecutionStatus"
        remove_action(t, "pretraffic", action)
        want = [("DENIED (want Allowed)", "pretraffic", action, r["resource"])
                for r in rows if r["function"] == "pretraffic" and action in r.get("actions", [])]
        if not want:
            raise VariantError(f"the inventory has no pretraffic row with {action}")
        return t, want, ["DeploymentType=AllAtOnce"]

    variants = [("base", variant_base), ("no-batchgetitem", variant_no_batchgetitem),
                ("star-queue", variant_star_queue), ("team-no-grant", variant_team_no_grant),
                ("unused-grant", variant_unused_grant), ("hook-star-invoke", variant_hook_star_invoke),
                ("hook-no-report", variant_hook_no_report)]
    if args.no_base:
        variants = variants[1:]
    passed = failed = 0
    keep_root = args.keep
    with tempfile.TemporaryDirectory(prefix="iamcheck-") as tmp:
        root = keep_root or Path(tmp)
        started = []  # in the variants' order: (name, want, work, child process | exit status | VariantError)
        for name, make in variants:
            work = root / name
            work.mkdir(parents=True, exist_ok=True)
            try:
                mutated, want, scenarios = make(copy.deepcopy(template))
            except VariantError as e:
                started.append((name, None, work, e))
                continue
            tpath = work / "template.json"
            tpath.write_text(json.dumps(mutated, indent=1))
            started.append((name, want, work, start_check(args.node, tpath, args.inventory, args.probes, work, scenarios)))
        for name, want, work, proc in started:
            if isinstance(proc, VariantError):
                print(f"iam-test: FAIL {name}: cannot make the variant from {args.template}: {proc}")
                failed += 1
                continue
            if isinstance(proc, int):
                rc, output = proc, f"(translate.py exited {proc}; its message is above)"
            else:
                output, _ = proc.communicate()
                rc = proc.returncode
            (work / "output.txt").write_text(output)
            lines = output.splitlines()
            if not want:
                if rc == 0:
                    print(f"iam-test: ok {name}: the check passes on {args.template}")
                    passed += 1
                else:
                    print(f"iam-test: FAIL {name}: the check fails on the unbroken {args.template} (exit {rc}):")
                    print("\n".join("  " + ln for ln in lines))
                    failed += 1
                continue
            missing, named = [], []
            for kind, fn, action, logical in want:
                hits = [ln for ln in lines if ln.startswith(kind) and f" function={fn} " in ln and f" action={action} " in ln
                        and (f"({logical})" in ln or f"resource={logical} " in ln)]
                named += hits[:1]
                if not hits:
                    missing.append(f"{kind} function={fn} action={action} resource=…({logical})")
            if rc != 1 or missing:
                print(f"iam-test: FAIL {name}: want exit 1 and lines naming " + "; ".join(
                    f"function={w[1]} action={w[2]} resource={w[3]}" for w in want) + f"; got exit {rc}"
                      + (f", missing: {'; '.join(missing)}" if missing else "") + ". The check said:")
                print("\n".join("  " + ln for ln in lines))
                failed += 1
            else:
                print(f"iam-test: ok {name}: the check failed (exit 1) naming function, action and resource:")
                print("\n".join("  " + ln for ln in named))
                passed += 1
    print(f"iam-test: {time.monotonic() - t0:.1f}s")
    print(f"iam-test: {passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
