package templatetest

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"gopkg.in/yaml.v3"
)

// The queues, the table and the log groups hold personal data (chat
// messages) or what is derived from it: each is encrypted at rest, with the
// customer managed key KmsKeyArn when it is set.
var (
	encryptedQueues = []string{"EventsQueue", "EventsDeadLetterQueue"}
	// sqsEventSources are the SQS event sources, by function, whose
	// concurrency ScalingConfig.MaximumConcurrency bounds.
	sqsEventSources = map[string]string{"ProcessorFunction": "Queue", "CompensatorFunction": "DeadLetters"}
	// kmsActions are what a function needs on the customer managed key to use
	// the table (read and write) and the queues (send: GenerateDataKey;
	// receive: Decrypt).
	kmsActions = []string{"kms:Decrypt", "kms:Encrypt", "kms:GenerateDataKey", "kms:DescribeKey"}
)

// isIfKey reports whether n is !If [HasKmsKey, !Ref KmsKeyArn, !Ref AWS::NoValue].
func isIfKey(n *yaml.Node) bool {
	return isIf(n, func(a, b *yaml.Node) bool { return isRef(a, "KmsKeyArn") && isRef(b, "AWS::NoValue") })
}

// isIf reports whether n is !If [HasKmsKey, a, b] with branches that satisfy ok.
func isIf(n *yaml.Node, ok func(a, b *yaml.Node) bool) bool {
	return n != nil && n.Tag == "!If" && n.Kind == yaml.SequenceNode && len(n.Content) == 3 &&
		n.Content[0].Value == "HasKmsKey" && ok(n.Content[1], n.Content[2])
}

func isRef(n *yaml.Node, name string) bool {
	return n != nil && n.Tag == "!Ref" && n.Value == name
}

// checkKmsParameter: KmsKeyArn is a key ARN or empty (the default), and
// HasKmsKey is true exactly when it is set.
func checkKmsParameter(root *yaml.Node) []error {
	var errs []error
	p := get(root, "Parameters", "KmsKeyArn")
	if p == nil {
		return []error{errors.New("no KmsKeyArn parameter")}
	}
	if d := get(p, "Default"); d == nil || d.Value != "" {
		errs = append(errs, errors.New("KmsKeyArn's Default is not empty: a stack must deploy without a key of its own"))
	}
	if pat := get(p, "AllowedPattern"); pat != nil {
		re, err := regexp.Compile(pat.Value)
		if err != nil {
			errs = append(errs, fmt.Errorf("KmsKeyArn: %w", err))
		} else {
			for _, ok := range []string{"", "arn:aws:kms:eu-west-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab",
				"arn:aws-cn:kms:cn-north-1:123456789012:key/mrk-1234abcd12ab34cd56ef1234567890ab"} {
				if !re.MatchString(ok) {
					errs = append(errs, fmt.Errorf("KmsKeyArn refuses the key ARN %q", ok))
				}
			}
			// An alias works for neither CloudWatch Logs nor an IAM Resource.
			for _, bad := range []string{"alias/hookwall", "arn:aws:kms:eu-west-1:123456789012:alias/hookwall", "1234abcd-12ab-34cd-56ef-1234567890ab"} {
				if re.MatchString(bad) {
					errs = append(errs, fmt.Errorf("KmsKeyArn accepts %q, which is no key ARN", bad))
				}
			}
		}
	}
	c := get(root, "Conditions", "HasKmsKey")
	if c == nil || c.Tag != "!Not" || len(c.Content) != 1 {
		return append(errs, errors.New(`no condition HasKmsKey: !Not [!Equals [!Ref KmsKeyArn, ""]]`))
	}
	eq := c.Content[0]
	if eq.Tag != "!Equals" || len(eq.Content) != 2 || !isRef(eq.Content[0], "KmsKeyArn") || eq.Content[1].Value != "" {
		errs = append(errs, errors.New(`HasKmsKey is not !Not [!Equals [!Ref KmsKeyArn, ""]]`))
	}
	return errs
}

// checkEncryption: both queues are encrypted at rest (KmsKeyArn when set,
// else SSE-SQS), the table with KMS (KmsKeyArn when set, else the AWS
// managed key), and every log group with KmsKeyArn when it is set.
func checkEncryption(root *yaml.Node) []error {
	var errs []error
	for _, q := range encryptedQueues {
		p := get(root, "Resources", q, "Properties")
		if !isIfKey(get(p, "KmsMasterKeyId")) {
			errs = append(errs, fmt.Errorf("%s: KmsMasterKeyId is not !If [HasKmsKey, !Ref KmsKeyArn, !Ref AWS::NoValue]", q))
		}
		sse := get(p, "SqsManagedSseEnabled")
		if !isIf(sse, func(a, b *yaml.Node) bool { return isRef(a, "AWS::NoValue") && b.Value == "true" }) {
			errs = append(errs, fmt.Errorf("%s: SqsManagedSseEnabled is not !If [HasKmsKey, !Ref AWS::NoValue, true]: unencrypted without a key", q))
		}
	}
	sse := get(root, "Resources", "EventsTable", "Properties", "SSESpecification")
	if e := get(sse, "SSEEnabled"); e == nil || e.Value != "true" {
		errs = append(errs, errors.New("EventsTable: SSESpecification.SSEEnabled is not true"))
	}
	if t := get(sse, "SSEType"); t == nil || t.Value != "KMS" {
		errs = append(errs, errors.New("EventsTable: SSESpecification.SSEType is not KMS"))
	}
	if !isIfKey(get(sse, "KMSMasterKeyId")) {
		errs = append(errs, errors.New("EventsTable: SSESpecification.KMSMasterKeyId is not !If [HasKmsKey, !Ref KmsKeyArn, !Ref AWS::NoValue]"))
	}
	res := get(root, "Resources")
	groups := 0
	for _, id := range keys(res) {
		if t := get(res, id, "Type"); t == nil || t.Value != "AWS::Logs::LogGroup" {
			continue
		}
		groups++
		if !isIfKey(get(res, id, "Properties", "KmsKeyId")) {
			errs = append(errs, fmt.Errorf("%s: KmsKeyId is not !If [HasKmsKey, !Ref KmsKeyArn, !Ref AWS::NoValue]", id))
		}
	}
	if groups == 0 {
		errs = append(errs, errors.New("no log group"))
	}
	return errs
}

// checkKmsPolicies: with a key, every function may use it, through DynamoDB
// and SQS only, and without one no statement names it.
func checkKmsPolicies(root *yaml.Node) []error {
	var errs []error
	for _, fn := range functions {
		found := false
		for _, st := range keyStatements(root, fn.logicalID) {
			{
				if !isRef(get(st, "Resource"), "KmsKeyArn") {
					continue
				}
				found = true
				var actions []string
				for _, a := range list(get(st, "Action")) {
					actions = append(actions, a.Value)
				}
				for _, want := range kmsActions {
					if !strings.Contains(" "+strings.Join(actions, " ")+" ", " "+want+" ") {
						errs = append(errs, fmt.Errorf("%s: the KmsKeyArn statement lacks %s", fn.logicalID, want))
					}
				}
				via := list(get(st, "Condition", "StringEquals", "kms:ViaService"))
				var services []string
				for _, v := range via {
					services = append(services, v.Value)
				}
				if strings.Join(services, " ") != "dynamodb.${AWS::Region}.amazonaws.com sqs.${AWS::Region}.amazonaws.com" {
					errs = append(errs, fmt.Errorf("%s: the KmsKeyArn statement's kms:ViaService is %v, want DynamoDB and SQS of the region", fn.logicalID, services))
				}
			}
		}
		if !found {
			errs = append(errs, fmt.Errorf("%s: no !If [HasKmsKey, {Statement: … Resource: !Ref KmsKeyArn}, !Ref AWS::NoValue] policy", fn.logicalID))
		}
	}
	return errs
}

// keyStatements returns the statements of function id's policies that
// hold only when a key is given (the first branch of an !If [cond, st,
// !Ref AWS::NoValue]): in SAM's Policies (a policy document per !If), or in
// the statements of its own role (Role: !GetAtt <Role>.Arn, a statement per
// !If).
func keyStatements(root *yaml.Node, id string) []*yaml.Node {
	var out []*yaml.Node
	props := get(root, "Resources", id, "Properties")
	for _, p := range list(get(props, "Policies")) {
		if isIf(p, func(a, b *yaml.Node) bool { return get(a, "Statement") != nil && isRef(b, "AWS::NoValue") }) {
			out = append(out, get(p.Content[1], "Statement").Content...)
		}
	}
	if role := get(props, "Role"); role != nil && role.Tag == "!GetAtt" {
		roleID, _, _ := strings.Cut(role.Value, ".")
		for _, p := range list(get(root, "Resources", roleID, "Properties", "Policies")) {
			for _, st := range list(get(p, "PolicyDocument", "Statement")) {
				if isIf(st, func(a, b *yaml.Node) bool { return get(a, "Effect") != nil && isRef(b, "AWS::NoValue") }) {
					out = append(out, st.Content[1])
				}
			}
		}
	}
	return out
}

// checkAccessLog: the HTTP API writes one JSON line per request to a log
// group of the stack with a retention, without the query string or headers
// (where the platforms' signatures travel).
func checkAccessLog(root *yaml.Node) []error {
	var errs []error
	als := get(root, "Resources", "WebhookApi", "Properties", "AccessLogSettings")
	dest := get(als, "DestinationArn")
	if dest == nil || dest.Tag != "!GetAtt" || !strings.HasSuffix(dest.Value, ".Arn") {
		return []error{errors.New("WebhookApi: AccessLogSettings.DestinationArn is not !GetAtt <log group>.Arn")}
	}
	group := strings.TrimSuffix(dest.Value, ".Arn")
	if t := get(root, "Resources", group, "Type"); t == nil || t.Value != "AWS::Logs::LogGroup" {
		errs = append(errs, fmt.Errorf("WebhookApi's access log %s is not an AWS::Logs::LogGroup of the stack", group))
	} else if !isRef(get(root, "Resources", group, "Properties", "RetentionInDays"), "LogRetentionDays") {
		errs = append(errs, fmt.Errorf("%s: RetentionInDays is not !Ref LogRetentionDays", group))
	}
	format := get(als, "Format")
	if format == nil || format.Kind != yaml.ScalarNode {
		return append(errs, errors.New("WebhookApi: AccessLogSettings has no Format"))
	}
	if strings.Contains(format.Value, "\n") {
		errs = append(errs, errors.New("WebhookApi: the access log Format spans lines (API Gateway wants one line)"))
	}
	var fields map[string]string
	if err := json.Unmarshal([]byte(format.Value), &fields); err != nil {
		return append(errs, fmt.Errorf("WebhookApi: the access log Format is not a JSON object of strings: %w", err))
	}
	for _, want := range []string{"$context.requestId", "$context.status", "$context.routeKey", "$context.identity.sourceIp",
		"$context.integrationErrorMessage"} {
		if !strings.Contains(format.Value, want) {
			errs = append(errs, fmt.Errorf("WebhookApi: the access log does not record %s", want))
		}
	}
	for _, bad := range []string{"$request.", "$context.requestOverride", "querystring", "header"} {
		if strings.Contains(strings.ToLower(format.Value), strings.ToLower(bad)) {
			errs = append(errs, fmt.Errorf("WebhookApi: the access log records %s (signatures travel in the query string and headers)", bad))
		}
	}
	return errs
}

// checkConcurrency: the processor's and the compensator's concurrency is
// bounded by their SQS event source's ScalingConfig.MaximumConcurrency, a
// parameter within SQS's bounds (2 to 1000), and not by reserved
// concurrency, which would throttle batches back onto the queue (each a
// receive) until SQS dead-letters them.
func checkConcurrency(root *yaml.Node) []error {
	var errs []error
	for _, fnID := range sortedKeys(sqsEventSources) {
		ev := sqsEventSources[fnID]
		props := get(root, "Resources", fnID, "Properties")
		if get(props, "ReservedConcurrentExecutions") != nil {
			errs = append(errs, fmt.Errorf("%s has ReservedConcurrentExecutions: it throttles the SQS poller's batches into the DLQ", fnID))
		}
		mc := get(props, "Events", ev, "Properties", "ScalingConfig", "MaximumConcurrency")
		if mc == nil || mc.Tag != "!Ref" {
			errs = append(errs, fmt.Errorf("%s event %s: ScalingConfig.MaximumConcurrency is not !Ref a parameter", fnID, ev))
			continue
		}
		p := get(root, "Parameters", mc.Value)
		lo, err1 := number(root, get(p, "MinValue"))
		hi, err2 := number(root, get(p, "MaxValue"))
		def, err3 := number(root, get(p, "Default"))
		if err := errors.Join(err1, err2, err3); err != nil {
			errs = append(errs, fmt.Errorf("parameter %s (%s's MaximumConcurrency): %w", mc.Value, fnID, err))
			continue
		}
		if lo < 2 || hi > 1000 || def < lo || def > hi {
			errs = append(errs, fmt.Errorf("parameter %s: [%g, %g] default %g, not within SQS's MaximumConcurrency 2 to 1000", mc.Value, lo, hi, def))
		}
	}
	return errs
}

// checkCheckovSkips: every check skipped for checkov (a resource's
// Metadata: checkov: skip) names a check and says why it does not apply.
func checkCheckovSkips(root *yaml.Node) []error {
	var errs []error
	res := get(root, "Resources")
	skips := 0
	for _, id := range keys(res) {
		ck := get(res, id, "Metadata", "checkov")
		if ck == nil {
			continue
		}
		skip := get(ck, "skip")
		if skip == nil || skip.Kind != yaml.SequenceNode {
			errs = append(errs, fmt.Errorf("%s: Metadata.checkov has no skip list", id))
			continue
		}
		seen := map[string]bool{}
		for i, s := range skip.Content {
			skips++
			cid, comment := get(s, "id"), get(s, "comment")
			if cid == nil || !regexp.MustCompile(`^CKV2?_AWS_[0-9]+$`).MatchString(cid.Value) {
				errs = append(errs, fmt.Errorf("%s: checkov skip %d has no check id (CKV_AWS_n)", id, i))
				continue
			}
			if seen[cid.Value] {
				errs = append(errs, fmt.Errorf("%s: checkov skips %s twice", id, cid.Value))
			}
			seen[cid.Value] = true
			if comment == nil || len(strings.Fields(comment.Value)) < 8 {
				errs = append(errs, fmt.Errorf("%s: checkov skip %s has no reason (a comment of a sentence at least)", id, cid.Value))
			}
		}
	}
	if skips == 0 {
		errs = append(errs, errors.New("no checkov skip at all: the functions' inapplicable checks (DLQ, VPC, environment key) are not explained"))
	}
	return errs
}
