package awsconf

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"

	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/smithy-go/middleware"
)

// The runtime records (iam/README.md, `make iam-runtime`): a dynamic check
// of the static IAM inventory. When the environment variable RecordEnv
// names a directory, [Load] adds to the configuration a middleware that
// notes every (function, operation, resource) the clients built from it
// call, each distinct one once per process, as one JSON line ([Record])
// appended to <dir>/<function>-<pid>.jsonl. RecordEnv=log writes each as a
// line on standard error instead, RecordLogPrefix and the JSON, for
// processes whose files nobody can collect (Lambda containers under sam
// local: their output is). With RecordEnv unset, Load adds nothing.

// RecordEnv is the environment variable that turns the runtime records on.
const RecordEnv = "HOOKWALL_IAM_RECORD"

// RecordLog is the value of RecordEnv that writes the records to standard
// error, each line RecordLogPrefix followed by the record's JSON.
const RecordLog = "log"

// RecordLogPrefix starts a record's line in RecordLog mode.
const RecordLogPrefix = "HOOKWALL_IAM_RECORD "

// The logical resource names of iam/README.md that the platform's wiring
// gives its resources in a [Recorder]'s Names.
const (
	EventsTable           = "EventsTable"
	EventsQueue           = "EventsQueue"
	EventsDeadLetterQueue = "EventsDeadLetterQueue"
	OutcomesBus           = "OutcomesBus"
	TenantsSecret         = "TenantsSecret"
)

// Recorder says whose calls the records are and what the resources are
// called: the wiring of each function fills it in from its configuration.
type Recorder struct {
	// Function is the Lambda function the clients belong to ("receiver",
	// "processor", "compensator"). Empty: the clients are not a function's
	// (a test's or a tool's) and are never recorded.
	Function string
	// Names maps each physical name the function is configured with (a
	// table name, a queue URL, a bus name, a secret ARN) to its logical
	// name (EventsTable, …, or a team's template parameter such as
	// ApprovalsTable). Empty keys are ignored. A DynamoDB index is recorded
	// as <logical table>/index/<index>; a name not here as
	// "unknown:<physical>"; a call that names no resource as "*".
	Names map[string]string
}

// Record is one line of a runtime record.
type Record struct {
	Function  string `json:"function"`
	Operation string `json:"operation"` // IAM service prefix ":" SDK operation ("dynamodb:Query")
	Resource  string `json:"resource"`  // logical name, "unknown:<physical>" or "*"
}

// RecordTo returns where the records go: RecordEnv's value ("" : off).
func RecordTo() string { return os.Getenv(RecordEnv) }

// ParseRecordLine returns the record a RecordLog line carries (anywhere in
// line, which may have a prefix of its own such as a container's name).
func ParseRecordLine(line string) (Record, bool) {
	_, js, ok := strings.Cut(line, RecordLogPrefix)
	if !ok {
		return Record{}, false
	}
	var r Record
	if json.Unmarshal([]byte(strings.TrimSpace(js)), &r) != nil || r.Function == "" || r.Operation == "" || r.Resource == "" {
		return Record{}, false
	}
	return r, true
}

// WriteRecord writes r under to (a directory, or RecordLog) as the
// process's clients do, unless the process wrote it already: for a harness
// that collects the records of RecordLog processes (dev/cmd/hookwall-sam).
func WriteRecord(to string, r Record) error {
	sink, err := sinkFor(to, r.Function)
	if err != nil {
		return err
	}
	return sink.add(r)
}

// iamPrefix maps the SDK's service ids to the IAM service prefixes.
var iamPrefix = map[string]string{
	"DynamoDB":        "dynamodb",
	"SQS":             "sqs",
	"EventBridge":     "events",
	"Secrets Manager": "secretsmanager",
}

// install returns the APIOptions function adding rec's middleware, which
// writes to sink.
func (rec Recorder) install(sink *recordSink) func(*middleware.Stack) error {
	names := make(map[string]string, len(rec.Names))
	for physical, logical := range rec.Names {
		if physical != "" {
			names[physical] = logical
		}
	}
	m := middleware.InitializeMiddlewareFunc("HookwallIAMRecord", func(ctx context.Context, in middleware.InitializeInput,
		next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
		service := awsmiddleware.GetServiceID(ctx)
		prefix, ok := iamPrefix[service]
		if !ok {
			prefix = strings.ToLower(strings.ReplaceAll(service, " ", ""))
		}
		op := prefix + ":" + awsmiddleware.GetOperationName(ctx)
		for _, res := range resources(in.Parameters) {
			if err := sink.add(Record{Function: rec.Function, Operation: op, Resource: logical(names, res)}); err != nil {
				return middleware.InitializeOutput{}, middleware.Metadata{}, err
			}
		}
		return next.HandleInitialize(ctx, in)
	})
	return func(s *middleware.Stack) error { return s.Initialize.Add(m, middleware.After) }
}

// resource is a physical resource a call names: a table (and index), a
// queue URL, a bus, a secret.
type resource struct{ name, index string }

// logical is res's logical name.
func logical(names map[string]string, res resource) string {
	if res.name == "*" {
		return "*"
	}
	name, ok := names[res.name]
	if !ok {
		name = "unknown:" + res.name
	}
	if res.index != "" {
		name += "/index/" + res.index
	}
	return name
}

// resources returns what the input of a call names: every table of a
// batch or a transaction, every bus of a PutEvents, else the input's
// TableName (with IndexName), QueueUrl, EventBusName, SecretId or
// FunctionName (Lambda's Invoke); "*" when it names none.
func resources(input any) []resource {
	var out []resource
	add := func(name *string) {
		if name != nil {
			out = append(out, resource{name: *name})
		}
	}
	switch in := input.(type) {
	case *dynamodb.BatchGetItemInput:
		for t := range in.RequestItems {
			out = append(out, resource{name: t})
		}
	case *dynamodb.BatchWriteItemInput:
		for t := range in.RequestItems {
			out = append(out, resource{name: t})
		}
	case *dynamodb.TransactWriteItemsInput:
		for _, it := range in.TransactItems {
			switch {
			case it.ConditionCheck != nil:
				add(it.ConditionCheck.TableName)
			case it.Put != nil:
				add(it.Put.TableName)
			case it.Delete != nil:
				add(it.Delete.TableName)
			case it.Update != nil:
				add(it.Update.TableName)
			}
		}
	case *dynamodb.TransactGetItemsInput:
		for _, it := range in.TransactItems {
			if it.Get != nil {
				add(it.Get.TableName)
			}
		}
	default: // by reflection, so that no service's package is linked in for this
		v := reflect.ValueOf(input)
		if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
			break
		}
		for _, name := range []string{"TableName", "QueueUrl", "EventBusName", "SecretId", "FunctionName"} {
			if s := stringField(v.Elem(), name); s != "" {
				out = append(out, resource{name: s, index: stringField(v.Elem(), "IndexName")})
				break
			}
		}
		// EventBridge's PutEvents: a bus per entry, the account's default
		// one when it names none.
		if entries := v.Elem().FieldByName("Entries"); len(out) == 0 && entries.Kind() == reflect.Slice {
			for i := range entries.Len() {
				e := entries.Index(i)
				if e.Kind() != reflect.Struct || !e.FieldByName("EventBusName").IsValid() {
					continue
				}
				bus := stringField(e, "EventBusName")
				if bus == "" {
					bus = "default"
				}
				out = append(out, resource{name: bus})
			}
		}
	}
	if len(out) == 0 {
		return []resource{{name: "*"}}
	}
	return out
}

// stringField returns the *string field name of the struct v ("" : none).
func stringField(v reflect.Value, name string) string {
	f := v.FieldByName(name)
	if f.IsValid() && f.Kind() == reflect.Pointer && !f.IsNil() && f.Elem().Kind() == reflect.String {
		return f.Elem().String()
	}
	return ""
}

// recordSink writes one function's records of this process, each distinct
// one once.
type recordSink struct {
	path string // the file; "" : standard error (RecordLog)
	mu   sync.Mutex
	seen map[Record]bool
}

// sinks are the process's sinks by destination, so that every
// configuration of one function shares its file and its set of records.
var (
	sinksMu sync.Mutex
	sinks   = map[string]*recordSink{}
)

// sinkFor returns the sink of function's records under to (a directory,
// created if need be, or RecordLog).
func sinkFor(to, function string) (*recordSink, error) {
	path := ""
	if to != RecordLog {
		if err := os.MkdirAll(to, 0o755); err != nil {
			return nil, fmt.Errorf("%s: %w", RecordEnv, err)
		}
		path = filepath.Join(to, fmt.Sprintf("%s-%d.jsonl", function, os.Getpid()))
	}
	sinksMu.Lock()
	defer sinksMu.Unlock()
	key := to + "\x00" + function
	s := sinks[key]
	if s == nil {
		s = &recordSink{path: path, seen: map[Record]bool{}}
		sinks[key] = s
	}
	return s, nil
}

// add writes r unless this sink wrote it already: one write of one line,
// appended (O_APPEND), so that concurrent processes never interleave.
func (s *recordSink) add(r Record) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.seen[r] {
		return nil
	}
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	if s.path == "" {
		_, err = os.Stderr.Write(append([]byte(RecordLogPrefix), append(b, '\n')...))
	} else {
		var f *os.File
		if f, err = os.OpenFile(s.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644); err == nil {
			_, err = f.Write(append(b, '\n'))
			err = errors.Join(err, f.Close())
		}
	}
	if err != nil {
		return fmt.Errorf("%s: record %s %s %s: %w", RecordEnv, r.Function, r.Operation, r.Resource, err)
	}
	s.seen[r] = true
	return nil
}
