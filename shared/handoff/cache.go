// Package handoff remembers, in one warm receiver instance, the events it
// has handed off to the queue, so that a duplicate delivery of such an
// event is answered from memory with no AWS call.
//
// An entry is added only after the queue accepted the event's message (so
// it never turns a first delivery whose hand-off failed into a
// "duplicate"), and it expires before the receiver's re-enqueue grace ends
// (so a record found still RECEIVED past the grace is taken over through
// DynamoDB, as without the cache). The cache is bounded in bytes: the
// oldest entries go first. Other instances know nothing of it: their
// duplicates still go to DynamoDB.
package handoff

import (
	"sync"
	"time"
)

// entryOverhead approximates the memory of one entry besides its strings:
// the map slot, the queue slot and the entry itself.
const entryOverhead = 96

// Cache is a bounded, expiring set of (event key, payload hash) pairs. A nil
// *Cache is a valid, disabled cache. It is safe for concurrent use.
type Cache struct {
	mu       sync.Mutex
	maxBytes int
	bytes    int
	entries  map[string]*entry
	queue    []*entry // in insertion order: the oldest first
	head     int      // queue[:head] are gone
}

type entry struct {
	key, hash string
	expires   int64 // unix nanoseconds
	removed   bool  // replaced by a newer entry for the same key
}

func (e *entry) size() int { return len(e.key) + len(e.hash) + entryOverhead }

// New returns a cache of at most maxBytes (approximately: the strings and a
// fixed overhead per entry), or nil, a disabled cache, when maxBytes <= 0.
func New(maxBytes int) *Cache {
	if maxBytes <= 0 {
		return nil
	}
	return &Cache{maxBytes: maxBytes, entries: make(map[string]*entry)}
}

// Add records at now that the event key with payload hash was handed off,
// until expires. An entry that would not fit in an empty cache is not added.
func (c *Cache) Add(key, hash string, now, expires time.Time) {
	if c == nil {
		return
	}
	e := &entry{key: key, hash: hash, expires: expires.UnixNano()}
	if e.size() > c.maxBytes {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if old := c.entries[key]; old != nil {
		old.removed = true
		c.bytes -= old.size()
	}
	c.entries[key] = e
	c.queue = append(c.queue, e)
	c.bytes += e.size()
	c.evict(now.UnixNano())
}

// HandedOff reports whether key, with the same payload hash, was handed off
// by this instance and its entry has not expired at now.
func (c *Cache) HandedOff(key, hash string, now time.Time) bool {
	if c == nil {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.entries[key]
	return e != nil && e.hash == hash && now.UnixNano() < e.expires
}

// Len returns the number of entries, expired ones not yet evicted included.
func (c *Cache) Len() int {
	if c == nil {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries)
}

// Bytes returns the approximate memory the entries take.
func (c *Cache) Bytes() int {
	if c == nil {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.bytes
}

// evict drops the oldest entries while the cache is over its size or they
// have expired at now. Entries are added with expiries in nearly the order
// they are added, so the front of the queue is where the expired ones are.
func (c *Cache) evict(now int64) {
	for c.head < len(c.queue) {
		e := c.queue[c.head]
		switch {
		case e.removed:
		case c.bytes > c.maxBytes || e.expires <= now:
			delete(c.entries, e.key)
			c.bytes -= e.size()
		default:
			c.compact()
			return
		}
		c.queue[c.head] = nil
		c.head++
	}
	c.compact()
}

// compact reuses the queue's front once most of it is gone.
func (c *Cache) compact() {
	if c.head > 0 && c.head >= len(c.queue)/2 {
		n := copy(c.queue, c.queue[c.head:])
		clear(c.queue[n:])
		c.queue = c.queue[:n]
		c.head = 0
	}
}
