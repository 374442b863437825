package main

import (
	"math"
	"sort"
)

func sumMap(m map[int]int) int {
	s := 0
	for _, v := range m {
		s += v
	}
	return s
}

func lat(l []*delivery) []float64 {
	v := make([]float64, len(l))
	for i, d := range l {
		v[i] = d.latencyMs
	}
	return v
}

func callsPer(l []*delivery) map[string]any {
	if len(l) == 0 {
		return nil
	}
	sum := map[string]int{}
	all := 0
	for _, d := range l {
		for op, v := range d.calls {
			sum[op] += v
			all += v
		}
	}
	out := map[string]any{}
	for op, v := range sum {
		out[op] = r4(float64(v) / float64(len(l)))
	}
	out["all"] = r4(float64(all) / float64(len(l)))
	return out
}

// percentiles are nearest-rank, as bench.mjs's.
func percentiles(v []float64) map[string]any {
	if len(v) == 0 {
		return map[string]any{"count": 0}
	}
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	at := func(p float64) float64 { return s[max(0, int(math.Ceil(p/100*float64(len(s))))-1)] }
	sum := 0.0
	for _, x := range s {
		sum += x
	}
	return map[string]any{"count": len(s), "p50": r3(at(50)), "p95": r3(at(95)), "p99": r3(at(99)),
		"max": r3(s[len(s)-1]), "mean": r3(sum / float64(len(s)))}
}

func rN(x float64, d int) float64 {
	p := math.Pow(10, float64(d))
	return math.Round(x*p) / p
}
func r1(x float64) float64 { return rN(x, 1) }
func r3(x float64) float64 { return rN(x, 3) }
func r4(x float64) float64 { return rN(x, 4) }
