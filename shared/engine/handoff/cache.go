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
// the map slot and the entry itself (with its list links).
const entryOverhead = 96

// Cache is a bounded, expiring set of (event key, payload hash) pairs. A nil
// *Cache is a valid, disabled cache. It is safe for concurrent use.
//
// Every entry is in the map and in one list, oldest first, and nothing
// else: a key added again replaces its entry in both, so the memory held is
// what Bytes reports for every sequence of adds.
type Cache struct {
	mu       sync.Mutex
	maxBytes int
	bytes    int
	entries  map[string]*entry
	root     entry // sentinel of the list: root.next is the oldest entry
}

type entry struct {
	key, hash  string
	expires    int64 // unix nanoseconds
	prev, next *entry
}

func (e *entry) size() int { return len(e.key) + len(e.hash) + entryOverhead }

// New returns a cache of at most maxBytes (approximately: the strings and a
// fixed overhead per entry), or nil, a disabled cache, when maxBytes <= 0.
func New(maxBytes int) *Cache {
	if maxBytes <= 0 {
		return nil
	}
	c := &Cache{maxBytes: maxBytes, entries: make(map[string]*entry)}
	c.root.prev, c.root.next = &c.root, &c.root
	return c
}

// Add records at now that the event key with payload hash was handed off,
// until expires. An entry that would not fit in an empty cache is not added.
// A key already present is replaced and becomes the newest entry.
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
		c.remove(old)
	}
	c.entries[key] = e
	e.prev, e.next = c.root.prev, &c.root
	e.prev.next, c.root.prev = e, e
	c.bytes += e.size()
	c.evict(now.UnixNano())
}

// remove takes e out of the map and the list.
func (c *Cache) remove(e *entry) {
	e.prev.next, e.next.prev = e.next, e.prev
	e.prev, e.next = nil, nil
	delete(c.entries, e.key)
	c.bytes -= e.size()
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
// they are added, so the front of the list is where the expired ones are;
// an expired entry behind a live one waits, counted in Bytes, until the
// live one goes.
func (c *Cache) evict(now int64) {
	for e := c.root.next; e != &c.root; e = c.root.next {
		if c.bytes <= c.maxBytes && e.expires > now {
			return
		}
		c.remove(e)
	}
}
