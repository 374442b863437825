package handoff

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

var t0 = time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)

func TestHandedOffOnlyAfterAddWithSameHashBeforeExpiry(t *testing.T) {
	c := New(1 << 20)
	if c.HandedOff("k", "h", t0) {
		t.Fatal("empty cache reports a hand-off")
	}
	c.Add("k", "h", t0, t0.Add(2*time.Second))
	if !c.HandedOff("k", "h", t0.Add(time.Second)) {
		t.Error("added key not found")
	}
	if c.HandedOff("k", "other", t0.Add(time.Second)) {
		t.Error("a different payload hash counts as handed off")
	}
	if c.HandedOff("k", "h", t0.Add(2*time.Second)) {
		t.Error("entry still counts at its expiry")
	}
	if c.HandedOff("k2", "h", t0) {
		t.Error("unknown key found")
	}
}

func TestReplacingAKeyKeepsOneEntry(t *testing.T) {
	c := New(1 << 20)
	c.Add("k", "h1", t0, t0.Add(time.Second))
	c.Add("k", "h2", t0, t0.Add(time.Second))
	if c.Len() != 1 || c.HandedOff("k", "h1", t0) || !c.HandedOff("k", "h2", t0) {
		t.Fatalf("len %d, h1 %v, h2 %v", c.Len(), c.HandedOff("k", "h1", t0), c.HandedOff("k", "h2", t0))
	}
	if want := len("k") + len("h2") + entryOverhead; c.Bytes() != want {
		t.Errorf("bytes = %d, want %d", c.Bytes(), want)
	}
}

func TestBoundedInBytesOldestFirst(t *testing.T) {
	one := len("key-000") + len("hash") + entryOverhead
	c := New(10 * one)
	for i := range 25 {
		c.Add(fmt.Sprintf("key-%03d", i), "hash", t0, t0.Add(time.Hour))
		if c.Bytes() > 10*one {
			t.Fatalf("after %d adds: %d bytes, over the bound %d", i+1, c.Bytes(), 10*one)
		}
	}
	if c.Len() != 10 {
		t.Errorf("len = %d, want 10", c.Len())
	}
	for i := range 25 {
		got := c.HandedOff(fmt.Sprintf("key-%03d", i), "hash", t0)
		if want := i >= 15; got != want {
			t.Errorf("key-%03d: handed off %v, want %v (the oldest go first)", i, got, want)
		}
	}
}

func TestExpiredEntriesAreEvicted(t *testing.T) {
	c := New(1 << 20)
	for i := range 100 {
		c.Add(fmt.Sprint(i), "h", t0, t0.Add(time.Second))
	}
	c.Add("late", "h", t0.Add(2*time.Second), t0.Add(3*time.Second))
	if c.Len() != 1 {
		t.Errorf("len = %d after the others expired, want 1", c.Len())
	}
	if n := c.listed(); n != 1 {
		t.Errorf("the eviction list holds %d entries, want 1", n)
	}
}

func TestTooLargeEntryIsNotAdded(t *testing.T) {
	c := New(entryOverhead + 4)
	c.Add("a-long-key", "hash", t0, t0.Add(time.Hour))
	if c.Len() != 0 || c.Bytes() != 0 {
		t.Errorf("len %d bytes %d, want an empty cache", c.Len(), c.Bytes())
	}
}

func TestNilCacheIsDisabled(t *testing.T) {
	var c *Cache = New(0)
	c.Add("k", "h", t0, t0.Add(time.Hour))
	if c.HandedOff("k", "h", t0) || c.Len() != 0 || c.Bytes() != 0 {
		t.Error("a disabled cache remembers")
	}
}

func TestConcurrentUse(t *testing.T) {
	c := New(64 << 10)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 2000 {
				k := fmt.Sprintf("%d-%d", g, i%300)
				c.Add(k, "h", t0, t0.Add(time.Hour))
				c.HandedOff(k, "h", t0)
			}
		})
	}
	wg.Wait()
	if c.Bytes() > 64<<10 {
		t.Errorf("bytes %d over the bound", c.Bytes())
	}
}

func BenchmarkHandedOff(b *testing.B) {
	c := New(4 << 20)
	keys := make([]string, 10000)
	for i := range keys {
		keys[i] = fmt.Sprintf("line:demo:%032d", i)
		c.Add(keys[i], "sha256:0123456789abcdef", t0, t0.Add(time.Hour))
	}
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		c.HandedOff(keys[i%len(keys)], "sha256:0123456789abcdef", t0)
	}
}

// Defect 5 of the second hardening round: one key re-added 2 million times
// behind an older live entry. The replaced entries must not stay queued
// behind it: the heap stays near the cache's bound, and what the cache
// holds is what Bytes says.
func TestReAddingOneKeyBehindALiveEntryStaysBounded(t *testing.T) {
	const bound = 64 << 10
	c := New(bound)
	c.Add("older-live-entry", "hash", t0, t0.Add(time.Hour))
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := range 2_000_000 {
		c.Add("k", "h", t0.Add(time.Duration(i)), t0.Add(time.Hour))
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	if grew := int64(after.HeapAlloc) - int64(before.HeapAlloc); grew > 8<<20 {
		t.Errorf("the heap grew by %d bytes over 2M re-adds of one key, the cache is bounded at %d (Bytes says %d)", grew, bound, c.Bytes())
	}
	if n, want := c.Len(), 2; n != want {
		t.Errorf("len = %d, want %d", n, want)
	}
	if got := c.listed(); got != c.Len() {
		t.Errorf("%d entries listed for eviction, %d in the map: replaced entries are still held", got, c.Len())
	}
	if want := len("older-live-entry") + len("hash") + len("k") + len("h") + 2*entryOverhead; c.Bytes() != want {
		t.Errorf("bytes = %d, want %d", c.Bytes(), want)
	}
	if !c.HandedOff("older-live-entry", "hash", t0) || !c.HandedOff("k", "h", t0) {
		t.Error("an entry went missing")
	}
}

// Every sequence of adds, expiries and replacements keeps Bytes within the
// bound and equal to the entries held.
func TestBoundHoldsForRandomAdds(t *testing.T) {
	const bound = 4 << 10
	c := New(bound)
	r := rand.New(rand.NewPCG(1, 2))
	now := t0
	for i := range 200_000 {
		now = now.Add(time.Duration(r.IntN(int(time.Millisecond))))
		key := fmt.Sprintf("key-%d", r.IntN(300))
		c.Add(key, strings.Repeat("h", r.IntN(40)), now, now.Add(time.Duration(r.IntN(int(time.Second)))))
		if c.Bytes() > bound {
			t.Fatalf("add %d: %d bytes, over the bound %d", i, c.Bytes(), bound)
		}
		if i%1000 == 0 {
			if got, sum := c.listed(), c.sum(); got != c.Len() || sum != c.Bytes() {
				t.Fatalf("add %d: %d listed, %d in the map; %d bytes held, Bytes says %d", i, got, c.Len(), sum, c.Bytes())
			}
		}
	}
}

// listed counts the entries on the eviction list.
func (c *Cache) listed() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for e := c.root.next; e != &c.root; e = e.next {
		n++
	}
	return n
}

// sum adds up the sizes of the entries in the map.
func (c *Cache) sum() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, e := range c.entries {
		n += e.size()
	}
	return n
}
