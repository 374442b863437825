// Package format holds the format versions of everything Hookwall persists
// or sends: the items of its DynamoDB table, its SQS messages (the events
// queue and the dead-letter queue) and its EventBridge outcome events. It is
// the one place these numbers live, below every package that writes or reads
// them, and it imports nothing of Hookwall's.
//
// The rule (docs/FORMATS.md): code of version N writes N and reads N and
// N-1, and an item or message without a version is N-1 (the format of
// release 0.1.0, which wrote none). A change to a persisted shape only adds
// fields; a rename, a retype or a removal takes a version step. Data of a
// version newer than [Known] is never failed, dead-lettered or compensated:
// the reader leaves it for the newer code and counts it ([CountNewer]).
package format

import (
	"fmt"
	"sync"
	"sync/atomic"
)

// Family is one kind of persisted data with its own format version.
type Family string

// The families. Every item of the table shares the Item version (records,
// payload, progress, step-journal, cursor, breaker, bucket, pause, target
// and recovery job items); a change to any of their shapes steps it.
const (
	Item    Family = "item"
	Message Family = "message"
	Event   Family = "event"
)

// The versions this code writes. Version 1 is the unversioned format of
// release 0.1.0; version 2 adds the version and release stamps and nothing
// else.
const (
	ItemVersion    = 2
	MessageVersion = 2
	EventVersion   = 2
)

// Names of the stamps.
const (
	// AttrVersion is the item attribute (a number) holding an item's format
	// version.
	AttrVersion = "fv"
	// AttrRelease is the item attribute (a string) holding the release that
	// wrote the item last.
	AttrRelease = "rel"
	// MessageAttrVersion is the SQS message attribute (a Number) holding a
	// message's format version.
	MessageAttrVersion = "hookwall-format"
	// MessageAttrRelease is the SQS message attribute (a String) holding the
	// release that sent the message.
	MessageAttrRelease = "hookwall-release"
	// MetricNewer is the metric counting data of a newer format left alone.
	MetricNewer = "NewerFormat"
)

// Families lists every family, in a fixed order.
var Families = []Family{Item, Message, Event}

var current = map[Family]int{Item: ItemVersion, Message: MessageVersion, Event: EventVersion}

type override struct{ write, known int }

var (
	mu        sync.RWMutex
	overrides = map[Family]override{}
	newer     = map[Family]*atomic.Int64{Item: {}, Message: {}, Event: {}}
)

// Current is the version of f this code writes and knows (without a test
// override). It panics on an unknown family.
func Current(f Family) int {
	v, ok := current[f]
	if !ok {
		panic(fmt.Sprintf("format: unknown family %q", f))
	}
	return v
}

// Written is the version of f this code stamps on what it writes: [Current],
// unless a test has overridden it (see [Override]).
func Written(f Family) int { return overridden(f, func(o override) int { return o.write }) }

// Known is the newest version of f this code reads: [Current], unless a test
// has overridden it.
func Known(f Family) int { return overridden(f, func(o override) int { return o.known }) }

// overridden is the part of f's override that pick reads, or [Current].
func overridden(f Family, pick func(override) int) int {
	mu.RLock()
	o, ok := overrides[f]
	mu.RUnlock()
	if v := pick(o); ok && v != 0 {
		return v
	}
	return Current(f)
}

// Newer reports whether version v of f is newer than this code knows. A
// missing version (0) is the previous format, never newer.
func Newer(f Family, v int) bool { return v > Known(f) }

// CountNewer counts one piece of data of f left alone for being newer.
func CountNewer(f Family) { newer[f].Add(1) }

// NewerCount is how many pieces of data of f this process has left alone for
// being newer, since it started (tests read it).
func NewerCount(f Family) int64 { return newer[f].Load() }

// Override makes this process write version write of f and read up to known
// (0 keeps the current one), until the returned restore function is called.
// It is a test hook: a test writes "newer" data with Override(f, N+1, N+1),
// restores, and checks that today's code leaves it alone; with
// Override(f, 0, N+1) it plays the newer code reading it.
func Override(f Family, write, known int) (restore func()) {
	Current(f) // panics on an unknown family
	mu.Lock()
	prev, had := overrides[f]
	overrides[f] = override{write: write, known: known}
	mu.Unlock()
	return func() {
		mu.Lock()
		defer mu.Unlock()
		if had {
			overrides[f] = prev
		} else {
			delete(overrides, f)
		}
	}
}
