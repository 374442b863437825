package main

import (
	"encoding/json"
	"math"
	"os"
)

// The workload: bench.mjs's, bit for bit.

func mulberry32(seed uint32) func() float64 {
	a := seed
	return func() float64 {
		a += 0x6d2b79f5
		t := a
		t = (t ^ t>>15) * (t | 1)
		t ^= t + (t^t>>7)*(t|61)
		return float64(t^t>>14) / 4294967296
	}
}

func shuffle[T any](s []T, rnd func() float64) {
	for i := len(s) - 1; i > 0; i-- {
		j := int(math.Floor(rnd() * float64(i+1)))
		s[i], s[j] = s[j], s[i]
	}
}

// jsRound is Math.round for the non-negative values used here.
func jsRound(x float64) int { return int(math.Floor(x + 0.5)) }

type distribution struct {
	Once       int `json:"once"`
	Twice      int `json:"twice"`
	ThreeTimes int `json:"three_times"`
}

// workload returns the delivery order as event indexes.
func workload(n int, seed uint32, dup2, dup3 float64) ([]int, distribution) {
	rnd := mulberry32(seed)
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	shuffle(idx, rnd)
	n3, n2 := jsRound(float64(n)*dup3), jsRound(float64(n)*dup2)
	times := make([]int, n)
	for i := range times {
		times[i] = 1
	}
	for _, i := range idx[:n3] {
		times[i] = 3
	}
	for _, i := range idx[n3 : n3+n2] {
		times[i] = 2
	}
	var d []int
	for i := 0; i < n; i++ {
		for k := 0; k < times[i]; k++ {
			d = append(d, i)
		}
	}
	shuffle(d, rnd)
	return d, distribution{Once: n - n2 - n3, Twice: n2, ThreeTimes: n3}
}

func dumpWorkload(o options) error {
	d, dist := workload(o.n, o.seed, o.dup2, o.dup3)
	b, err := json.Marshal(map[string]any{"n": o.n, "seed": o.seed, "dup2": o.dup2, "dup3": o.dup3,
		"distribution": dist, "event_id_format": "<prefix>-<index zero-padded to 6>", "deliveries": d})
	if err != nil {
		return err
	}
	return os.WriteFile(o.dumpWorkload, append(b, '\n'), 0o644)
}
