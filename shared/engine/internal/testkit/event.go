package testkit

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/hookwall/hookwall/shared/state/store"
)

// Encode returns payload as the event's normalised JSON: []byte and
// json.RawMessage as they are, anything else encoded with encoding/json.
func Encode(payload any) ([]byte, error) {
	switch p := payload.(type) {
	case []byte:
		return p, nil
	case json.RawMessage:
		return p, nil
	}
	return json.Marshal(payload)
}

// Claimer claims events: the part of the events table [Claim] uses.
type Claimer interface {
	Claim(ctx context.Context, ev store.NewEvent, window time.Duration) (store.ClaimResult, error)
}

// Claim claims a new event (a new random key, named after kit) in table as
// the receiver does and returns its key and its envelope, the queue
// message's body. It fails t, its messages prefixed with kit, when it
// cannot.
func Claim(ctx context.Context, t testing.TB, table Claimer, kit, provider, tenant, eventType string, payload []byte) (key string, msg []byte) {
	t.Helper()
	key = fmt.Sprintf("%s#%s#%s-%s", provider, tenant, kit, rand.Text())
	sum := sha256.Sum256(payload)
	claim, err := table.Claim(ctx, store.NewEvent{Key: key, Provider: provider, Tenant: tenant,
		EventType: eventType, PayloadHash: hex.EncodeToString(sum[:]), Payload: payload}, 24*time.Hour)
	if err != nil || claim.Outcome != store.Claimed {
		t.Fatalf("%s: claim %s: %v (%v)", kit, key, claim.Outcome, err)
	}
	msg, err = json.Marshal(claim.Record.Envelope())
	if err != nil {
		t.Fatalf("%s: encode envelope: %v", kit, err)
	}
	return key, msg
}
