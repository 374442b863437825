package memstore

import (
	"context"
	"slices"

	"github.com/hookwall/hookwall/shared/state/store"
)

// LoadProgress returns the progress saved for the delivery id, or the zero
// Progress when there is none or it has expired, as
// [store.Table.LoadProgress].
func (s *Store) LoadProgress(_ context.Context, id string) (store.Progress, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.prog[id]
	if !ok || p.ExpiresAt <= s.now().Unix() {
		return store.Progress{}, nil
	}
	return store.Progress{Done: slices.Clone(p.Done), ExpiresAt: p.ExpiresAt}, nil
}

// SaveProgress replaces the progress of the delivery id, as
// [store.Table.SaveProgress].
func (s *Store) SaveProgress(_ context.Context, id string, p store.Progress) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.prog[id] = store.Progress{Done: slices.Clone(p.Done), ExpiresAt: p.ExpiresAt}
	return nil
}
