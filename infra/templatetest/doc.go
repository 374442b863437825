// Package templatetest holds template.yaml (the AWS SAM template) to the code
// and to its own invariants: each function's build target and environment,
// the queues' timeouts and retention, the TTL attribute, least-privilege
// policies, alarms and outputs. It has tests only; the template is read with
// gopkg.in/yaml.v3's Node, which keeps CloudFormation's !Ref, !GetAtt and
// !Sub tags (no CloudFormation model library that would drop properties).
package templatetest
