package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

type metric struct {
	label      string
	hw, pt     string // dotted paths in the hookwall and powertools JSON
	lowerIsBet bool
}

var metrics = []metric{
	{"deliveries/s", "shuffled.deliveries_per_s", "shuffled.deliveries_per_s", false},
	{"latency p50 ms", "shuffled.latency_ms.p50", "shuffled.latency_ms.p50", true},
	{"latency p99 ms", "shuffled.latency_ms.p99", "shuffled.latency_ms.p99", true},
	{"client CPU ms / delivery", "shuffled.cpu.client_ms_per_delivery", "shuffled.cpu.node_ms_per_delivery", true},
	{"DynamoDB Local CPU ms / delivery", "shuffled.cpu.dynamodb_local_ms_per_delivery", "shuffled.cpu.dynamodb_local_ms_per_delivery", true},
	{"calls / unique event (all-in)", "shuffled.dynamodb_calls.all_in_per_unique_event.all", "shuffled.dynamodb_calls.all_in_per_unique_event.all", true},
	{"  of which DynamoDB", "shuffled.dynamodb_calls.dynamodb_all_in_per_unique_event", "shuffled.dynamodb_calls.all_in_per_unique_event.all", true},
	{"calls / first delivery", "shuffled.dynamodb_calls.per_first_delivery.all", "shuffled.dynamodb_calls.per_first_delivery.all", true},
	{"calls / duplicate delivery", "shuffled.dynamodb_calls.per_duplicate_delivery.all", "shuffled.dynamodb_calls.per_duplicate_delivery.all", true},
	{"other processes CPU ms (noise)", "shuffled.cpu.machine_other_ms", "shuffled.cpu.machine_other_ms", true},
}

func get(v any, path string) (float64, bool) {
	for _, k := range strings.Split(path, ".") {
		m, ok := v.(map[string]any)
		if !ok {
			return 0, false
		}
		v = m[k]
	}
	f, ok := v.(float64)
	return f, ok
}

func median(x []float64) float64 {
	s := append([]float64(nil), x...)
	sort.Float64s(s)
	m := len(s) / 2
	if len(s)%2 == 1 {
		return s[m]
	}
	return (s[m-1] + s[m]) / 2
}

func load(pattern string) ([]any, error) {
	files, err := filepath.Glob(pattern)
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	var docs []any
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		var v any
		if err := json.Unmarshal(b, &v); err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		docs = append(docs, v)
	}
	return docs, nil
}

func compare(w io.Writer, dir string) error {
	hw, err := load(filepath.Join(dir, "hookwall-*.json"))
	if err != nil {
		return err
	}
	pt, err := load(filepath.Join(dir, "powertools-*.json"))
	if err != nil {
		return err
	}
	if len(hw) == 0 || len(pt) == 0 {
		return fmt.Errorf("%s: need hookwall-*.json and powertools-*.json (have %d and %d)", dir, len(hw), len(pt))
	}
	vals := func(docs []any, path string) []float64 {
		var v []float64
		for _, d := range docs {
			if f, ok := get(d, path); ok {
				v = append(v, f)
			}
		}
		return v
	}
	fmt.Fprintf(w, "Medians over %d Hookwall and %d Powertools rounds (shuffled mode); ratio = Hookwall / Powertools\n\n", len(hw), len(pt))
	fmt.Fprintf(w, "| metric | Hookwall (min-max) | Powertools (min-max) | ratio |\n| --- | --- | --- | --- |\n")
	for _, m := range metrics {
		h, p := vals(hw, m.hw), vals(pt, m.pt)
		if len(h) == 0 || len(p) == 0 {
			continue
		}
		mh, mp := median(h), median(p)
		ratio := "n/a"
		if mp != 0 {
			ratio = fmt.Sprintf("%.2f", mh/mp)
		}
		fmt.Fprintf(w, "| %s | %s (%s-%s) | %s (%s-%s) | %s |\n", m.label, g(mh), g(minOf(h)), g(maxOf(h)), g(mp), g(minOf(p)), g(maxOf(p)), ratio)
	}
	return nil
}

func g(x float64) string { return strconv.FormatFloat(x, 'g', 4, 64) }

func minOf(x []float64) float64 {
	m := x[0]
	for _, v := range x {
		m = math.Min(m, v)
	}
	return m
}

func maxOf(x []float64) float64 {
	m := x[0]
	for _, v := range x {
		m = math.Max(m, v)
	}
	return m
}
