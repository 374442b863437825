package obs

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hookwall/hookwall/shared/base/webhook/webhooktest"
)

// The rules below are those of the CloudWatch embedded metric format
// specification
// (https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/CloudWatch_Embedded_Metric_Format_Specification.html).

// emfUnits are the values MetricDefinition.Unit may take.
var emfUnits = []string{"Seconds", "Microseconds", "Milliseconds", "Bytes", "Kilobytes", "Megabytes", "Gigabytes",
	"Terabytes", "Bits", "Kilobits", "Megabits", "Gigabits", "Terabits", "Percent", "Count", "Bytes/Second",
	"Kilobytes/Second", "Megabytes/Second", "Gigabytes/Second", "Terabytes/Second", "Bits/Second",
	"Kilobits/Second", "Megabits/Second", "Gigabits/Second", "Terabits/Second", "Count/Second", "None"}

// metric is one metric of a document: its unit and values.
type metric struct {
	unit   string
	values []float64
}

// doc is what checkEMF read from one valid EMF line.
type doc struct {
	timestamp int64
	namespace string
	dimSets   [][]string
	dims      map[string]string
	metrics   map[string]metric
}

// checkEMF fails t unless line is one EMF document as the specification
// defines it, and returns what it holds.
func checkEMF(t *testing.T, line string) doc {
	t.Helper()
	var root map[string]json.RawMessage
	dec := json.NewDecoder(strings.NewReader(line))
	dec.UseNumber()
	if err := dec.Decode(&root); err != nil {
		t.Fatalf("not a JSON object: %v: %s", err, line)
	}
	if dec.More() {
		t.Fatalf("data after the JSON object: %s", line)
	}
	var meta map[string]json.RawMessage
	if err := json.Unmarshal(root["_aws"], &meta); err != nil || meta == nil {
		t.Fatalf("_aws is not an object: %v: %s", err, line)
	}
	for k := range meta {
		if k != "Timestamp" && k != "CloudWatchMetrics" {
			t.Errorf("_aws has member %q the specification does not define", k)
		}
	}
	var d doc
	var ts json.Number
	if err := json.Unmarshal(meta["Timestamp"], &ts); err != nil {
		t.Fatalf("_aws.Timestamp is not a number: %v", err)
	}
	d.timestamp, _ = ts.Int64()
	if ts.String() != fmt.Sprint(d.timestamp) {
		t.Errorf("_aws.Timestamp %s is not whole milliseconds", ts)
	}
	var directives []map[string]json.RawMessage
	if err := json.Unmarshal(meta["CloudWatchMetrics"], &directives); err != nil || len(directives) == 0 {
		t.Fatalf("_aws.CloudWatchMetrics is not a non-empty array: %v", err)
	}
	d.dims, d.metrics = map[string]string{}, map[string]metric{}
	for _, dir := range directives {
		for k := range dir {
			if k != "Namespace" && k != "Dimensions" && k != "Metrics" {
				t.Errorf("MetricDirective has member %q the specification does not define", k)
			}
		}
		if err := json.Unmarshal(dir["Namespace"], &d.namespace); err != nil || d.namespace == "" || len(d.namespace) > 255 {
			t.Errorf("Namespace %s: want a string of 1 to 255 characters (%v)", dir["Namespace"], err)
		}
		if err := json.Unmarshal(dir["Dimensions"], &d.dimSets); err != nil || d.dimSets == nil {
			t.Fatalf("Dimensions %s: want an array of DimensionSets (%v)", dir["Dimensions"], err)
		}
		for _, set := range d.dimSets {
			if set == nil || len(set) > 30 {
				t.Errorf("DimensionSet %v: want an array of at most 30 keys", set)
			}
			for _, k := range set {
				var v string
				if err := json.Unmarshal(root[k], &v); err != nil {
					t.Errorf("dimension %q: root member %s is not a string (%v)", k, root[k], err)
				}
				d.dims[k] = v
			}
		}
		var defs []map[string]json.RawMessage
		if err := json.Unmarshal(dir["Metrics"], &defs); err != nil {
			t.Fatalf("Metrics %s: want an array of MetricDefinitions (%v)", dir["Metrics"], err)
		}
		if len(defs) > 100 {
			t.Errorf("%d MetricDefinitions in one MetricDirective, over 100", len(defs))
		}
		for _, def := range defs {
			var name, unit string
			if err := json.Unmarshal(def["Name"], &name); err != nil || name == "" || len(name) > 255 {
				t.Errorf("MetricDefinition.Name %s: want a string of 1 to 255 characters", def["Name"])
			}
			if u, ok := def["Unit"]; ok {
				if err := json.Unmarshal(u, &unit); err != nil || !slices.Contains(emfUnits, unit) {
					t.Errorf("metric %s: Unit %s is not an EMF unit", name, u)
				}
			}
			if _, dup := d.metrics[name]; dup {
				t.Errorf("metric %s defined twice in one document", name)
			}
			d.metrics[name] = metric{unit: unit, values: metricValues(t, name, root[name])}
		}
	}
	return d
}

// metricValues decodes the root member of a metric: a number or an array of
// at most 100 numbers.
func metricValues(t *testing.T, name string, raw json.RawMessage) []float64 {
	t.Helper()
	if raw == nil {
		t.Errorf("metric %s: no root member", name)
		return nil
	}
	var one float64
	if err := json.Unmarshal(raw, &one); err == nil {
		return []float64{one}
	}
	var many []float64
	if err := json.Unmarshal(raw, &many); err != nil {
		t.Errorf("metric %s: %s is neither a number nor an array of numbers", name, raw)
	}
	if len(many) > 100 {
		t.Errorf("metric %s: %d values, over 100", name, len(many))
	}
	return many
}

// writes records every Write call.
type writes struct {
	mu    sync.Mutex
	calls []string
}

func (w *writes) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.calls = append(w.calls, string(p))
	return len(p), nil
}

// docs checks that every Write was one newline-terminated line and returns
// the documents.
func (w *writes) docs(t *testing.T) []doc {
	t.Helper()
	var out []doc
	for _, c := range w.calls {
		if !strings.HasSuffix(c, "\n") || strings.Count(c, "\n") != 1 {
			t.Fatalf("a Write that is not one line: %q", c)
		}
		out = append(out, checkEMF(t, strings.TrimSuffix(c, "\n")))
	}
	return out
}

var clock = time.Date(2026, 5, 1, 12, 0, 0, 123_000_000, time.UTC)

func newTestMetrics(w *writes, dims map[string]string) *Metrics {
	m := NewMetrics(w, "Hookwall", dims)
	m.now = func() time.Time { return clock }
	return m
}

func TestFlushWritesOneEMFDocument(t *testing.T) {
	w := &writes{}
	m := newTestMetrics(w, map[string]string{"Function": "receiver", "Stage": "prod"})
	m.Count("Received", 2)
	m.Count("Received", 3)
	m.Count("Duplicate", 1)
	m.Duration("ReceiverLatency", 1500*time.Microsecond)
	m.Duration("ReceiverLatency", 20*time.Millisecond)
	if err := m.Flush(); err != nil {
		t.Fatal(err)
	}
	docs := w.docs(t)
	if len(docs) != 1 {
		t.Fatalf("got %d documents, want 1", len(docs))
	}
	d := docs[0]
	if d.timestamp != clock.UnixMilli() || d.namespace != "Hookwall" {
		t.Errorf("got Timestamp %d, Namespace %q; want %d, Hookwall", d.timestamp, d.namespace, clock.UnixMilli())
	}
	if fmt.Sprint(d.dimSets) != "[[Function Stage]]" || d.dims["Function"] != "receiver" || d.dims["Stage"] != "prod" {
		t.Errorf("got dimensions %v = %v, want one set [Function Stage] = receiver, prod", d.dimSets, d.dims)
	}
	want := map[string]metric{
		"Received":        {"Count", []float64{5}},
		"Duplicate":       {"Count", []float64{1}},
		"ReceiverLatency": {"Milliseconds", []float64{1.5, 20}},
	}
	if fmt.Sprint(d.metrics) != fmt.Sprint(want) {
		t.Errorf("got metrics %v, want %v", d.metrics, want)
	}
}

func TestFlushWithoutDimensionsDeclaresAnEmptySet(t *testing.T) {
	w := &writes{}
	m := newTestMetrics(w, nil)
	m.Count("Received", 1)
	if err := m.Flush(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(w.calls[0], `"Dimensions":[[]]`) {
		t.Errorf("got %s, want Dimensions [[]]", w.calls[0])
	}
	w.docs(t)
}

func TestFlushWritesNothingWhenNothingWasRecorded(t *testing.T) {
	w := &writes{}
	m := newTestMetrics(w, map[string]string{"Function": "receiver"})
	if err := m.Flush(); err != nil {
		t.Fatal(err)
	}
	m.Count("Received", 1)
	if err := m.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := m.Flush(); err != nil { // reset by the one before
		t.Fatal(err)
	}
	if len(w.calls) != 1 {
		t.Errorf("got %d writes, want 1: %q", len(w.calls), w.calls)
	}
	if got := m.Counts(); len(got) != 0 {
		t.Errorf("counters after Flush: %v, want none", got)
	}
}

func TestNilMetricsRecordsNothing(t *testing.T) {
	var m *Metrics
	m.Count("Received", 1)
	m.Duration("ReceiverLatency", time.Second)
	if err := m.Flush(); err != nil || m.Counts() != nil {
		t.Errorf("nil Metrics: got %v, %v", err, m.Counts())
	}
}

func TestFlushSplitsSamplesOverOneHundred(t *testing.T) {
	w := &writes{}
	m := newTestMetrics(w, map[string]string{"Function": "processor"})
	m.Count("Succeeded", 250)
	for i := range 250 {
		m.Duration("ProcessingLatency", time.Duration(i)*time.Millisecond)
	}
	if err := m.Flush(); err != nil {
		t.Fatal(err)
	}
	docs := w.docs(t)
	var sizes []int
	var all []float64
	counted := 0.0
	for _, d := range docs {
		sizes = append(sizes, len(d.metrics["ProcessingLatency"].values))
		all = append(all, d.metrics["ProcessingLatency"].values...)
		if c, ok := d.metrics["Succeeded"]; ok {
			counted += c.values[0]
		}
		if d.timestamp != clock.UnixMilli() {
			t.Errorf("document with Timestamp %d, want %d", d.timestamp, clock.UnixMilli())
		}
	}
	if fmt.Sprint(sizes) != "[100 100 50]" {
		t.Errorf("got samples per document %v, want [100 100 50]", sizes)
	}
	for i, v := range all {
		if v != float64(i) {
			t.Fatalf("sample %d = %v, want %d (every sample once, in order)", i, v, i)
		}
	}
	if counted != 250 {
		t.Errorf("counter Succeeded flushed as %v, want 250 (once)", counted)
	}
}

func TestFlushSplitsMoreThanOneHundredMetrics(t *testing.T) {
	w := &writes{}
	m := newTestMetrics(w, map[string]string{"Function": "processor"})
	for i := range 150 {
		m.Count(fmt.Sprintf("Metric%03d", i), i+1)
	}
	m.Duration("Latency", time.Millisecond)
	if err := m.Flush(); err != nil {
		t.Fatal(err)
	}
	docs := w.docs(t)
	got := map[string]float64{}
	var sizes []int
	for _, d := range docs {
		sizes = append(sizes, len(d.metrics))
		for name, mt := range d.metrics {
			got[name] += mt.values[0]
		}
	}
	if fmt.Sprint(sizes) != "[100 51]" {
		t.Errorf("got metrics per document %v, want [100 51]", sizes)
	}
	for i := range 150 {
		if name := fmt.Sprintf("Metric%03d", i); got[name] != float64(i+1) {
			t.Errorf("%s = %v, want %d", name, got[name], i+1)
		}
	}
	if got["Latency"] != 1 {
		t.Errorf("Latency = %v, want 1", got["Latency"])
	}
}

func TestFlushKeepsACounterAndSamplesOfOneNameApart(t *testing.T) {
	w := &writes{}
	m := newTestMetrics(w, map[string]string{"Function": "processor"})
	m.Count("Work", 3)
	m.Duration("Work", 2*time.Millisecond)
	if err := m.Flush(); err != nil {
		t.Fatal(err)
	}
	docs := w.docs(t)
	if len(docs) != 2 || docs[0].metrics["Work"].unit != "Count" || docs[1].metrics["Work"].unit != "Milliseconds" {
		t.Errorf("got %+v, want the counter and the sample in two documents", docs)
	}
}

func TestFlushDropsAMetricNamedLikeADimension(t *testing.T) {
	w := &writes{}
	m := newTestMetrics(w, map[string]string{"Function": "processor"})
	m.Count("Function", 1)
	m.Count("_aws", 1)
	m.Count("Received", 1)
	if err := m.Flush(); err != nil {
		t.Fatal(err)
	}
	docs := w.docs(t)
	if len(docs) != 1 || len(docs[0].metrics) != 1 || docs[0].dims["Function"] != "processor" {
		t.Errorf("got %+v, want Received alone and the dimension intact", docs)
	}
}

func TestNewMetricsRefusesWhatEMFCannotCarry(t *testing.T) {
	many := map[string]string{}
	for i := range 31 {
		many[fmt.Sprintf("D%d", i)] = "v"
	}
	for name, dims := range map[string]map[string]string{"no namespace": nil, "31 dimensions": many} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Error("no panic")
				}
			}()
			ns := "Hookwall"
			if dims == nil {
				ns = ""
			}
			NewMetrics(&writes{}, ns, dims)
		})
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestFlushReturnsTheWriteError(t *testing.T) {
	m := NewMetrics(failingWriter{}, "Hookwall", nil)
	m.Count("Received", 1)
	if err := m.Flush(); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("got %v, want the write error", err)
	}
}

// Run with -race: counters, samples and flushes from many goroutines, and
// every recorded value is flushed exactly once.
func TestMetricsIsSafeForConcurrentUse(t *testing.T) {
	var buf webhooktest.LockedBuffer
	m := NewMetrics(&buf, "Hookwall", map[string]string{"Function": "processor"})
	const workers, each = 8, 500
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := range each {
				m.Count("Received", 1)
				m.Duration("Latency", time.Millisecond)
				if i%50 == 0 {
					if err := m.Flush(); err != nil {
						t.Error(err)
					}
				}
			}
		})
	}
	wg.Wait()
	if err := m.Flush(); err != nil {
		t.Fatal(err)
	}
	var count, samples float64
	for line := range strings.Lines(buf.String()) {
		d := checkEMF(t, strings.TrimSuffix(line, "\n"))
		if c, ok := d.metrics["Received"]; ok {
			count += c.values[0]
		}
		samples += float64(len(d.metrics["Latency"].values))
	}
	if count != workers*each || samples != workers*each {
		t.Errorf("flushed %v counts and %v samples, want %d each", count, samples, workers*each)
	}
}

func TestGaugeWritesOneDocumentWithItsOwnDimension(t *testing.T) {
	w := &writes{}
	m := newTestMetrics(w, map[string]string{"Function": "processor"})
	m.Count("Succeeded", 1)
	if err := m.Gauge("CircuitOpen", 1, map[string]string{"Target": "forward/acme"}); err != nil {
		t.Fatal(err)
	}
	docs := w.docs(t)
	if len(docs) != 1 {
		t.Fatalf("got %d documents, want 1 (the gauge, at once)", len(docs))
	}
	d := docs[0]
	if fmt.Sprint(d.dimSets) != "[[Function Target]]" || d.dims["Function"] != "processor" || d.dims["Target"] != "forward/acme" {
		t.Errorf("got dimensions %v = %v, want [Function Target] = processor, forward/acme", d.dimSets, d.dims)
	}
	if want := map[string]metric{"CircuitOpen": {"None", []float64{1}}}; fmt.Sprint(d.metrics) != fmt.Sprint(want) {
		t.Errorf("got metrics %v, want %v", d.metrics, want)
	}
	// The counters wait for Flush, under the function's dimensions only.
	if err := m.Flush(); err != nil {
		t.Fatal(err)
	}
	if docs = w.docs(t); len(docs) != 2 || fmt.Sprint(docs[1].dimSets) != "[[Function]]" {
		t.Errorf("after Flush: got %d documents, the second with %v; want 2, [[Function]]", len(docs), docs[len(docs)-1].dimSets)
	}
	if err := m.Gauge("Function", 1, nil); err != nil || len(w.docs(t)) != 2 {
		t.Errorf("a gauge named like a dimension: got %v, %d documents; want nil and nothing written", err, len(w.docs(t)))
	}
}
