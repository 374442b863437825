package memstore

import (
	"cmp"
	"crypto/rand"
	"slices"
	"time"

	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/state/store"
)

// addHistory adds the entry of the transition that just brought r to its
// status and version, and drops the entry that falls out of the newest
// HistoryKeep, as the table's write does (SET history.v<version>, REMOVE
// history.v<version-keep>).
func (s *Store) addHistory(r *store.Record, at time.Time, from webhook.Status, owner string, attempt int, errText string) {
	r.History = slices.DeleteFunc(r.History, func(e webhook.HistoryEntry) bool {
		return e.Version == r.Version || e.Version == r.Version-s.keep
	})
	r.History = append(r.History, webhook.HistoryEntry{At: time.UnixMilli(at.UnixMilli()), From: from, To: r.Status,
		Attempt: attempt, Owner: owner, Error: webhook.Truncate(errText, webhook.MaxHistoryError), Function: s.function,
		Version: r.Version})
	slices.SortFunc(r.History, func(a, b webhook.HistoryEntry) int { return cmp.Compare(a.Version, b.Version) })
}

// shardName is the stored sweep shard of key.
func shardName(key string) string { return store.ShardName(store.ShardOf(key)) }

// newClaimID returns a random claim id, as the table's.
func newClaimID() string { return rand.Text() }
