// Package samtmpl reads from a SAM template (template.yaml) the facts that
// decide which AWS calls AWS makes with a Lambda function's role: the
// function's SQS event sources (Lambda's poller receives and deletes with
// the role), its log group (LoggingConfig.LogGroup), whether tracing is
// active, and which resources a customer managed KMS key encrypts.
//
// The template is parsed with gopkg.in/yaml.v3 into raw nodes, so that
// CloudFormation's short-form tags (!Ref, !GetAtt, !If, !Sub, ...) are kept
// as node tags rather than rejected; the long forms ({"Ref": ...},
// {"Fn::GetAtt": ...}, {"Fn::If": ...}) are read too.
package samtmpl

import (
	"fmt"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

// Template is what the inventory needs of a SAM template.
type Template struct {
	// Functions are the AWS::Serverless::Function resources, by logical ID.
	Functions map[string]*Function
	// Keys are the resources encrypted with a key given by a template
	// parameter, by logical ID.
	Keys map[string]KeyUse
	// Types are every resource's Type, by logical ID.
	Types map[string]string
}

// Function is one AWS::Serverless::Function.
type Function struct {
	// LogicalID is its logical ID ("ProcessorFunction").
	LogicalID string
	// Tracing is its Tracing mode, from its properties or the Globals
	// ("Active"); TracingPath says where it is set.
	Tracing, TracingPath string
	// LogGroup is the logical ID of its LoggingConfig.LogGroup ("" when
	// not set); LogGroupPath says where.
	LogGroup, LogGroupPath string
	// SQSEvents are its event sources of Type SQS, by event name.
	SQSEvents []SQSEvent
}

// SQSEvent is an event source of Type SQS.
type SQSEvent struct {
	// Name is the event's name ("Queue"), Queue the logical ID of its queue.
	Name, Queue string
	// Path is where it is declared ("ProcessorFunction.Events.Queue").
	Path string
}

// KeyUse is a resource's encryption with a key that a template parameter
// names.
type KeyUse struct {
	// Param is the parameter ("KmsKeyArn"); Path the property that uses it
	// ("EventsQueue.Properties.KmsMasterKeyId").
	Param, Path string
}

// keyProperties are the properties of a resource type that name its
// customer managed key.
var keyProperties = map[string][]string{
	"AWS::SQS::Queue":      {"KmsMasterKeyId"},
	"AWS::DynamoDB::Table": {"SSESpecification", "KMSMasterKeyId"},
	"AWS::Logs::LogGroup":  {"KmsKeyId"},
}

// Parse reads a SAM template.
func Parse(data []byte) (*Template, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("template: %w", err)
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, fmt.Errorf("template: not a mapping")
	}
	root := doc.Content[0]
	params := map[string]bool{}
	for _, kv := range pairs(get(root, "Parameters")) {
		params[kv[0].Value] = true
	}
	globals := get(root, "Globals", "Function")
	t := &Template{Functions: map[string]*Function{}, Keys: map[string]KeyUse{}, Types: map[string]string{}}
	for _, kv := range pairs(get(root, "Resources")) {
		id, res := kv[0].Value, kv[1]
		typ := scalar(get(res, "Type"))
		t.Types[id] = typ
		props := get(res, "Properties")
		if path, ok := keyProperties[typ]; ok {
			if param, ok := paramOf(get(props, path...), params); ok {
				t.Keys[id] = KeyUse{Param: param, Path: id + ".Properties." + strings.Join(path, ".")}
			}
		}
		if typ != "AWS::Serverless::Function" {
			continue
		}
		f := &Function{LogicalID: id}
		if v := scalar(get(props, "Tracing")); v != "" {
			f.Tracing, f.TracingPath = v, id+".Properties.Tracing"
		} else if v := scalar(get(globals, "Tracing")); v != "" {
			f.Tracing, f.TracingPath = v, "Globals.Function.Tracing"
		}
		if lg := get(props, "LoggingConfig", "LogGroup"); lg != nil {
			name, ok := logicalRef(lg)
			if !ok {
				return nil, fmt.Errorf("template: %s.Properties.LoggingConfig.LogGroup is not a !Ref of a resource", id)
			}
			f.LogGroup, f.LogGroupPath = name, id+".Properties.LoggingConfig.LogGroup"
		}
		for _, ev := range pairs(get(props, "Events")) {
			if scalar(get(ev[1], "Type")) != "SQS" {
				continue
			}
			path := id + ".Events." + ev[0].Value
			q, ok := logicalRef(get(ev[1], "Properties", "Queue"))
			if !ok {
				return nil, fmt.Errorf("template: %s.Properties.Queue is not a !GetAtt of a queue", path)
			}
			f.SQSEvents = append(f.SQSEvents, SQSEvent{Name: ev[0].Value, Queue: q, Path: path})
		}
		sort.Slice(f.SQSEvents, func(i, j int) bool { return f.SQSEvents[i].Name < f.SQSEvents[j].Name })
		t.Functions[id] = f
	}
	for id, f := range t.Functions {
		if f.LogGroup != "" && t.Types[f.LogGroup] != "AWS::Logs::LogGroup" {
			return nil, fmt.Errorf("template: %s's LogGroup %s is not an AWS::Logs::LogGroup of the template", id, f.LogGroup)
		}
		for _, ev := range f.SQSEvents {
			if t.Types[ev.Queue] != "AWS::SQS::Queue" {
				return nil, fmt.Errorf("template: %s's queue %s is not an AWS::SQS::Queue of the template", ev.Path, ev.Queue)
			}
		}
	}
	return t, nil
}

// FunctionNamed returns the function whose logical ID is name with its
// first letter upper-cased and "Function" appended ("processor":
// ProcessorFunction), or else the one logical ID that is so up to case
// ("pretraffic": PreTrafficFunction).
func (t *Template) FunctionNamed(name string) (*Function, bool) {
	if name == "" {
		return nil, false
	}
	if f, ok := t.Functions[strings.ToUpper(name[:1])+name[1:]+"Function"]; ok {
		return f, true
	}
	var found *Function
	for id, f := range t.Functions {
		if strings.EqualFold(id, name+"Function") {
			if found != nil {
				return nil, false // ambiguous
			}
			found = f
		}
	}
	return found, found != nil
}

// get walks a mapping node down keys (nil when absent).
func get(n *yaml.Node, keys ...string) *yaml.Node {
	for _, k := range keys {
		if n == nil || n.Kind != yaml.MappingNode {
			return nil
		}
		var next *yaml.Node
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == k {
				next = n.Content[i+1]
			}
		}
		n = next
	}
	return n
}

// pairs returns the key/value pairs of a mapping node.
func pairs(n *yaml.Node) [][2]*yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	var out [][2]*yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		out = append(out, [2]*yaml.Node{n.Content[i], n.Content[i+1]})
	}
	return out
}

// scalar returns the value of a plain scalar node ("" otherwise).
func scalar(n *yaml.Node) string {
	if n == nil || n.Kind != yaml.ScalarNode || strings.HasPrefix(n.Tag, "!") && n.Tag != "!!str" {
		return ""
	}
	return n.Value
}

// intrinsic returns the name and argument of an intrinsic function node:
// a short form (!Ref X) or a long form ({"Ref": X}, {"Fn::GetAtt": ...}).
func intrinsic(n *yaml.Node) (name string, arg *yaml.Node) {
	if n == nil {
		return "", nil
	}
	if strings.HasPrefix(n.Tag, "!") && !strings.HasPrefix(n.Tag, "!!") {
		name = strings.TrimPrefix(n.Tag, "!")
		if name != "Ref" && name != "Condition" {
			name = "Fn::" + name
		}
		return name, n
	}
	if n.Kind == yaml.MappingNode && len(n.Content) == 2 {
		k := n.Content[0].Value
		if k == "Ref" || strings.HasPrefix(k, "Fn::") {
			return k, n.Content[1]
		}
	}
	return "", nil
}

// logicalRef returns the logical ID a !Ref X or !GetAtt X.Attr names.
func logicalRef(n *yaml.Node) (string, bool) {
	name, arg := intrinsic(n)
	switch name {
	case "Ref":
		return arg.Value, arg.Kind == yaml.ScalarNode && arg.Value != ""
	case "Fn::GetAtt":
		if arg.Kind == yaml.ScalarNode {
			id, _, ok := strings.Cut(arg.Value, ".")
			return id, ok && id != ""
		}
		if arg.Kind == yaml.SequenceNode && len(arg.Content) == 2 {
			return arg.Content[0].Value, arg.Content[0].Value != ""
		}
	}
	return "", false
}

// paramOf returns the template parameter a key property names: !Ref P, or
// !If [Cond, !Ref P, !Ref AWS::NoValue] (the key only when P is set).
func paramOf(n *yaml.Node, params map[string]bool) (string, bool) {
	name, arg := intrinsic(n)
	switch name {
	case "Ref":
		return arg.Value, params[arg.Value]
	case "Fn::If":
		if arg.Kind != yaml.SequenceNode || len(arg.Content) != 3 {
			return "", false
		}
		for _, branch := range arg.Content[1:] {
			if p, ok := paramOf(branch, params); ok {
				return p, true
			}
		}
	}
	return "", false
}
