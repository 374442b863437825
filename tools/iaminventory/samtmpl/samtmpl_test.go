package samtmpl

import (
	"os"
	"reflect"
	"testing"
)

// TestHookwallTemplate reads the repository's template.yaml.
func TestHookwallTemplate(t *testing.T) {
	data, err := os.ReadFile("../../../template.yaml")
	if err != nil {
		t.Fatal(err)
	}
	tmpl, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]Function{
		"receiver": {LogicalID: "ReceiverFunction", Tracing: "Active", TracingPath: "Globals.Function.Tracing",
			LogGroup: "ReceiverLogGroup", LogGroupPath: "ReceiverFunction.Properties.LoggingConfig.LogGroup"},
		"processor": {LogicalID: "ProcessorFunction", Tracing: "Active", TracingPath: "Globals.Function.Tracing",
			LogGroup: "ProcessorLogGroup", LogGroupPath: "ProcessorFunction.Properties.LoggingConfig.LogGroup",
			SQSEvents: []SQSEvent{{Name: "Queue", Queue: "EventsQueue", Path: "ProcessorFunction.Events.Queue"}}},
		"compensator": {LogicalID: "CompensatorFunction", Tracing: "Active", TracingPath: "Globals.Function.Tracing",
			LogGroup: "CompensatorLogGroup", LogGroupPath: "CompensatorFunction.Properties.LoggingConfig.LogGroup",
			SQSEvents: []SQSEvent{{Name: "DeadLetters", Queue: "EventsDeadLetterQueue", Path: "CompensatorFunction.Events.DeadLetters"}}},
		// The function name up to case: functions/pretraffic is PreTrafficFunction.
		"pretraffic": {LogicalID: "PreTrafficFunction", Tracing: "Active", TracingPath: "Globals.Function.Tracing",
			LogGroup: "PreTrafficLogGroup", LogGroupPath: "PreTrafficFunction.Properties.LoggingConfig.LogGroup"},
	} {
		f, ok := tmpl.FunctionNamed(name)
		if !ok {
			t.Errorf("no function %s", name)
			continue
		}
		if !reflect.DeepEqual(*f, want) {
			t.Errorf("%s: %+v, want %+v", name, *f, want)
		}
	}
	for _, id := range []string{"EventsTable", "EventsQueue", "EventsDeadLetterQueue"} {
		if k := tmpl.Keys[id]; k.Param != "KmsKeyArn" {
			t.Errorf("%s: key %+v, want the parameter KmsKeyArn", id, k)
		}
	}
}

// TestLongForms: the JSON-style intrinsics read as the short tags do.
func TestLongForms(t *testing.T) {
	tmpl, err := Parse([]byte(`{
  "Parameters": {"Key": {"Type": "String"}},
  "Resources": {
    "Q": {"Type": "AWS::SQS::Queue", "Properties": {"KmsMasterKeyId": {"Fn::If": ["Has", {"Ref": "Key"}, {"Ref": "AWS::NoValue"}]}}},
    "L": {"Type": "AWS::Logs::LogGroup"},
    "WorkerFunction": {"Type": "AWS::Serverless::Function", "Properties": {
      "Tracing": "PassThrough",
      "LoggingConfig": {"LogGroup": {"Ref": "L"}},
      "Events": {"E": {"Type": "SQS", "Properties": {"Queue": {"Fn::GetAtt": ["Q", "Arn"]}}}}}}
  }}`))
	if err != nil {
		t.Fatal(err)
	}
	f, _ := tmpl.FunctionNamed("worker")
	if f == nil || f.LogGroup != "L" || f.Tracing != "PassThrough" || len(f.SQSEvents) != 1 || f.SQSEvents[0].Queue != "Q" {
		t.Errorf("function: %+v", f)
	}
	if tmpl.Keys["Q"].Param != "Key" {
		t.Errorf("keys: %+v", tmpl.Keys)
	}
	if _, err := Parse([]byte("Resources:\n  F:\n    Type: AWS::Serverless::Function\n    Properties:\n      LoggingConfig: {LogGroup: /aws/lambda/f}\n")); err == nil {
		t.Error("a log group that is no resource of the template was accepted")
	}
}
