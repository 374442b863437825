// make iam, step 2: evaluates every row of iam/inventory.json (must be Allowed) and every probe of
// iam/probes.json (must be Denied) against the identity policies translate.py resolved for each
// scenario, with @cloud-copilot/iam-simulate (AGPL-3.0-or-later; a dev-time tool, not shipped).
//
// The decision is the identity-policy decision only (the simulator's identityAnalysis): resource
// policies, SCPs/RCPs, permission boundaries other than the role's own and KMS key policies are not
// part of the stack's roles, so they are not evaluated (a KMS request is decided by the key policy
// too; here only what the role allows counts).
//
// Usage: node check.mjs --policies .local/iam/policies.json --inventory iam/inventory.json
//                       --probes iam/probes.json [--verbose]
// Prints one line per failure and a summary; exit 1 on any failure, 2 on bad input.
import { readFileSync } from 'node:fs'
import { parseArgs } from 'node:util'
import { runSimulation } from '@cloud-copilot/iam-simulate'

const { values: opts } = parseArgs({
  options: {
    policies: { type: 'string' },
    inventory: { type: 'string' },
    probes: { type: 'string' },
    verbose: { type: 'boolean', default: false }
  }
})
for (const k of ['policies', 'inventory']) {
  if (!opts[k]) {
    console.error(`usage: node check.mjs --policies P --inventory I [--probes P] [--verbose] (missing --${k})`)
    process.exit(2)
  }
}
const load = (p) => JSON.parse(readFileSync(p, 'utf8'))
const policies = load(opts.policies)
const inventory = load(opts.inventory)
const probes = opts.probes ? load(opts.probes).probes ?? [] : []
const { account, region } = policies

// Bad input (an unknown function, a logical name without an ARN, an action the simulator does not
// know): reported like failures, but exit 2 when nothing else failed.
const inputErrors = []

// {"kms:ViaService": "sqs"} -> sqs.<region>.amazonaws.com
function expandContext(ctx = {}) {
  const out = {}
  for (const [k, v] of Object.entries(ctx)) {
    const expand = (x) => (k.toLowerCase() === 'kms:viaservice' && !x.includes('.') ? `${x}.${region}.amazonaws.com` : x)
    out[k] = Array.isArray(v) ? v.map(expand) : expand(String(v))
  }
  return out
}

// The ARN a call acts on, from the logical resource's ARN. CloudWatch Logs authorizes
// CreateLogStream and PutLogEvents on the log stream (arn:…:log-group:NAME:log-stream:STREAM),
// which the log group's ARN (…:log-group:NAME:*) covers in a policy.
function requestResource(action, arn) {
  const a = action.toLowerCase()
  if (a.startsWith('logs:') && arn.endsWith(':*')) {
    const group = arn.slice(0, -2)
    if (a === 'logs:createlogstream' || a === 'logs:putlogevents') return `${group}:log-stream:2026/01/01/[$LATEST]0123456789abcdef`
    return group
  }
  return arn
}

function resolveResource(scenario, name) {
  if (name === '*' || name.startsWith('arn:')) return name
  if (!(name in scenario.resources)) return undefined
  return scenario.resources[name]
}

// policy/Sid, or policy/Statement[i] for a statement without a Sid.
function statementName(s) {
  const st = s.statement
  const sid = typeof st?.sid === 'function' ? st.sid() : st?.Sid
  const path = st?.otherProps?.path
  return `${s.policyId}/${sid || path || '?'}`
}

// Actions the Service Authorization Reference (the simulator's data) lists with no resource type, so
// that the simulator only evaluates them on "*", which their service nevertheless authorizes on a
// resource's ARN. Such a request on an ARN is evaluated as the surrogate action, an action of the same
// service whose resource type that ARN is, in policies where the action is renamed to the surrogate
// (a role whose policies name the surrogate itself is an input error).
//   codedeploy:PutLifecycleEventHookExecutionStatus: CodeDeploy authorizes it on the deployment group
//   of the deployment ("not authorized to perform: codedeploy:PutLifecycleEventHookExecutionStatus on
//   resource: arn:aws:codedeploy:…:deploymentgroup:<app>/<group>", davidgf/serverless-plugin-canary-
//   deployments#58); AWS CDK's LambdaDeploymentGroup.grantPutLifecycleEventHookExecutionStatus grants
//   it on deploymentGroupArn, and the SAM documentation's hook example on deploymentgroup:<app>/*.
const RESOURCE_LEVEL = new Map([
  ['codedeploy:putlifecycleeventhookexecutionstatus', { surrogate: 'codedeploy:GetDeploymentGroup', arn: ':deploymentgroup:' }]
])

// surrogateRequest returns the action and the policies to simulate a request of action on resource
// with: the action's surrogate and the policies with the action renamed, for RESOURCE_LEVEL actions
// on an ARN of their resource type; else the request as it is. {error} when the policies name the
// surrogate.
function surrogateRequest(fn, action, resource) {
  const over = RESOURCE_LEVEL.get(action.toLowerCase())
  if (!over || resource === '*' || !resource.includes(over.arn)) return { action, policies: fn.policies }
  const rename = (a) => (typeof a === 'string' && a.toLowerCase() === action.toLowerCase() ? over.surrogate : a)
  const names = (x) => [x ?? []].flat()
  for (const p of fn.policies) {
    for (const st of [p.document.Statement ?? []].flat()) {
      if ([...names(st.Action), ...names(st.NotAction)].some((a) => typeof a === 'string' && a.toLowerCase() === over.surrogate.toLowerCase())) {
        return { error: `${p.name} names ${over.surrogate}, the surrogate this check evaluates ${action} on a resource as` }
      }
    }
  }
  const policies = fn.policies.map((p) => ({
    ...p,
    document: {
      ...p.document,
      Statement: [p.document.Statement ?? []].flat().map((st) => {
        const out = { ...st }
        if (st.Action !== undefined) out.Action = Array.isArray(st.Action) ? st.Action.map(rename) : rename(st.Action)
        if (st.NotAction !== undefined) out.NotAction = Array.isArray(st.NotAction) ? st.NotAction.map(rename) : rename(st.NotAction)
        return out
      })
    }
  }))
  return { action: over.surrogate, policies }
}

// One simulation: {decision: 'Allowed'|'ImplicitlyDenied'|'ExplicitlyDenied', by: [statement names]}
// or {error}.
// Scenarios often give a function the same policies: each distinct request is simulated once.
const memo = new Map()
let simulations = 0
function evaluate(fn, action, resource, context) {
  fn._key ??= JSON.stringify([fn.roleArn, fn.policies.map((p) => p.document), fn.permissionsBoundary ?? []])
  const key = JSON.stringify([fn._key, action, resource, context])
  if (!memo.has(key)) memo.set(key, simulate(fn, action, resource, context))
  return memo.get(key)
}

async function simulate(fn, requested, resource, context) {
  simulations++
  const sr = surrogateRequest(fn, requested, resource)
  if (sr.error) return { error: sr.error }
  const action = sr.action
  const request = {
    principal: `arn:aws:sts::${account}:assumed-role/${fn.roleName}/${fn.functionName}`,
    action,
    resource: { resource, accountId: account },
    contextVariables: {
      'aws:PrincipalArn': fn.roleArn,
      'aws:PrincipalAccount': account,
      'aws:RequestedRegion': region,
      'aws:SecureTransport': 'true',
      ...context
    }
  }
  const sim = {
    request,
    identityPolicies: sr.policies.map((p) => ({ name: p.name, policy: p.document })),
    serviceControlPolicies: [],
    resourceControlPolicies: []
  }
  if (fn.permissionsBoundary?.length) {
    sim.permissionBoundaryPolicies = fn.permissionsBoundary.map((p) => ({ name: p.name, policy: p.document }))
  }
  const r = await runSimulation(sim, { simulationMode: 'Strict' })
  if (r.resultType === 'error') return { error: JSON.stringify(r.errors) }
  const results = r.resultType === 'single' ? [r.result] : r.results
  if (results.length === 0) return { decision: 'ImplicitlyDenied', by: [] }
  // Every pattern of a wildcard request must be allowed for the call to be allowed.
  let decision = 'Allowed'
  const by = new Set()
  for (const res of results) {
    const ia = res.analysis?.identityAnalysis
    const d = ia?.result ?? 'ImplicitlyDenied'
    if (d === 'ExplicitlyDenied') decision = d
    else if (d !== 'Allowed' && decision === 'Allowed') decision = d
    for (const s of d === 'Allowed' ? ia.allowStatements : ia?.denyStatements ?? []) by.add(statementName(s))
    if (fn.permissionsBoundary?.length && res.analysis?.permissionBoundaryAnalysis?.result !== 'Allowed' && d === 'Allowed') {
      decision = 'ImplicitlyDenied'
      by.add('the permissions boundary')
    }
  }
  return { decision, by: [...by] }
}

const fmtCtx = (c) => (Object.keys(c).length ? ` context=${JSON.stringify(c)}` : '')
const resText = (f) => (f.resource === f.logical ? f.resource : `${f.resource} (${f.logical})`)

// Failures grouped over scenarios: one line per (kind, function, action, resource, context).
const failures = new Map()
function fail(kind, scenario, fields, detail) {
  const key = JSON.stringify([kind, fields])
  if (!failures.has(key)) failures.set(key, { kind, fields, scenarios: [], detail })
  failures.get(key).scenarios.push(scenario)
}

let rowChecks = 0
let probeChecks = 0
const rowsSeen = new Set()
const probesSeen = new Set()
const applies = (when, scenario) => !when || Boolean(scenario.parameters[when])

for (const scenario of policies.scenarios) {
  for (const [i, row] of (inventory.rows ?? []).entries()) {
    if (!applies(row.when, scenario)) continue
    const fn = scenario.functions[row.function]
    const ctx = expandContext(row.context)
    const arn = resolveResource(scenario, row.resource)
    for (const action of row.actions ?? []) {
      const fields = { function: row.function, action, resource: arn ?? '?', logical: row.resource, context: ctx, sites: row.sites ?? [] }
      if (!fn) {
        inputErrors.push(`ERROR inventory row ${i}: function ${row.function} is not one of ${Object.keys(scenario.functions).join(', ')}`)
        continue
      }
      if (!arn) {
        fail('ERROR', scenario.name, fields, `no ARN for ${row.resource} in this scenario (a "when" missing?)`)
        continue
      }
      const res = await evaluate(fn, action, requestResource(action, arn), ctx)
      rowChecks++
      rowsSeen.add(i)
      if (res.error) fail('ERROR', scenario.name, fields, `the simulator refused the request: ${res.error}`)
      else if (res.decision !== 'Allowed') {
        fail('DENIED', scenario.name, fields, res.decision === 'ExplicitlyDenied' ? `explicitly denied by ${res.by.join(', ')}` : '')
      } else if (opts.verbose) console.log(`ok allowed scenario=${scenario.name} function=${row.function} action=${action} resource=${resText(fields)}${fmtCtx(ctx)} by ${res.by.join(', ')}`)
    }
  }
  for (const [i, probe] of probes.entries()) {
    if (!applies(probe.when, scenario)) continue
    const fn = scenario.functions[probe.function]
    const ctx = expandContext(probe.context)
    const arn = resolveResource(scenario, probe.resource)
    const fields = { function: probe.function, action: probe.action, resource: arn ?? '?', logical: probe.resource, context: ctx, why: probe.why }
    if (!fn) {
      inputErrors.push(`ERROR probe ${i}: function ${probe.function} is not one of ${Object.keys(scenario.functions).join(', ')}`)
      continue
    }
    if (!arn) {
      fail('ERROR', scenario.name, fields, `no ARN for ${probe.resource} in this scenario (a "when" missing?)`)
      continue
    }
    const res = await evaluate(fn, probe.action, requestResource(probe.action, arn), ctx)
    probeChecks++
    probesSeen.add(i)
    if (res.error) fail('ERROR', scenario.name, fields, `the simulator refused the request: ${res.error}`)
    else if (res.decision === 'Allowed') fail('ALLOWED', scenario.name, fields, `allowed by ${res.by.join(', ')}`)
    else if (opts.verbose) console.log(`ok denied scenario=${scenario.name} function=${probe.function} action=${probe.action} resource=${resText(fields)}${fmtCtx(ctx)}`)
  }
}

// The reverse: nothing granted that no code path uses. Every action of every Allow statement of a
// role's own (inline) policies, on each resource the statement names, must be the action of an
// inventory row of that function on that resource in that scenario. AWS managed policies SAM
// attaches (the receiver's logs and X-Ray) cannot be narrowed and are not checked here.
const wildcard = (pattern) => new RegExp('^' + pattern.split('*').map((s) => s.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('.*') + '$', 'i')
let grantChecks = 0
for (const scenario of policies.scenarios) {
  for (const [name, fn] of Object.entries(scenario.functions)) {
    const used = (inventory.rows ?? [])
      .filter((r) => r.function === name && applies(r.when, scenario))
      .flatMap((r) => (r.actions ?? []).map((a) => [a.toLowerCase(), resolveResource(scenario, r.resource)]))
    for (const pol of fn.policies.filter((p) => p.kind === 'inline')) {
      for (const st of [pol.document.Statement ?? []].flat()) {
        if (st.Effect !== 'Allow') continue
        for (const action of [st.Action ?? []].flat()) {
          for (const resource of [st.Resource ?? []].flat()) {
            grantChecks++
            const re = wildcard(action)
            if (!used.some(([a, arn]) => re.test(a) && arn === resource)) {
              const logical = Object.keys(scenario.resources).find((k) => scenario.resources[k] === resource) ?? resource
              const fields = { function: name, action, resource, logical, context: {}, grant: `${pol.name}/${st.Sid ?? '?'}` }
              fail('UNUSED', scenario.name, fields, 'no inventory row of the function calls it there')
            }
          }
        }
      }
    }
  }
}

for (const { kind, fields: f, scenarios, detail } of failures.values()) {
  const sc = `scenario=${scenarios.join(',')}`
  if (kind === 'DENIED') {
    console.log(`DENIED (want Allowed) ${sc} function=${f.function} action=${f.action} resource=${resText(f)}${fmtCtx(f.context)} sites=${f.sites.join('; ')}${detail ? ` [${detail}]` : ''}`)
  } else if (kind === 'UNUSED') {
    console.log(`UNUSED grant (nothing may be granted that no code path uses) ${sc} function=${f.function} action=${f.action} resource=${resText(f)} in ${f.grant}: ${detail}`)
  } else if (kind === 'ALLOWED') {
    console.log(`ALLOWED (want Denied) probe ${sc} function=${f.function} action=${f.action} resource=${resText(f)}${fmtCtx(f.context)} [${detail}] (${f.why ?? ''})`)
  } else {
    console.log(`ERROR ${sc} function=${f.function} action=${f.action} resource=${resText(f)}${fmtCtx(f.context)}: ${detail}`)
  }
}
for (const e of new Set(inputErrors)) console.log(e)

for (const n of policies.notes ?? []) console.log(`iam: note: ${n}`)
const nRows = (inventory.rows ?? []).length
const scenarioNames = policies.scenarios.map((s) => s.name).join(', ')
const nFail = failures.size + new Set(inputErrors).size
const failedRows = [...failures.values()].filter((f) => f.kind !== 'ALLOWED' && f.kind !== 'UNUSED' && !('why' in f.fields)).reduce((n, f) => n + f.scenarios.length, 0)
const failedProbes = [...failures.values()].filter((f) => 'why' in f.fields).reduce((n, f) => n + f.scenarios.length, 0)
const failedGrants = [...failures.values()].filter((f) => f.kind === 'UNUSED').reduce((n, f) => n + f.scenarios.length, 0)
const counts =
  `${rowChecks - failedRows} of ${rowChecks} row checks allowed (${nRows} inventory rows x ${policies.scenarios.length} scenarios: ${scenarioNames}; ` +
  `a row with "when" only where its parameter is set), ${probeChecks - failedProbes} of ${probeChecks} probe checks denied (${probes.length} probes), ` +
  `${grantChecks - failedGrants} of ${grantChecks} grants of the roles' own policies used by an inventory row`
if (nFail === 0) console.log(`iam: ok: ${counts}`)
else console.log(`iam: FAIL: ${nFail} failure${nFail === 1 ? '' : 's'} (lines above); ${counts}`)
const unchecked = nRows - rowsSeen.size
if (unchecked) console.log(`iam: note: ${unchecked} inventory rows apply to no scenario`)
if (opts.verbose) console.log(`iam: ${simulations} distinct simulations`)
const anyFailure = [...failures.values()].some((f) => f.kind !== 'ERROR')
process.exit(anyFailure ? 1 : failures.size + inputErrors.length ? 2 : 0)
