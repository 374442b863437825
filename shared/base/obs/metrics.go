package obs

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"sync"
	"time"
)

// Metrics writes CloudWatch Embedded Metric Format records, which CloudWatch
// Logs turns into metrics: one JSON line per Flush (more only where EMF's
// limits demand, see [Metrics.Flush]). It is safe for concurrent use.
type Metrics struct {
	mu        sync.Mutex
	w         io.Writer
	namespace string
	dims      map[string]string
	dimKeys   []string // dims' keys, sorted
	counts    map[string]float64
	millis    map[string][]float64
	now       func() time.Time
}

// maxDimensions is the most dimension keys one EMF DimensionSet may hold.
const maxDimensions = 30

// NewMetrics returns a Metrics writing to w in namespace with the given
// dimensions (for example {"Function": "receiver"}), every metric carrying
// all of them. An empty namespace or more than 30 dimensions, which EMF does
// not allow, panics (a start-up error).
func NewMetrics(w io.Writer, namespace string, dims map[string]string) *Metrics {
	if namespace == "" || len(dims) > maxDimensions {
		panic(fmt.Sprintf("obs: NewMetrics: namespace %q with %d dimensions; want a namespace and at most %d", namespace, len(dims), maxDimensions))
	}
	keys := slices.Sorted(maps.Keys(dims))
	if keys == nil {
		keys = []string{} // an empty DimensionSet, not null
	}
	return &Metrics{
		w: w, namespace: namespace, dims: maps.Clone(dims), dimKeys: keys,
		counts: map[string]float64{}, millis: map[string][]float64{}, now: time.Now,
	}
}

// Count adds n to the counter name (a PascalCase metric name, not one of
// the dimensions' keys).
func (m *Metrics) Count(name string, n int) {
	if m == nil {
		return
	}
	m.mu.Lock()
	m.counts[name] += float64(n)
	m.mu.Unlock()
}

// Duration records one latency sample of name, in milliseconds.
func (m *Metrics) Duration(name string, d time.Duration) {
	if m == nil {
		return
	}
	m.mu.Lock()
	m.millis[name] = append(m.millis[name], float64(d.Microseconds())/1000)
	m.mu.Unlock()
}

// Counts returns a copy of the counters not yet flushed (for tests).
func (m *Metrics) Counts() map[string]float64 {
	if m == nil {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return maps.Clone(m.counts)
}

// Limits of one EMF document (the CloudWatch embedded metric format
// specification, https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/CloudWatch_Embedded_Metric_Format_Specification.html).
const (
	// maxMetrics is the most MetricDefinitions one MetricDirective may hold.
	maxMetrics = 100
	// maxValues is the most values one metric's array may hold.
	maxValues = 100
)

// Units of the metrics Metrics writes (EMF MetricDefinition.Unit).
const (
	unitCount        = "Count"
	unitMilliseconds = "Milliseconds"
	unitNone         = "None"
)

// part is one metric's value(s) in one document.
type part struct {
	name  string
	unit  string
	value any // float64 for a counter, []float64 for samples
}

// Flush writes what was recorded since the last Flush and resets it. It
// writes nothing when nothing was recorded. What was recorded normally makes
// one EMF document (one JSON line, in a single Write); it takes more only
// where the format's limits demand: at most 100 metrics per document and
// 100 samples per metric (the samples of a metric beyond 100 go to further
// documents, never twice in one). A metric named like a dimension or "_aws"
// cannot be a root member of the document and is dropped.
func (m *Metrics) Flush() error {
	if m == nil {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.counts) == 0 && len(m.millis) == 0 {
		return nil
	}
	var parts []part
	for _, name := range slices.Sorted(maps.Keys(m.counts)) {
		parts = append(parts, part{name, unitCount, m.counts[name]})
	}
	for _, name := range slices.Sorted(maps.Keys(m.millis)) {
		for chunk := range slices.Chunk(m.millis[name], maxValues) {
			parts = append(parts, part{name, unitMilliseconds, chunk})
		}
	}
	clear(m.counts)
	clear(m.millis)
	ts := m.now().UnixMilli()
	for _, doc := range m.pack(parts) {
		b, err := json.Marshal(m.document(ts, doc))
		if err != nil {
			return fmt.Errorf("obs: encode metrics: %w", err)
		}
		if _, err := m.w.Write(append(b, '\n')); err != nil {
			return fmt.Errorf("obs: write metrics: %w", err)
		}
	}
	return nil
}

// pack groups parts into documents, in order: each part goes to the first
// document with room that does not hold its name yet. Parts whose name a
// dimension (or _aws) takes are left out.
func (m *Metrics) pack(parts []part) [][]part {
	var docs [][]part
	var names []map[string]bool
next:
	for _, p := range parts {
		if _, isDim := m.dims[p.name]; isDim || p.name == "_aws" {
			continue
		}
		for i := range docs {
			if len(docs[i]) < maxMetrics && !names[i][p.name] {
				docs[i] = append(docs[i], p)
				names[i][p.name] = true
				continue next
			}
		}
		docs = append(docs, []part{p})
		names = append(names, map[string]bool{p.name: true})
	}
	return docs
}

// document is the EMF root node holding parts, the dimensions and the
// metadata (_aws) that declares them.
func (m *Metrics) document(ts int64, parts []part) map[string]any {
	type metricDef struct {
		Name string `json:"Name"`
		Unit string `json:"Unit"`
	}
	rec := make(map[string]any, len(parts)+len(m.dims)+1)
	defs := make([]metricDef, 0, len(parts))
	for _, p := range parts {
		defs = append(defs, metricDef{p.name, p.unit})
		rec[p.name] = p.value
	}
	for k, v := range m.dims {
		rec[k] = v
	}
	rec["_aws"] = map[string]any{
		"Timestamp": ts,
		"CloudWatchMetrics": []any{map[string]any{
			"Namespace":  m.namespace,
			"Dimensions": [][]string{m.dimKeys},
			"Metrics":    defs,
		}},
	}
	return rec
}

// Gauge writes at once one EMF document holding the metric name = value
// (unit None) under the Metrics' dimensions and extra ones (for example
// {"Target": "forward/acme"}; a key of both takes extra's value): for a
// state that changes rarely and is keyed by more than the function, such as
// a circuit breaker's. Like Flush, it writes nothing for a name a
// dimension takes, and one more dimension than 30 is an error.
func (m *Metrics) Gauge(name string, value float64, extra map[string]string) error {
	if m == nil {
		return nil
	}
	dims := maps.Clone(m.dims)
	if dims == nil {
		dims = map[string]string{}
	}
	maps.Copy(dims, extra)
	if _, isDim := dims[name]; isDim || name == "_aws" {
		return nil
	}
	if len(dims) > maxDimensions {
		return fmt.Errorf("obs: gauge %s: %d dimensions, at most %d", name, len(dims), maxDimensions)
	}
	keys := slices.Sorted(maps.Keys(dims))
	if keys == nil {
		keys = []string{}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	doc := &Metrics{namespace: m.namespace, dims: dims, dimKeys: keys}
	rec := doc.document(m.now().UnixMilli(), []part{{name, unitNone, value}})
	b, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("obs: encode gauge %s: %w", name, err)
	}
	if _, err := m.w.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("obs: write gauge %s: %w", name, err)
	}
	return nil
}
