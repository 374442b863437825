package samlocal

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"time"

	"gopkg.in/yaml.v3"
)

// Logical ids of the template's functions.
const (
	Receiver    = "ReceiverFunction"
	Processor   = "ProcessorFunction"
	Compensator = "CompensatorFunction"
)

// Functions lists the template's functions, in the order they are built.
var Functions = []string{Receiver, Processor, Compensator}

// EventSource is what the Lambda SQS event source mapping of a function
// does, as the template declares it.
type EventSource struct {
	// Queue is the logical id of the queue (EventsQueue, EventsDeadLetterQueue).
	Queue string
	// BatchSize is the most messages per invocation.
	BatchSize int32
	// Window is MaximumBatchingWindowInSeconds.
	Window time.Duration
	// Partial says FunctionResponseTypes holds ReportBatchItemFailures.
	Partial bool
}

// Template is what `make sam-local` takes from template.yaml, so that the
// local event sources behave as the deployed ones.
type Template struct {
	// Timeout is each function's Timeout.
	Timeout map[string]time.Duration
	// SQS is each SQS-driven function's event source.
	SQS map[string]EventSource
	// Sweep is the compensator's Schedule event (rate(5 minutes)).
	Sweep time.Duration
	// MaxReceiveCount is the main queue's redrive maxReceiveCount (the
	// MaxReceiveCount parameter's default).
	MaxReceiveCount int
}

// ReadTemplate reads path (template.yaml).
func ReadTemplate(path string) (*Template, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("samlocal: %w", err)
	}
	var root yaml.Node
	if err := yaml.Unmarshal(b, &root); err != nil {
		return nil, fmt.Errorf("samlocal: %s: %w", path, err)
	}
	if len(root.Content) == 0 {
		return nil, fmt.Errorf("samlocal: %s is empty", path)
	}
	doc := root.Content[0]
	t := &Template{Timeout: map[string]time.Duration{}, SQS: map[string]EventSource{}}
	globalTimeout := get(doc, "Globals", "Function", "Timeout")
	for _, fn := range Functions {
		props := get(doc, "Resources", fn, "Properties")
		if props == nil {
			return nil, fmt.Errorf("samlocal: %s has no %s", path, fn)
		}
		to := get(props, "Timeout")
		if to == nil {
			to = globalTimeout
		}
		secs := 3 // Lambda's default
		if to != nil {
			if secs, err = strconv.Atoi(to.Value); err != nil {
				return nil, fmt.Errorf("samlocal: %s Timeout %q: %w", fn, to.Value, err)
			}
		}
		t.Timeout[fn] = time.Duration(secs) * time.Second
		events := get(props, "Events")
		for i := 0; events != nil && i+1 < len(events.Content); i += 2 {
			ev := events.Content[i+1]
			p := get(ev, "Properties")
			switch value(get(ev, "Type")) {
			case "SQS":
				es := EventSource{BatchSize: 10}
				if q := get(p, "Queue"); q != nil {
					// !GetAtt EventsQueue.Arn
					es.Queue = regexp.MustCompile(`\.Arn$`).ReplaceAllString(q.Value, "")
				}
				if v := value(get(p, "BatchSize")); v != "" {
					n, err := strconv.Atoi(v)
					if err != nil {
						return nil, fmt.Errorf("samlocal: %s BatchSize %q: %w", fn, v, err)
					}
					es.BatchSize = int32(n)
				}
				if v := value(get(p, "MaximumBatchingWindowInSeconds")); v != "" {
					n, err := strconv.Atoi(v)
					if err != nil {
						return nil, fmt.Errorf("samlocal: %s MaximumBatchingWindowInSeconds %q: %w", fn, v, err)
					}
					es.Window = time.Duration(n) * time.Second
				}
				if rt := get(p, "FunctionResponseTypes"); rt != nil {
					for _, c := range rt.Content {
						es.Partial = es.Partial || c.Value == "ReportBatchItemFailures"
					}
				}
				t.SQS[fn] = es
			case "Schedule":
				d, err := parseRate(value(get(p, "Schedule")))
				if err != nil {
					return nil, fmt.Errorf("samlocal: %s: %w", fn, err)
				}
				t.Sweep = d
			}
		}
	}
	if v := value(get(doc, "Parameters", "MaxReceiveCount", "Default")); v != "" {
		if t.MaxReceiveCount, err = strconv.Atoi(v); err != nil {
			return nil, fmt.Errorf("samlocal: MaxReceiveCount default %q: %w", v, err)
		}
	}
	for _, fn := range []string{Processor, Compensator} {
		if _, ok := t.SQS[fn]; !ok {
			return nil, fmt.Errorf("samlocal: %s has no SQS event in %s", fn, path)
		}
	}
	if t.Sweep == 0 {
		return nil, fmt.Errorf("samlocal: %s has no Schedule event in %s", Compensator, path)
	}
	return t, nil
}

// parseRate reads an EventBridge rate expression: rate(5 minutes).
func parseRate(s string) (time.Duration, error) {
	m := regexp.MustCompile(`^rate\((\d+) (minute|minutes|hour|hours|day|days)\)$`).FindStringSubmatch(s)
	if m == nil {
		return 0, fmt.Errorf("schedule %q: want rate(N minutes|hours|days)", s)
	}
	n, _ := strconv.Atoi(m[1])
	unit := map[string]time.Duration{"minute": time.Minute, "hour": time.Hour, "day": 24 * time.Hour}
	u := m[2]
	if !slices.Contains([]string{"minute", "hour", "day"}, u) {
		u = u[:len(u)-1]
	}
	return time.Duration(n) * unit[u], nil
}

// get follows mapping keys from n; nil when one is missing.
func get(n *yaml.Node, keys ...string) *yaml.Node {
	for _, k := range keys {
		if n == nil || n.Kind != yaml.MappingNode {
			return nil
		}
		var next *yaml.Node
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == k {
				next = n.Content[i+1]
				break
			}
		}
		n = next
	}
	return n
}

func value(n *yaml.Node) string {
	if n == nil {
		return ""
	}
	return n.Value
}
