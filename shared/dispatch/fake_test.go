package dispatch

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/hookwall/hookwall/shared/webhook"
)

// fakeQueue records visibility changes and dead letters.
type fakeQueue struct {
	mu          sync.Mutex
	visibility  map[string]time.Duration
	deadLetters []deadLetter
}

type deadLetter struct {
	key, reason string
	body        []byte
}

func newFakeQueue() *fakeQueue { return &fakeQueue{visibility: map[string]time.Duration{}} }

func (q *fakeQueue) ChangeVisibility(_ context.Context, handle string, d time.Duration) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.visibility[handle] = d
	return nil
}

func (q *fakeQueue) SendDeadLetter(_ context.Context, key string, body []byte, reason string) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.deadLetters = append(q.deadLetters, deadLetter{key: key, reason: reason, body: body})
	return nil
}

func (q *fakeQueue) dead() []deadLetter {
	q.mu.Lock()
	defer q.mu.Unlock()
	return append([]deadLetter(nil), q.deadLetters...)
}

// fakePublisher records published events.
type fakePublisher struct {
	mu     sync.Mutex
	events []webhook.Outcome
}

func (p *fakePublisher) Publish(_ context.Context, evs []webhook.Outcome) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.events = append(p.events, evs...)
	return nil
}

func delivery(key, provider, typ string, payload any) Message {
	b, _ := json.Marshal(payload)
	env := webhook.Envelope{Key: key, Provider: provider, Tenant: "t1", Type: typ, ReceivedAt: time.Now().Add(-time.Second), Payload: b}
	body, _ := json.Marshal(env)
	return Message{MessageID: "m-" + key, ReceiptHandle: "rh-" + key, Body: body}
}
