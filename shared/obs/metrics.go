package obs

import (
	"encoding/json"
	"io"
	"maps"
	"slices"
	"sync"
	"time"
)

// Metrics writes CloudWatch Embedded Metric Format records: one JSON line per
// Flush, which CloudWatch Logs turns into metrics. It is safe for concurrent use.
type Metrics struct {
	mu        sync.Mutex
	w         io.Writer
	namespace string
	dims      map[string]string
	counts    map[string]float64
	millis    map[string][]float64
	now       func() time.Time
}

// NewMetrics returns a Metrics writing to w in namespace with the given
// dimensions (for example {"Function": "receiver"}).
func NewMetrics(w io.Writer, namespace string, dims map[string]string) *Metrics {
	return &Metrics{
		w: w, namespace: namespace, dims: maps.Clone(dims),
		counts: map[string]float64{}, millis: map[string][]float64{}, now: time.Now,
	}
}

// Count adds n to the counter name (a PascalCase metric name).
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
	m.mu.Lock()
	defer m.mu.Unlock()
	return maps.Clone(m.counts)
}

// Flush writes what was recorded since the last Flush as one EMF line and
// resets it. It writes nothing when nothing was recorded.
func (m *Metrics) Flush() error {
	if m == nil {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.counts) == 0 && len(m.millis) == 0 {
		return nil
	}
	type metricDef struct {
		Name string `json:"Name"`
		Unit string `json:"Unit"`
	}
	var defs []metricDef
	rec := map[string]any{}
	for _, name := range slices.Sorted(maps.Keys(m.counts)) {
		defs = append(defs, metricDef{name, "Count"})
		rec[name] = m.counts[name]
	}
	for _, name := range slices.Sorted(maps.Keys(m.millis)) {
		defs = append(defs, metricDef{name, "Milliseconds"})
		rec[name] = m.millis[name]
	}
	dimKeys := append([]string{}, slices.Sorted(maps.Keys(m.dims))...)
	for k, v := range m.dims {
		rec[k] = v
	}
	rec["_aws"] = map[string]any{
		"Timestamp": m.now().UnixMilli(),
		"CloudWatchMetrics": []any{map[string]any{
			"Namespace":  m.namespace,
			"Dimensions": [][]string{dimKeys},
			"Metrics":    defs,
		}},
	}
	clear(m.counts)
	clear(m.millis)
	b, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	_, err = m.w.Write(append(b, '\n'))
	return err
}
