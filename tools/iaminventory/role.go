package iaminventory

import (
	"fmt"
	"strings"

	"github.com/hookwall/hookwall/tools/iaminventory/samtmpl"
)

// templateSite is how a row's site names a place in template.yaml.
func templateSite(path, note string) string {
	return TemplatePath + " " + path + " (" + note + ")"
}

// pollerOperations are what Lambda's SQS event source calls on the queue
// with the function's role.
var pollerOperations = []string{"sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:GetQueueAttributes"}

// kmsActions are the KMS calls AWS makes with the caller's credentials when
// a customer managed key encrypts the resource, by the service the call
// goes through and whether it reads or writes:
//
//   - SQS: a producer needs kms:GenerateDataKey and kms:Decrypt, a consumer
//     kms:Decrypt ("Configuring AWS KMS permissions", Amazon SQS Developer
//     Guide, sqs-key-management.html).
//   - DynamoDB: the principal that reads or writes a table encrypted with a
//     customer managed key needs the key through DynamoDB: kms:Decrypt and
//     kms:DescribeKey for the table key, kms:Encrypt and kms:GenerateDataKey
//     when DynamoDB makes or re-wraps it (the "Authorizing use of your
//     customer managed key" section of the DynamoDB Developer Guide's
//     encryption-at-rest pages, whose example key policy allows these with
//     kms:ViaService dynamodb.<region>.amazonaws.com; kms:CreateGrant and
//     kms:ReEncrypt* there are for creating and re-keying the table, which
//     the functions do not do). Every DynamoDB call gets all four: which one
//     DynamoDB makes depends on its cache of the table key, not on the
//     operation.
var kmsActions = map[string][]string{
	"sqs send":    {"kms:GenerateDataKey", "kms:Decrypt"},
	"sqs receive": {"kms:Decrypt"},
	"dynamodb":    {"kms:Decrypt", "kms:Encrypt", "kms:GenerateDataKey", "kms:DescribeKey"},
}

// sqsSends are the SQS operations that write messages (the rest only
// read, or do not touch a message body).
var sqsSends = map[string]bool{"sqs:SendMessage": true, "sqs:SendMessageBatch": true}

// roleRows returns the rows of the calls AWS makes with each function's
// role: the SQS poller's, the runtime's logs and traces, and KMS on behalf
// of the function's calls (codeRows) on encrypted resources.
func roleRows(functions []string, codeRows []Row, tmpl *samtmpl.Template) ([]Row, []string) {
	var problems []string
	var out []Row
	row := func(function, op, resource, when string, ctx map[string]string, site string) Row {
		if ctx == nil {
			ctx = map[string]string{}
		}
		return Row{Function: function, Operation: op, Actions: []string{op}, Resource: resource, When: when,
			Context: ctx, Sites: []string{site}}
	}
	for _, fn := range functions {
		f, ok := tmpl.FunctionNamed(fn)
		if !ok {
			problems = append(problems, fmt.Sprintf("%s: no AWS::Serverless::Function %s%sFunction in template.yaml", fn, strings.ToUpper(fn[:1]), fn[1:]))
			continue
		}
		var own []Row // this function's rows, for KMS
		for _, r := range codeRows {
			if r.Function == fn {
				own = append(own, r)
			}
		}
		for _, ev := range f.SQSEvents {
			for _, op := range pollerOperations {
				r := row(fn, op, ev.Queue, "", nil, templateSite(ev.Path, "Lambda's SQS poller"))
				out = append(out, r)
				own = append(own, r)
			}
		}
		if f.LogGroup == "" {
			problems = append(problems, fmt.Sprintf("%s: %s has no LoggingConfig.LogGroup: its log group has no logical name to grant", fn, f.LogicalID))
		} else {
			for _, op := range []string{"logs:CreateLogStream", "logs:PutLogEvents"} {
				out = append(out, row(fn, op, f.LogGroup, "", nil, templateSite(f.LogGroupPath, "the Lambda runtime's logs")))
			}
		}
		if f.Tracing == "Active" {
			for _, op := range []string{"xray:PutTraceSegments", "xray:PutTelemetryRecords"} {
				out = append(out, row(fn, op, "*", "", nil, templateSite(f.TracingPath, "the Lambda runtime's X-Ray segments")))
			}
		}
		for _, r := range own {
			service, _, _ := strings.Cut(r.Operation, ":")
			base, _, _ := strings.Cut(r.Resource, "/index/") // an index is encrypted with its table
			key, encrypted := tmpl.Keys[base]
			if !encrypted || r.When != "" {
				continue
			}
			var kind string
			switch {
			case service == "dynamodb":
				kind = "dynamodb"
			case service == "sqs" && sqsSends[r.Operation]:
				kind = "sqs send"
			case r.Operation == "sqs:ReceiveMessage":
				kind = "sqs receive"
			default:
				continue
			}
			resource := strings.TrimSuffix(key.Param, "Arn")
			for _, op := range kmsActions[kind] {
				out = append(out, row(fn, op, resource, key.Param, map[string]string{"kms:ViaService": service},
					templateSite(key.Path, "KMS through "+service)))
			}
		}
	}
	return out, problems
}
