#!/usr/bin/env python3
"""make iam (and make iam-test): the gradual deployment of the translated template.

template.yaml is translated by aws-sam-translator (translate.py's offline translation, the version the
pinned SAM CLI uses) with DeploymentType set to each of DEPLOYMENT_TYPES, and the CloudFormation it
becomes must hold, for each of the receiver, the processor and the compensator:

  - an AWS::CodeDeploy::DeploymentGroup <Function>DeploymentGroup of ServerlessDeploymentApplication,
    configured CodeDeployDefault.Lambda<DeploymentType>, rolling back on failure and on alarm;
  - its AlarmConfiguration, under that DeploymentType's conditions: enabled with exactly the function's
    rollback alarms of ROLLBACK_ALARMS (each an AWS::CloudWatch::Alarm of the template) for a canary or
    linear type, and empty for AllAtOnce (docs/SAM.md "Gradual deployment": an empty configuration
    removes the alarms a previous canary deployment set);
  - the alias `live` (AWS::Lambda::Alias <Function>Aliaslive) with the CodeDeploy update policy of that
    group, and PreTraffic hook PreTrafficFunction for the receiver and the processor (none for the
    compensator);
  - every event source on the alias: the SQS event source mappings, the schedule's target, the HTTP
    API's integrations and the permissions of API Gateway and EventBridge;

and the hook must be a function without an alias of its own, named CodeDeployHook_… (the only names the
role SAM makes for CodeDeploy, with AWSCodeDeployRoleForLambda, may invoke).

Then the test breaks the template on purpose (an alarm removed from the receiver's DeploymentPreference,
the processor's hook removed, the compensator's alias removed) and the check must report each: a test
that cannot fail proves nothing. Last line: `deployment-test: N passed, N failed`.

Usage: test_deployment.py --template template.yaml
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import translate  # noqa: E402

DEPLOYMENT_TYPES = ["Canary10Percent5Minutes", "Linear10PercentEvery1Minute", "AllAtOnce"]

# The rollback triggers of each function's deployment (docs/SAM.md "Gradual deployment").
ROLLBACK_ALARMS = {
    "ReceiverFunction": ["ReceiverErrorsAlarm", "Receiver5xxAlarm", "ReceiverLatencyAlarm", "ReceiverAliasLatencyAlarm"],
    "ProcessorFunction": ["ProcessorErrorsAlarm"],
    "CompensatorFunction": ["CompensatorErrorsAlarm"],
}
HOOKED = {"ReceiverFunction", "ProcessorFunction"}
HOOK = "PreTrafficFunction"
ALIAS = "live"
SECRET = "arn:aws:secretsmanager:us-east-1:123456789012:secret:hookwall/tenants-AbCdEf"


def conditions_only(node, res: translate.Resolver):
    """node with every Fn::If decided by res's conditions; everything else (Refs) left as it is."""
    if isinstance(node, list):
        return [conditions_only(x, res) for x in node]
    if isinstance(node, dict):
        if set(node) == {"Fn::If"}:
            cond, a, b = node["Fn::If"]
            return conditions_only(a if res.condition(cond) else b, res)
        return {k: conditions_only(v, res) for k, v in node.items()}
    return node


def ref(logical: str) -> dict:
    return {"Ref": logical}


def check(template: dict, deployment_type: str) -> list[str]:
    """What is wrong with the translation of template under DeploymentType=deployment_type."""
    params = {"TenantsSecretArn": SECRET, "DeploymentType": deployment_type}
    try:
        cfn = translate.translate(template, params)
    except Exception as e:  # the translator's own errors
        return [f"aws-sam-translator failed: {e}"]
    res = translate.Resolver(cfn, params)
    R = cfn.get("Resources", {})
    problems: list[str] = []

    def where(logical: str) -> str:
        return f"DeploymentType={deployment_type}: {logical}"

    app = "ServerlessDeploymentApplication"
    if R.get(app, {}).get("Type") != "AWS::CodeDeploy::Application":
        problems.append(f"DeploymentType={deployment_type}: no AWS::CodeDeploy::Application {app}")
    for fn, alarms in ROLLBACK_ALARMS.items():
        group, alias = f"{fn}DeploymentGroup", f"{fn}Alias{ALIAS}"
        # Every way the function is invoked goes through the alias.
        for logical, r in R.items():
            p = r.get("Properties", {})
            if r["Type"] in ("AWS::Lambda::EventSourceMapping", "AWS::Lambda::Permission") and p.get("FunctionName") in (ref(fn), ref(alias)):
                if p["FunctionName"] != ref(alias):
                    problems.append(f"{where(logical)}: FunctionName Ref {fn}, want the alias {alias}")
            if r["Type"] == "AWS::Events::Rule":
                for target in p.get("Targets", []):
                    if target.get("Arn") in (ref(fn), {"Fn::GetAtt": [fn, "Arn"]}):
                        problems.append(f"{where(logical)}: target {json.dumps(target['Arn'])}, want the alias {alias}")
            if r["Type"] == "AWS::ApiGatewayV2::Api":
                body = json.dumps(p.get("Body", {}))
                if "${" + fn + ".Arn}" in body or f'"{fn}", "Arn"' in body:
                    problems.append(f"{where(logical)}: an integration invokes {fn}, not its alias {alias}")
        g = R.get(group)
        if g is None or g.get("Type") != "AWS::CodeDeploy::DeploymentGroup":
            problems.append(f"{where(fn)}: no AWS::CodeDeploy::DeploymentGroup {group}")
            continue
        gp = conditions_only(g.get("Properties", {}), res)
        if gp.get("ApplicationName") != ref(app):
            problems.append(f"{where(group)}: ApplicationName {json.dumps(gp.get('ApplicationName'))}, want Ref {app}")
        config = res.resolve(g["Properties"].get("DeploymentConfigName"))
        if config != f"CodeDeployDefault.Lambda{deployment_type}":
            problems.append(f"{where(group)}: DeploymentConfigName {config!r}, want CodeDeployDefault.Lambda{deployment_type}")
        rollback = gp.get("AutoRollbackConfiguration", {})
        if not rollback.get("Enabled") or not {"DEPLOYMENT_FAILURE", "DEPLOYMENT_STOP_ON_ALARM"} <= set(rollback.get("Events", [])):
            problems.append(f"{where(group)}: AutoRollbackConfiguration {json.dumps(rollback)} does not roll back on failure and alarm")
        ac = gp.get("AlarmConfiguration")
        got = [a.get("Name") for a in (ac or {}).get("Alarms", [])]
        if deployment_type == "AllAtOnce":
            if ac != {}:
                problems.append(f"{where(group)}: AlarmConfiguration {json.dumps(ac)}, want {{}} (AllAtOnce watches no alarm, "
                                f"and an empty configuration clears a canary's)")
        else:
            want = [ref(a) for a in alarms]
            if not (ac or {}).get("Enabled") or sorted(map(json.dumps, got)) != sorted(map(json.dumps, want)):
                problems.append(f"{where(group)}: AlarmConfiguration {json.dumps(ac)}, want enabled with exactly "
                                f"{', '.join(alarms)} as rollback triggers")
            for a in alarms:
                if R.get(a, {}).get("Type") != "AWS::CloudWatch::Alarm":
                    problems.append(f"{where(group)}: rollback alarm {a} is not an AWS::CloudWatch::Alarm of the template")
        a = R.get(alias)
        if a is None or a.get("Type") != "AWS::Lambda::Alias":
            problems.append(f"{where(fn)}: no AWS::Lambda::Alias {alias} (AutoPublishAlias: {ALIAS})")
            continue
        update = a.get("UpdatePolicy", {}).get("CodeDeployLambdaAliasUpdate", {})
        if update.get("ApplicationName") != ref(app) or update.get("DeploymentGroupName") != ref(group):
            problems.append(f"{where(alias)}: UpdatePolicy {json.dumps(update)} is not CodeDeploy's with {group}")
        hook = update.get("BeforeAllowTrafficHook")
        if fn in HOOKED and hook != ref(HOOK):
            problems.append(f"{where(alias)}: BeforeAllowTrafficHook {json.dumps(hook)}, want Ref {HOOK} (the pre-traffic hook)")
        if fn not in HOOKED and hook is not None:
            problems.append(f"{where(alias)}: BeforeAllowTrafficHook {json.dumps(hook)}, want none")
    hook = R.get(HOOK)
    if hook is None or hook.get("Type") != "AWS::Lambda::Function":
        problems.append(f"DeploymentType={deployment_type}: no function {HOOK}")
    else:
        name = res.physical_name(HOOK)
        if not name.startswith("CodeDeployHook_"):
            problems.append(f"{where(HOOK)}: FunctionName {name!r} does not start with CodeDeployHook_ (the CodeDeploy role may not invoke it)")
        if f"{HOOK}Alias{ALIAS}" in R or f"{HOOK}DeploymentGroup" in R:
            problems.append(f"{where(HOOK)}: the hook has an alias or a deployment of its own")
    role = R.get("CodeDeployServiceRole", {}).get("Properties", {})
    if "arn:aws:iam::aws:policy/service-role/AWSCodeDeployRoleForLambda" not in role.get("ManagedPolicyArns", []):
        problems.append(f"DeploymentType={deployment_type}: CodeDeployServiceRole is not SAM's role with AWSCodeDeployRoleForLambda "
                        f"(the CodeDeployHook_ name rule comes from it)")
    return problems


# --- the broken variants -------------------------------------------------------------------------

def drop_receiver_alarm(t: dict) -> str:
    alarms = t["Resources"]["ReceiverFunction"]["Properties"]["DeploymentPreference"]["Alarms"]["Fn::If"][1]
    alarms[:] = [a for a in alarms if a != ref("ReceiverLatencyAlarm")]
    return "ReceiverFunctionDeploymentGroup"


def drop_processor_hook(t: dict) -> str:
    del t["Resources"]["ProcessorFunction"]["Properties"]["DeploymentPreference"]["Hooks"]
    return "ProcessorFunctionAliaslive"


def drop_compensator_alias(t: dict) -> str:
    props = t["Resources"]["CompensatorFunction"]["Properties"]
    del props["AutoPublishAlias"], props["DeploymentPreference"]
    return "CompensatorFunction"


VARIANTS = [
    ("receiver-alarm-removed", drop_receiver_alarm, "Canary10Percent5Minutes"),
    ("processor-hook-removed", drop_processor_hook, "AllAtOnce"),
    ("compensator-alias-removed", drop_compensator_alias, "Linear10PercentEvery1Minute"),
]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--template", required=True, type=Path)
    args = ap.parse_args(argv)
    template = translate.load_template(args.template)
    passed = failed = 0
    for dt in DEPLOYMENT_TYPES:
        problems = check(template, dt)
        if problems:
            failed += 1
            print(f"deployment-test: FAIL DeploymentType={dt}:")
            print("\n".join("  " + p for p in problems))
        else:
            passed += 1
            print(f"deployment-test: ok DeploymentType={dt}: a deployment group per function ({', '.join(ROLLBACK_ALARMS)}), "
                  + ("no alarm" if dt == "AllAtOnce" else "their alarms as rollback triggers")
                  + f", the pre-traffic hook on the receiver's and the processor's alias")
    for name, mutate, dt in VARIANTS:
        t = copy.deepcopy(template)
        try:
            culprit = mutate(t)
        except (KeyError, IndexError, TypeError) as e:
            failed += 1
            print(f"deployment-test: FAIL {name}: cannot make the variant from {args.template} ({e!r})")
            continue
        problems = [p for p in check(t, dt) if culprit in p]
        if problems:
            passed += 1
            print(f"deployment-test: ok {name}: reported: {problems[0]}")
        else:
            failed += 1
            print(f"deployment-test: FAIL {name}: the check did not report {culprit} under DeploymentType={dt}")
    print(f"deployment-test: {passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
