package slack_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/protocol/provider/slack"
)

// FuzzParse: any body, signed or not, never panics; a refusal wraps a
// sentinel; an accepted event keeps the key contract. Seeded from the
// vectors.
func FuzzParse(f *testing.F) {
	var vf struct {
		Cases []struct {
			Requests []struct{ Body string } `json:"requests"`
		} `json:"cases"`
	}
	b, err := os.ReadFile("testdata/vectors.json")
	if err != nil {
		f.Fatal(err)
	}
	if err := json.Unmarshal(b, &vf); err != nil {
		f.Fatal(err)
	}
	for _, c := range vf.Cases {
		for _, r := range c.Requests {
			f.Add([]byte(r.Body), true)
		}
	}
	f.Add([]byte(mention), false)
	p, err := slack.New(slack.Config{SigningSecret: docSecret})
	if err != nil {
		f.Fatal(err)
	}
	now := time.Unix(1515449530, 0)
	f.Fuzz(func(t *testing.T, body []byte, sign bool) {
		req := request(string(body), now.Unix(), now)
		if !sign {
			req.Header.Set(slack.SignatureHeader, "v0=00")
		}
		d, err := p.Parse(context.Background(), req)
		if err != nil {
			if !errors.Is(err, webhook.ErrBadSignature) && !errors.Is(err, webhook.ErrMalformed) {
				t.Fatalf("error %v wraps no sentinel", err)
			}
			return
		}
		if !sign {
			t.Fatal("an unsigned body was accepted")
		}
		for _, ev := range d.Events {
			if webhook.CheckID("event id", ev.DedupKey, webhook.MaxDedupKeyBytes) != nil || !json.Valid(ev.JSON) {
				t.Fatalf("event %q breaks the contract", ev.DedupKey)
			}
		}
		if d.Reply.Status != http.StatusOK {
			t.Fatalf("reply %d", d.Reply.Status)
		}
	})
}
