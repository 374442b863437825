package templatetest

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/hookwall/hookwall/functions/processor/handlers"
	"github.com/hookwall/hookwall/shared/config/settings"
	"github.com/hookwall/hookwall/shared/engine/dispatch"
	"github.com/hookwall/hookwall/shared/engine/platform"
	"github.com/hookwall/hookwall/shared/state/store"
)

const (
	templatePath = "../../template.yaml"
	makefilePath = "../../Makefile"
	functionsDir = "../../functions"
)

// function is one Lambda function: its directory under functions/, its
// logical id in the template, what its settings loader reads, the SDK
// endpoint variables of the services it calls (declared empty for sam
// local), and the Globals variables it is given but does not read.
type function struct {
	dir       string
	logicalID string
	reads     func() []string
	endpoints []string
	ignores   []string
}

var functions = []function{
	{"receiver", "ReceiverFunction", settings.ReceiverVariables,
		[]string{"AWS_ENDPOINT_URL_DYNAMODB", "AWS_ENDPOINT_URL_SQS"}, nil},
	{"processor", "ProcessorFunction", withHandlerSettings(settings.ProcessorVariables),
		[]string{"AWS_ENDPOINT_URL_DYNAMODB", "AWS_ENDPOINT_URL_SQS", "AWS_ENDPOINT_URL_EVENTBRIDGE"}, nil},
	{"compensator", "CompensatorFunction", withHandlerSettings(settings.CompensatorVariables),
		[]string{"AWS_ENDPOINT_URL_DYNAMODB", "AWS_ENDPOINT_URL_SQS", "AWS_ENDPOINT_URL_EVENTBRIDGE"}, nil},
}

// hook is the CodeDeploy pre-traffic hook (docs/SAM.md "Gradual
// deployment"): a function of the template, but not of the data path, so
// not of functions (sam local, env.json, the KMS grants).
var hook = function{"pretraffic", "PreTrafficFunction", settings.PreTrafficVariables, nil, settings.PreTrafficIgnoredVariables()}

// allFunctions are functions and the hook.
var allFunctions = append(slices.Clone(functions), hook)

// handlerSettings returns the variables the team packages declare
// (setting.Setting), which the processor and the compensator read when they
// build the handler registry.
func handlerSettings() []string {
	settings, err := platform.Settings(handlers.Teams...)
	if err != nil {
		panic(err)
	}
	var names []string
	for _, s := range settings {
		names = append(names, s.Name)
	}
	return names
}

// isHandlerSetting reports whether name is one of [handlerSettings].
func isHandlerSetting(name string) bool { return slices.Contains(handlerSettings(), name) }

// withHandlerSettings adds the handler settings to what a loader reads.
func withHandlerSettings(loader func() []string) func() []string {
	return func() []string { return append(loader(), handlerSettings()...) }
}

// The alarms and outputs operators and the README rely on.
var (
	wantAlarms = []string{
		"DeadLetterDepthAlarm", "DeadEventsAlarm", "OldestMessageAgeAlarm",
		"ReceiverErrorsAlarm", "ProcessorErrorsAlarm", "CompensatorErrorsAlarm",
		"ReceiverThrottlesAlarm", "ProcessorThrottlesAlarm", "CompensatorThrottlesAlarm",
		"Receiver5xxAlarm", "ReceiverLatencyAlarm", "DuplicateRateAlarm", "ReceiverAliasLatencyAlarm",
	}
	wantOutputs = []string{
		"WebhookBaseUrl", "LineWebhookUrl", "WecomWebhookUrl", "WechatWebhookUrl", "StandardWebhookUrl",
		"EventsTableName", "EventsQueueUrl", "EventsDeadLetterQueueUrl", "OutcomesBusName", "OutcomesBusArn",
		"ReceiverFunctionName", "ProcessorFunctionName", "CompensatorFunctionName", "DashboardUrl",
	}
)

// A check examines the parsed template (the document's root mapping) and
// returns what is wrong, nil when nothing is.
type check struct {
	name string
	fn   func(root *yaml.Node) []error
}

var checks = []check{
	{"build targets", checkBuildTargets},
	{"environment", checkEnvironment},
	{"visibility timeouts", checkVisibility},
	{"receive count", checkReceiveCount},
	{"retention", checkRetention},
	{"ttl", checkTTL},
	{"retain", checkRetain},
	{"policies", checkPolicies},
	{"routes", checkRoutes},
	{"log groups", checkLogGroups},
	{"alarms", checkAlarms},
	{"outputs", checkOutputs},
	{"parameters", checkParameters},
	{"kms parameter", checkKmsParameter},
	{"encryption", checkEncryption},
	{"kms policies", checkKmsPolicies},
	{"access log", checkAccessLog},
	{"concurrency", checkConcurrency},
	{"checkov skips", checkCheckovSkips},
	{"gradual deployment", checkDeployment},
}

func TestTemplateInvariants(t *testing.T) {
	root := parse(t)
	for _, c := range checks {
		t.Run(c.name, func(t *testing.T) {
			for _, err := range c.fn(root) {
				t.Error(err)
			}
		})
	}
}

// Each check fails when its invariant is broken: every case breaks one in a
// fresh parse of the real template and expects its check to say so.
func TestChecksCatchBrokenInvariants(t *testing.T) {
	cases := []struct {
		name, check string
		mutate      func(t *testing.T, root *yaml.Node)
	}{
		{"function without a build target", "build targets", func(t *testing.T, root *yaml.Node) {
			renameKey(t, get(root, "Resources"), "ProcessorFunction", "WorkerFunction")
		}},
		{"variable the processor reads is not declared", "environment", func(t *testing.T, root *yaml.Node) {
			deleteKey(t, get(root, "Resources", "ProcessorFunction", "Properties", "Environment", "Variables"), "HOOKWALL_RETRY_CAP")
		}},
		{"variable no loader reads is declared", "environment", func(t *testing.T, root *yaml.Node) {
			setKey(get(root, "Resources", "ReceiverFunction", "Properties", "Environment", "Variables"), "HOOKWALL_LEASE", scalar("60s"))
		}},
		{"tenants file not declared for sam local", "environment", func(t *testing.T, root *yaml.Node) {
			deleteKey(t, get(root, "Globals", "Function", "Environment", "Variables"), "HOOKWALL_TENANTS_FILE")
		}},
		{"processor timeout above a sixth of the visibility timeout", "visibility timeouts", func(t *testing.T, root *yaml.Node) {
			get(root, "Resources", "ProcessorFunction", "Properties", "Timeout").Value = "62"
		}},
		{"batching window pushes past the visibility timeout", "visibility timeouts", func(t *testing.T, root *yaml.Node) {
			get(root, "Resources", "EventsQueue", "Properties", "VisibilityTimeout").Value = "360"
		}},
		{"maxReceiveCount not above the attempts", "receive count", func(t *testing.T, root *yaml.Node) {
			get(root, "Parameters", "MaxReceiveCount", "Default").Value = "5"
		}},
		{"DLQ keeps messages no longer than the queue", "retention", func(t *testing.T, root *yaml.Node) {
			get(root, "Resources", "EventsQueue", "Properties", "MessageRetentionPeriod").Value = "1209600"
		}},
		{"TTL on another attribute", "ttl", func(t *testing.T, root *yaml.Node) {
			get(root, "Resources", "EventsTable", "Properties", "TimeToLiveSpecification", "AttributeName").Value = "ttl"
		}},
		{"table deleted with the stack", "retain", func(t *testing.T, root *yaml.Node) {
			get(root, "Resources", "EventsTable", "DeletionPolicy").Value = "Delete"
		}},
		{"wildcard resource", "policies", func(t *testing.T, root *yaml.Node) {
			st := get(root, "Resources", "ReceiverFunction", "Properties", "Policies").Content[0]
			setKey(get(st, "Statement").Content[0], "Resource", scalar("*"))
		}},
		{"wildcard resource in a list", "policies", func(t *testing.T, root *yaml.Node) {
			st := get(root, "Resources", "CompensatorRole", "Properties", "Policies").Content[0]
			res := get(get(st, "PolicyDocument", "Statement").Content[1], "Resource")
			res.Content = append(res.Content, scalar("arn:aws:dynamodb:*:*:table/*"))
		}},
		{"wildcard resource beside X-Ray's", "policies", func(t *testing.T, root *yaml.Node) {
			for _, st := range roleStatements(root, "ProcessorRole").Content {
				if a := get(st, "Action"); a != nil && len(a.Content) > 0 && strings.HasPrefix(a.Content[0].Value, "xray:") {
					a.Content = append(a.Content, scalar("sqs:ReceiveMessage"))
				}
			}
		}},
		{"managed policy on a role", "policies", func(t *testing.T, root *yaml.Node) {
			seq := &yaml.Node{Kind: yaml.SequenceNode, Content: []*yaml.Node{scalar("arn:aws:iam::aws:policy/service-role/AWSLambdaSQSQueueExecutionRole")}}
			setKey(get(root, "Resources", "ProcessorRole", "Properties"), "ManagedPolicyArns", seq)
		}},
		{"SAM policy template on every table", "policies", func(t *testing.T, root *yaml.Node) {
			pols := get(root, "Resources", "ReceiverFunction", "Properties", "Policies")
			pols.Content = append(pols.Content, scalar("AmazonDynamoDBFullAccess"))
		}},
		{"ANY route", "routes", func(t *testing.T, root *yaml.Node) {
			get(root, "Resources", "ReceiverFunction", "Properties", "Events", "WebhookPost", "Properties", "Method").Value = "ANY"
		}},
		{"events API without IAM", "routes", func(t *testing.T, root *yaml.Node) {
			deleteKey(t, get(root, "Resources", "ReceiverFunction", "Properties", "Events", "EventsApi", "Properties"), "Auth")
		}},
		{"log group without retention", "log groups", func(t *testing.T, root *yaml.Node) {
			deleteKey(t, get(root, "Resources", "ProcessorLogGroup", "Properties"), "RetentionInDays")
		}},
		{"alarm missing", "alarms", func(t *testing.T, root *yaml.Node) {
			deleteKey(t, get(root, "Resources"), "DuplicateRateAlarm")
		}},
		{"alarm that notifies no one", "alarms", func(t *testing.T, root *yaml.Node) {
			deleteKey(t, get(root, "Resources", "ReceiverLatencyAlarm", "Properties"), "AlarmActions")
		}},
		{"output missing", "outputs", func(t *testing.T, root *yaml.Node) {
			deleteKey(t, get(root, "Outputs"), "WecomWebhookUrl")
		}},
		{"duration parameter without a pattern", "parameters", func(t *testing.T, root *yaml.Node) {
			deleteKey(t, get(root, "Parameters", "RetryCap"), "AllowedPattern")
		}},
		{"number parameter without bounds", "parameters", func(t *testing.T, root *yaml.Node) {
			deleteKey(t, get(root, "Parameters", "MaxAttempts"), "MaxValue")
		}},
		{"wildcard resource in a conditional policy", "policies", func(t *testing.T, root *yaml.Node) {
			for _, p := range get(root, "Resources", "ReceiverFunction", "Properties", "Policies").Content {
				if p.Tag == "!If" {
					setKey(get(p.Content[1], "Statement").Content[0], "Resource", scalar("*"))
				}
			}
		}},
		{"wildcard resource in a conditional statement", "policies", func(t *testing.T, root *yaml.Node) {
			for _, st := range roleStatements(root, "ProcessorRole").Content {
				if st.Tag == "!If" {
					setKey(st.Content[1], "Resource", scalar("*"))
				}
			}
		}},
		{"role not allowed to use the key", "kms policies", func(t *testing.T, root *yaml.Node) {
			stmts := roleStatements(root, "CompensatorRole")
			stmts.Content = slices.DeleteFunc(stmts.Content, func(st *yaml.Node) bool { return st.Tag == "!If" && st.Content[0].Value == "HasKmsKey" })
		}},
		{"key parameter with a default key", "kms parameter", func(t *testing.T, root *yaml.Node) {
			get(root, "Parameters", "KmsKeyArn", "Default").Value = "arn:aws:kms:us-east-1:123456789012:key/abc"
		}},
		{"key parameter accepting an alias", "kms parameter", func(t *testing.T, root *yaml.Node) {
			get(root, "Parameters", "KmsKeyArn", "AllowedPattern").Value = "^$|^arn:aws[a-z-]*:kms:.*$"
		}},
		{"queue without SSE-SQS when no key is given", "encryption", func(t *testing.T, root *yaml.Node) {
			deleteKey(t, get(root, "Resources", "EventsDeadLetterQueue", "Properties"), "SqsManagedSseEnabled")
		}},
		{"queue that ignores the key", "encryption", func(t *testing.T, root *yaml.Node) {
			deleteKey(t, get(root, "Resources", "EventsQueue", "Properties"), "KmsMasterKeyId")
		}},
		{"table that ignores the key", "encryption", func(t *testing.T, root *yaml.Node) {
			deleteKey(t, get(root, "Resources", "EventsTable", "Properties", "SSESpecification"), "KMSMasterKeyId")
		}},
		{"log group that ignores the key", "encryption", func(t *testing.T, root *yaml.Node) {
			deleteKey(t, get(root, "Resources", "ApiAccessLogGroup", "Properties"), "KmsKeyId")
		}},
		{"function not allowed to use the key", "kms policies", func(t *testing.T, root *yaml.Node) {
			pols := get(root, "Resources", "ReceiverFunction", "Properties", "Policies")
			pols.Content = slices.DeleteFunc(pols.Content, func(p *yaml.Node) bool { return p.Tag == "!If" })
		}},
		{"key statement without GenerateDataKey", "kms policies", func(t *testing.T, root *yaml.Node) {
			for _, p := range get(root, "Resources", "ReceiverFunction", "Properties", "Policies").Content {
				if p.Tag == "!If" {
					a := get(get(p.Content[1], "Statement").Content[0], "Action")
					a.Content = slices.DeleteFunc(a.Content, func(n *yaml.Node) bool { return n.Value == "kms:GenerateDataKey" })
				}
			}
		}},
		{"API without an access log", "access log", func(t *testing.T, root *yaml.Node) {
			deleteKey(t, get(root, "Resources", "WebhookApi", "Properties"), "AccessLogSettings")
		}},
		{"access log that records the query string", "access log", func(t *testing.T, root *yaml.Node) {
			f := get(root, "Resources", "WebhookApi", "Properties", "AccessLogSettings", "Format")
			f.Value = strings.TrimSuffix(f.Value, "}") + `,"query":"$request.querystring.msg_signature"}`
		}},
		{"access log that is not JSON", "access log", func(t *testing.T, root *yaml.Node) {
			get(root, "Resources", "WebhookApi", "Properties", "AccessLogSettings", "Format").Value = "$context.requestId $context.status"
		}},
		{"processor with reserved concurrency", "concurrency", func(t *testing.T, root *yaml.Node) {
			setKey(get(root, "Resources", "ProcessorFunction", "Properties"), "ReservedConcurrentExecutions", scalar("10"))
		}},
		{"compensator's event source unbounded", "concurrency", func(t *testing.T, root *yaml.Node) {
			deleteKey(t, get(root, "Resources", "CompensatorFunction", "Properties", "Events", "DeadLetters", "Properties"), "ScalingConfig")
		}},
		{"concurrency parameter below SQS's minimum", "concurrency", func(t *testing.T, root *yaml.Node) {
			get(root, "Parameters", "ProcessorMaxConcurrency", "MinValue").Value = "1"
		}},
		{"checkov skip without a reason", "checkov skips", func(t *testing.T, root *yaml.Node) {
			deleteKey(t, get(root, "Resources", "ProcessorFunction", "Metadata", "checkov", "skip").Content[0], "comment")
		}},
		{"function deployed without an alias", "gradual deployment", func(t *testing.T, root *yaml.Node) {
			deleteKey(t, get(root, "Resources", "CompensatorFunction", "Properties"), "AutoPublishAlias")
		}},
		{"deployment type fixed in the template", "gradual deployment", func(t *testing.T, root *yaml.Node) {
			setKey(get(root, "Resources", "ProcessorFunction", "Properties", "DeploymentPreference"), "Type", scalar("AllAtOnce"))
		}},
		{"hook CodeDeploy's role may not invoke", "gradual deployment", func(t *testing.T, root *yaml.Node) {
			get(root, "Resources", "PreTrafficFunction", "Properties", "FunctionName").Value = "${AWS::StackName}-pretraffic"
		}},
		{"checkov skip with an empty reason", "checkov skips", func(t *testing.T, root *yaml.Node) {
			get(root, "Resources", "ReceiverFunction", "Metadata", "checkov", "skip").Content[0].Content[3].Value = ""
		}},
	}
	byName := map[string]check{}
	for _, c := range checks {
		byName[c.name] = c
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, ok := byName[tc.check]
			if !ok {
				t.Fatalf("no check %q", tc.check)
			}
			root := parse(t)
			if errs := c.fn(root); len(errs) != 0 {
				t.Fatalf("the real template fails %q already: %v", tc.check, errs)
			}
			tc.mutate(t, root)
			errs := c.fn(root)
			if len(errs) == 0 {
				t.Fatalf("check %q passed a template with %s", tc.check, tc.name)
			}
			t.Logf("check %q: %v", tc.check, errors.Join(errs...))
		})
	}
}

// Every functions/<name>/main.go is a function of this test and of the template.
func TestEveryFunctionIsCovered(t *testing.T) {
	mains, err := filepath.Glob(filepath.Join(functionsDir, "*", "main.go"))
	if err != nil {
		t.Fatal(err)
	}
	var dirs, covered []string
	for _, m := range mains {
		dirs = append(dirs, filepath.Base(filepath.Dir(m)))
	}
	for _, fn := range allFunctions {
		covered = append(covered, fn.dir)
	}
	sort.Strings(dirs)
	sort.Strings(covered)
	if !slices.Equal(dirs, covered) {
		t.Errorf("functions/*/main.go: %v; this test covers %v", dirs, covered)
	}
	root := parse(t)
	var ids []string
	res := get(root, "Resources")
	for _, id := range keys(res) {
		if v := get(res, id, "Type"); v != nil && v.Value == "AWS::Serverless::Function" {
			ids = append(ids, id)
		}
	}
	var want []string
	for _, fn := range allFunctions {
		want = append(want, fn.logicalID)
	}
	sort.Strings(ids)
	sort.Strings(want)
	if !slices.Equal(ids, want) {
		t.Errorf("template.yaml's functions: %v; want %v", ids, want)
	}
}

// checkBuildTargets: every function is built by `make build-<LogicalId>`
// (BuildMethod: makefile), and that target builds ./functions/<dir>.
func checkBuildTargets(root *yaml.Node) []error {
	mk, err := os.ReadFile(makefilePath)
	if err != nil {
		return []error{err}
	}
	var errs []error
	res := get(root, "Resources")
	for _, id := range keys(res) {
		if v := get(res, id, "Type"); v == nil || v.Value != "AWS::Serverless::Function" {
			continue
		}
		if m := get(res, id, "Metadata", "BuildMethod"); m == nil || m.Value != "makefile" {
			errs = append(errs, fmt.Errorf("%s: Metadata.BuildMethod is not makefile", id))
		}
		target := regexp.MustCompile(`(?m)^build-` + regexp.QuoteMeta(id) + `:.*\n\t\$\(call sam_build,([a-z0-9_-]+)\)`)
		m := target.FindSubmatch(mk)
		if m == nil {
			errs = append(errs, fmt.Errorf("%s: the Makefile has no target build-%s calling sam_build", id, id))
			continue
		}
		fn, ok := functionByID(id)
		if !ok {
			errs = append(errs, fmt.Errorf("%s: not a function this test knows", id))
		} else if string(m[1]) != fn.dir {
			errs = append(errs, fmt.Errorf("build-%s builds functions/%s, want functions/%s", id, m[1], fn.dir))
		}
	}
	return errs
}

// checkEnvironment: each function declares exactly what its loader reads
// (the local-only tenants file included, empty) plus the SDK endpoint
// variables of the services it calls, declared empty.
func checkEnvironment(root *yaml.Node) []error {
	var errs []error
	globals := get(root, "Globals", "Function", "Environment", "Variables")
	for _, fn := range allFunctions {
		declared := map[string]*yaml.Node{}
		for _, m := range []*yaml.Node{globals, get(root, "Resources", fn.logicalID, "Properties", "Environment", "Variables")} {
			for i := 0; m != nil && i+1 < len(m.Content); i += 2 {
				declared[m.Content[i].Value] = m.Content[i+1]
			}
		}
		want := map[string]bool{}
		for _, name := range fn.reads() {
			want[name] = true
		}
		for _, name := range fn.endpoints {
			want[name] = true
		}
		for _, name := range sortedKeys(want) {
			if _, ok := declared[name]; !ok {
				errs = append(errs, fmt.Errorf("%s reads %s, which %s does not declare (sam local passes declared variables only)", fn.dir, name, fn.logicalID))
			}
		}
		for _, name := range sortedKeys(declared) {
			if !want[name] && !slices.Contains(fn.ignores, name) {
				errs = append(errs, fmt.Errorf("%s declares %s, which %s does not read", fn.logicalID, name, fn.dir))
			}
		}
		for _, name := range append(settings.LocalOnlyVariables(), fn.endpoints...) {
			if v, ok := declared[name]; ok && (v.Kind != yaml.ScalarNode || v.Tag == "!Ref" || v.Value != "") {
				errs = append(errs, fmt.Errorf("%s: %s must be declared empty (set by env.json for sam local)", fn.logicalID, name))
			}
		}
	}
	return errs
}

// checkVisibility: each queue's visibility timeout is at least 6 × the
// timeout of the function it feeds plus its batching window (AWS's advice
// for SQS event sources, so retries of a throttled batch do not come back
// while it runs).
func checkVisibility(root *yaml.Node) []error {
	var errs []error
	for _, pair := range [][3]string{
		{"EventsQueue", "ProcessorFunction", "Queue"},
		{"EventsDeadLetterQueue", "CompensatorFunction", "DeadLetters"},
	} {
		queue, fnID, event := pair[0], pair[1], pair[2]
		vis, err := number(root, get(root, "Resources", queue, "Properties", "VisibilityTimeout"))
		if err != nil {
			errs = append(errs, fmt.Errorf("%s.VisibilityTimeout: %w", queue, err))
			continue
		}
		timeout, err := number(root, get(root, "Resources", fnID, "Properties", "Timeout"))
		if err != nil {
			errs = append(errs, fmt.Errorf("%s.Timeout: %w", fnID, err))
			continue
		}
		ev := get(root, "Resources", fnID, "Properties", "Events", event, "Properties")
		if q := get(ev, "Queue"); q == nil || q.Tag != "!GetAtt" || q.Value != queue+".Arn" {
			errs = append(errs, fmt.Errorf("%s's event %s is not on %s", fnID, event, queue))
		}
		window := 0.0
		if w := get(ev, "MaximumBatchingWindowInSeconds"); w != nil {
			if window, err = number(root, w); err != nil {
				errs = append(errs, err)
			}
		}
		if vis < 6*timeout+window {
			errs = append(errs, fmt.Errorf("%s.VisibilityTimeout %g < 6 × %s.Timeout %g + batching window %g",
				queue, vis, fnID, timeout, window))
		}
	}
	return errs
}

// checkReceiveCount: SQS's maxReceiveCount is above the processor's
// attempts, so that the processor dead-letters an event itself (FAILED,
// with its reason) before SQS moves the message; the template's MaxAttempts
// default is the processor's own.
func checkReceiveCount(root *yaml.Node) []error {
	redrive := get(root, "Resources", "EventsQueue", "Properties", "RedrivePolicy")
	if dl := get(redrive, "deadLetterTargetArn"); dl == nil || dl.Tag != "!GetAtt" || dl.Value != "EventsDeadLetterQueue.Arn" {
		return []error{errors.New("EventsQueue's RedrivePolicy does not target EventsDeadLetterQueue")}
	}
	mrc, err := number(root, get(redrive, "maxReceiveCount"))
	if err != nil {
		return []error{fmt.Errorf("maxReceiveCount: %w", err)}
	}
	attempts, err := number(root, get(root, "Resources", "ProcessorFunction", "Properties", "Environment", "Variables", "HOOKWALL_MAX_ATTEMPTS"))
	if err != nil {
		return []error{fmt.Errorf("HOOKWALL_MAX_ATTEMPTS: %w", err)}
	}
	var errs []error
	if def := dispatch.DefaultMaxAttempts; attempts != float64(def) {
		errs = append(errs, fmt.Errorf("HOOKWALL_MAX_ATTEMPTS defaults to %g in the template, %d in the processor", attempts, def))
	}
	if mrc <= attempts || mrc <= float64(dispatch.DefaultMaxAttempts) {
		errs = append(errs, fmt.Errorf("maxReceiveCount %g is not above the processor's attempts %g", mrc, attempts))
	}
	return errs
}

// checkRetention: the DLQ keeps a message longer than the main queue (SQS
// keeps the original enqueue time when it moves a message).
func checkRetention(root *yaml.Node) []error {
	q, err1 := number(root, get(root, "Resources", "EventsQueue", "Properties", "MessageRetentionPeriod"))
	dlq, err2 := number(root, get(root, "Resources", "EventsDeadLetterQueue", "Properties", "MessageRetentionPeriod"))
	if err := errors.Join(err1, err2); err != nil {
		return []error{fmt.Errorf("MessageRetentionPeriod: %w", err)}
	}
	if dlq <= q {
		return []error{fmt.Errorf("the DLQ keeps messages %.0fs, not longer than the main queue's %.0fs", dlq, q)}
	}
	return nil
}

// checkTTL: the table's TTL attribute is the one the store writes.
func checkTTL(root *yaml.Node) []error {
	ttl := get(root, "Resources", "EventsTable", "Properties", "TimeToLiveSpecification")
	if a := get(ttl, "AttributeName"); a == nil || a.Value != store.AttrExpiresAt {
		return []error{fmt.Errorf("EventsTable's TTL attribute is not %q (store.AttrExpiresAt)", store.AttrExpiresAt)}
	}
	if e := get(ttl, "Enabled"); e == nil || e.Value != "true" {
		return []error{errors.New("EventsTable's TTL is not enabled")}
	}
	return nil
}

// checkRetain: the table and queues survive a stack deletion or replacement.
func checkRetain(root *yaml.Node) []error {
	var errs []error
	for _, id := range []string{"EventsTable", "EventsQueue", "EventsDeadLetterQueue"} {
		for _, p := range []string{"DeletionPolicy", "UpdateReplacePolicy"} {
			if v := get(root, "Resources", id, p); v == nil || v.Value != "Retain" {
				errs = append(errs, fmt.Errorf("%s: %s is not Retain", id, p))
			}
		}
	}
	return errs
}

// samPolicyTemplates are the SAM policy templates the functions may use:
// each scoped to the one resource it names.
var samPolicyTemplates = map[string]bool{
	"SQSSendMessagePolicy": true, "SQSPollerPolicy": true, "EventBridgePutEventsPolicy": true,
	"AWSSecretsManagerGetSecretValuePolicy": true,
}

// checkPolicies: the project's own policies name their resources: no "*"
// (or wildcard ARN) in a Resource or Action, and no managed policy or policy
// template other than the scoped ones above.
func checkPolicies(root *yaml.Node) []error {
	var errs []error
	res := get(root, "Resources")
	for _, id := range keys(res) {
		var statements []*yaml.Node
		switch get(res, id, "Type").Value {
		case "AWS::Serverless::Function":
			pols := get(res, id, "Properties", "Policies")
			if pols == nil {
				continue
			}
			for _, p := range expandIf(pols.Content) {
				switch {
				case p.Kind == yaml.ScalarNode:
					errs = append(errs, fmt.Errorf("%s: managed policy %s (name the resources in a Statement instead)", id, p.Value))
				case get(p, "Statement") != nil:
					statements = append(statements, get(p, "Statement").Content...)
				default:
					for _, name := range keys(p) {
						if !samPolicyTemplates[name] {
							errs = append(errs, fmt.Errorf("%s: SAM policy template %s is not one of the scoped ones", id, name))
						}
					}
				}
			}
		case "AWS::IAM::Policy", "AWS::IAM::ManagedPolicy":
			statements = get(res, id, "Properties", "PolicyDocument", "Statement").Content
		case "AWS::IAM::Role":
			if pols := get(res, id, "Properties", "Policies"); pols != nil {
				for _, p := range pols.Content {
					statements = append(statements, expandIf(get(p, "PolicyDocument", "Statement").Content)...)
				}
			}
			if m := get(res, id, "Properties", "ManagedPolicyArns"); m != nil {
				errs = append(errs, fmt.Errorf("%s: managed policies (name the resources in a Statement instead)", id))
			}
		}
		for i, st := range statements {
			for _, field := range []string{"Resource", "Action"} {
				for _, v := range list(get(st, field)) {
					if field == "Resource" && v.Value == "*" && onlyActions(st, noResourceLevel) {
						continue // the service has no resource-level permissions
					}
					if v.Kind == yaml.ScalarNode && strings.Contains(v.Value, "*") {
						errs = append(errs, fmt.Errorf("%s: statement %d has the wildcard %s %q", id, i, field, v.Value))
					}
				}
				if get(st, field) == nil {
					errs = append(errs, fmt.Errorf("%s: statement %d has no %s", id, i, field))
				}
			}
		}
	}
	return errs
}

// roleStatements returns the statement list of role id's first policy.
func roleStatements(root *yaml.Node, id string) *yaml.Node {
	return get(get(root, "Resources", id, "Properties", "Policies").Content[0], "PolicyDocument", "Statement")
}

// noResourceLevel are the actions a role may grant on Resource "*": their
// service has no resource-level permissions (X-Ray: the traces of Tracing:
// Active).
var noResourceLevel = []string{"xray:PutTelemetryRecords", "xray:PutTraceSegments"}

// onlyActions reports whether every action of statement st is in allowed.
func onlyActions(st *yaml.Node, allowed []string) bool {
	acts := list(get(st, "Action"))
	for _, a := range acts {
		if !slices.Contains(allowed, a.Value) {
			return false
		}
	}
	return len(acts) > 0
}

// expandIf replaces each !If [condition, a, b] among nodes by its branches
// (but !Ref AWS::NoValue), so that both are checked.
func expandIf(nodes []*yaml.Node) []*yaml.Node {
	var out []*yaml.Node
	for _, n := range nodes {
		if n.Tag == "!If" && n.Kind == yaml.SequenceNode && len(n.Content) == 3 {
			for _, b := range expandIf(n.Content[1:]) {
				if b.Tag != "!Ref" || b.Value != "AWS::NoValue" {
					out = append(out, b)
				}
			}
			continue
		}
		out = append(out, n)
	}
	return out
}

// checkRoutes: the webhook route answers GET (handshakes) and POST, never
// ANY; the events API is GET with IAM authorization.
func checkRoutes(root *yaml.Node) []error {
	var errs []error
	methods := map[string][]string{}
	evs := get(root, "Resources", "ReceiverFunction", "Properties", "Events")
	for _, name := range keys(evs) {
		p := get(evs, name, "Properties")
		path, method := get(p, "Path"), get(p, "Method")
		if path == nil || method == nil {
			errs = append(errs, fmt.Errorf("ReceiverFunction event %s has no Path or Method", name))
			continue
		}
		if strings.EqualFold(method.Value, "ANY") {
			errs = append(errs, fmt.Errorf("ReceiverFunction event %s: %s ANY (GET and POST only)", name, path.Value))
		}
		methods[path.Value] = append(methods[path.Value], strings.ToUpper(method.Value))
		if strings.HasPrefix(path.Value, "/events/") {
			if a := get(p, "Auth", "Authorizer"); a == nil || a.Value != "AWS_IAM" {
				errs = append(errs, fmt.Errorf("ReceiverFunction event %s: %s is not IAM-authorized", name, path.Value))
			}
		}
	}
	for path, want := range map[string][]string{
		"/webhooks/{provider}/{tenant}":     {"GET", "POST"},
		"/events/{provider}/{tenant}/{key}": {"GET"},
	} {
		got := methods[path]
		sort.Strings(got)
		if !slices.Equal(got, want) {
			errs = append(errs, fmt.Errorf("%s: methods %v, want %v", path, got, want))
		}
	}
	return errs
}

// checkLogGroups: each function logs JSON to its own log group, which has a
// retention.
func checkLogGroups(root *yaml.Node) []error {
	var errs []error
	for _, fn := range allFunctions {
		lc := get(root, "Resources", fn.logicalID, "Properties", "LoggingConfig")
		g := get(lc, "LogGroup")
		if g == nil || g.Tag != "!Ref" {
			errs = append(errs, fmt.Errorf("%s: LoggingConfig.LogGroup is not !Ref a log group of the stack", fn.logicalID))
			continue
		}
		if f := get(lc, "LogFormat"); f == nil || f.Value != "JSON" {
			errs = append(errs, fmt.Errorf("%s: LoggingConfig.LogFormat is not JSON", fn.logicalID))
		}
		if t := get(root, "Resources", g.Value, "Type"); t == nil || t.Value != "AWS::Logs::LogGroup" {
			errs = append(errs, fmt.Errorf("%s: %s is not an AWS::Logs::LogGroup", fn.logicalID, g.Value))
		} else if get(root, "Resources", g.Value, "Properties", "RetentionInDays") == nil {
			errs = append(errs, fmt.Errorf("%s has no RetentionInDays", g.Value))
		}
	}
	return errs
}

// checkAlarms: every alarm is there and notifies AlarmTopicArn when it is set.
func checkAlarms(root *yaml.Node) []error {
	var errs []error
	res := get(root, "Resources")
	for _, id := range wantAlarms {
		if t := get(res, id, "Type"); t == nil || t.Value != "AWS::CloudWatch::Alarm" {
			errs = append(errs, fmt.Errorf("alarm %s is missing", id))
			continue
		}
		for _, field := range []string{"AlarmActions", "OKActions"} {
			a := get(res, id, "Properties", field)
			if a == nil || a.Tag != "!If" || len(a.Content) != 3 || a.Content[0].Value != "HasAlarmTopic" {
				errs = append(errs, fmt.Errorf("alarm %s: %s is not !If [HasAlarmTopic, [!Ref AlarmTopicArn], !Ref AWS::NoValue]", id, field))
			}
		}
	}
	if get(root, "Conditions", "HasAlarmTopic") == nil || get(root, "Parameters", "AlarmTopicArn") == nil {
		errs = append(errs, errors.New("no AlarmTopicArn parameter or HasAlarmTopic condition"))
	}
	return errs
}

func checkOutputs(root *yaml.Node) []error {
	var errs []error
	for _, id := range wantOutputs {
		if get(root, "Outputs", id, "Value") == nil {
			errs = append(errs, fmt.Errorf("output %s is missing", id))
		}
	}
	for _, p := range []string{"line", "wecom", "wechat", "standard"} {
		id := strings.ToUpper(p[:1]) + p[1:] + "WebhookUrl"
		if v := get(root, "Outputs", id, "Value"); v != nil && !strings.HasSuffix(v.Value, "/webhooks/"+p+"/{tenant}") {
			errs = append(errs, fmt.Errorf("output %s is %q, want …/webhooks/%s/{tenant}", id, v.Value, p))
		}
	}
	return errs
}

// checkParameters: string parameters are constrained (AllowedPattern or
// AllowedValues: durations, ARNs, counts), numbers bounded, and every
// default satisfies its own constraint.
func checkParameters(root *yaml.Node) []error {
	var errs []error
	params := get(root, "Parameters")
	for _, name := range keys(params) {
		p := get(params, name)
		typ := get(p, "Type")
		def := get(p, "Default")
		switch {
		case typ == nil:
			errs = append(errs, fmt.Errorf("parameter %s has no Type", name))
		case typ.Value == "String":
			pat, vals := get(p, "AllowedPattern"), get(p, "AllowedValues")
			switch {
			case pat == nil && vals == nil:
				errs = append(errs, fmt.Errorf("parameter %s has neither AllowedPattern nor AllowedValues", name))
			case pat != nil:
				re, err := regexp.Compile(pat.Value)
				if err != nil {
					errs = append(errs, fmt.Errorf("parameter %s: AllowedPattern: %w", name, err))
				} else if def != nil && !re.MatchString(def.Value) {
					errs = append(errs, fmt.Errorf("parameter %s: Default %q does not match its AllowedPattern", name, def.Value))
				}
			}
		case typ.Value == "Number":
			if get(p, "AllowedValues") != nil {
				continue
			}
			lo, hi := get(p, "MinValue"), get(p, "MaxValue")
			if lo == nil || hi == nil {
				errs = append(errs, fmt.Errorf("parameter %s has no MinValue and MaxValue", name))
				continue
			}
			if def != nil {
				d, _ := strconv.ParseFloat(def.Value, 64)
				l, _ := strconv.ParseFloat(lo.Value, 64)
				h, _ := strconv.ParseFloat(hi.Value, 64)
				if d < l || d > h {
					errs = append(errs, fmt.Errorf("parameter %s: Default %g outside [%g, %g]", name, d, l, h))
				}
			}
		}
	}
	// Durations are Go durations: the pattern must accept what Go parses
	// and refuse what it does not.
	for _, name := range []string{"DedupWindow", "RetryBase", "RetryCap", "Retention", "SweepStuckAfter", "SweepLag", "ReceiveBudget"} {
		pat := get(params, name, "AllowedPattern")
		if pat == nil {
			continue // reported above
		}
		re := regexp.MustCompile(pat.Value)
		for _, ok := range []string{"", "60s", "1h30m", "168h", "1.5s"} {
			if !re.MatchString(ok) {
				errs = append(errs, fmt.Errorf("parameter %s refuses the Go duration %q", name, ok))
			}
		}
		for _, bad := range []string{"60", "1 h", "7d", "abc"} {
			if re.MatchString(bad) {
				errs = append(errs, fmt.Errorf("parameter %s accepts %q, which is no Go duration", name, bad))
			}
		}
	}
	return errs
}

func functionByID(id string) (function, bool) {
	for _, fn := range allFunctions {
		if fn.logicalID == id {
			return fn, true
		}
	}
	return function{}, false
}

// parse reads template.yaml into its root mapping.
func parse(t *testing.T) *yaml.Node {
	t.Helper()
	b, err := os.ReadFile(templatePath)
	if err != nil {
		t.Fatal(err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		t.Fatalf("%s: %v", templatePath, err)
	}
	if len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		t.Fatalf("%s: not one mapping", templatePath)
	}
	return doc.Content[0]
}

// number is a numeric scalar, or a !Ref to a parameter's Default.
func number(root, n *yaml.Node) (float64, error) {
	if n == nil {
		return 0, errors.New("missing")
	}
	if n.Tag == "!Ref" {
		def := get(root, "Parameters", n.Value, "Default")
		if def == nil {
			return 0, fmt.Errorf("!Ref %s: no parameter with a Default", n.Value)
		}
		n = def
	}
	if n.Kind != yaml.ScalarNode {
		return 0, fmt.Errorf("not a number (line %d)", n.Line)
	}
	return strconv.ParseFloat(n.Value, 64)
}

// get follows keys through nested mappings; nil if one is missing.
func get(n *yaml.Node, path ...string) *yaml.Node {
	for _, key := range path {
		if n == nil || n.Kind != yaml.MappingNode {
			return nil
		}
		var next *yaml.Node
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == key {
				next = n.Content[i+1]
			}
		}
		n = next
	}
	return n
}

// list is n's items when it is a sequence, else n itself.
func list(n *yaml.Node) []*yaml.Node {
	switch {
	case n == nil:
		return nil
	case n.Kind == yaml.SequenceNode:
		return n.Content
	}
	return []*yaml.Node{n}
}

func keys(n *yaml.Node) []string {
	var ks []string
	if n != nil && n.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(n.Content); i += 2 {
			ks = append(ks, n.Content[i].Value)
		}
	}
	return ks
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

func scalar(v string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Value: v} }

func setKey(m *yaml.Node, key string, v *yaml.Node) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			m.Content[i+1] = v
			return
		}
	}
	m.Content = append(m.Content, scalar(key), v)
}

func deleteKey(t *testing.T, m *yaml.Node, key string) {
	t.Helper()
	for i := 0; m != nil && i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			m.Content = append(m.Content[:i], m.Content[i+2:]...)
			return
		}
	}
	t.Fatalf("no key %s to delete", key)
}

func renameKey(t *testing.T, m *yaml.Node, from, to string) {
	t.Helper()
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == from {
			m.Content[i].Value = to
			return
		}
	}
	t.Fatalf("no key %s to rename", from)
}

// checkDeployment: each function of the data path publishes its versions
// to the alias live on every change and is deployed by CodeDeploy as the
// DeploymentType parameter says; the pre-traffic hook has no alias and a
// name the role SAM makes for CodeDeploy may invoke (CodeDeployHook_*).
// tools/iamcheck/test_deployment.py checks the translated template.
func checkDeployment(root *yaml.Node) []error {
	var errs []error
	if get(root, "Parameters", "DeploymentType") == nil {
		errs = append(errs, errors.New("no DeploymentType parameter"))
	}
	for _, fn := range functions {
		props := get(root, "Resources", fn.logicalID, "Properties")
		if a := get(props, "AutoPublishAlias"); a == nil || a.Value != "live" {
			errs = append(errs, fmt.Errorf("%s: AutoPublishAlias is not live", fn.logicalID))
		}
		if a := get(props, "AutoPublishAliasAllProperties"); a == nil || a.Value != "true" {
			errs = append(errs, fmt.Errorf("%s: AutoPublishAliasAllProperties is not true (a change of a property but the code would not be deployed)", fn.logicalID))
		}
		if ty := get(props, "DeploymentPreference", "Type"); ty == nil || ty.Tag != "!Ref" || ty.Value != "DeploymentType" {
			errs = append(errs, fmt.Errorf("%s: DeploymentPreference.Type is not !Ref DeploymentType", fn.logicalID))
		}
	}
	props := get(root, "Resources", hook.logicalID, "Properties")
	if get(props, "AutoPublishAlias") != nil || get(props, "DeploymentPreference") != nil {
		errs = append(errs, fmt.Errorf("%s: the hook has an alias or a deployment of its own", hook.logicalID))
	}
	if n := get(props, "FunctionName"); n == nil || !strings.HasPrefix(n.Value, "CodeDeployHook_") {
		errs = append(errs, fmt.Errorf("%s: FunctionName does not start with CodeDeployHook_", hook.logicalID))
	}
	return errs
}
