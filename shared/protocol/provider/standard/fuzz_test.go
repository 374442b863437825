package standard_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/engine/intake/intaketest"
	"github.com/hookwall/hookwall/shared/protocol/provider/standard"
)

// FuzzParse must never panic. Bodies are signed correctly (v1 and v1a) so
// that the body handling past verification is exercised; the raw signature
// header is fuzzed too, seeded with the v1a vectors.
func FuzzParse(f *testing.F) {
	cases := loadCases(f)
	for _, c := range cases {
		f.Add(c.Headers["webhook-id"], c.Headers["webhook-timestamp"], []byte(c.Body), c.Headers["webhook-signature"])
	}
	for _, c := range intaketest.LoadVectors(f, "testdata/vectors.json").Cases {
		for _, r := range c.Requests {
			f.Add(r.Headers["webhook-id"], r.Headers["webhook-timestamp"], []byte(r.Body), r.Headers["webhook-signature"])
		}
	}
	spec := caseNamed(f, "spec_vector")
	p, err := standard.New(standard.Config{Secrets: []string{spec.Secret}, PublicKeys: []string{keyAPublic}})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, id, ts string, body []byte, rawSig string) {
		v1a, _ := standard.SignAsymmetric(keyASeed, id, 1614265330, body)
		for _, sig := range []string{rawSig, sign(t, spec.Secret, id, ts, body), v1a} {
			h := http.Header{}
			h.Set("webhook-id", id)
			h.Set("webhook-timestamp", ts)
			h.Set("webhook-signature", sig)
			req := &webhook.Request{Method: http.MethodPost, Header: h, Body: body, Now: time.Unix(1614265330, 0)}
			d, err := p.Parse(context.Background(), req)
			if err != nil {
				if !errors.Is(err, webhook.ErrBadSignature) && !errors.Is(err, webhook.ErrStaleTimestamp) && !errors.Is(err, webhook.ErrMalformed) {
					t.Fatalf("unexpected error %v", err)
				}
				continue
			}
			if len(d.Events) != 1 || d.Events[0].DedupKey != h.Get("webhook-id") || d.Events[0].Type == "" {
				t.Fatalf("bad delivery %+v", d)
			}
		}
	})
}
