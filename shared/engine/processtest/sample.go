package processtest

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/config/signer"
	"github.com/hookwall/hookwall/shared/config/tenants"
	"github.com/hookwall/hookwall/shared/protocol/provider"
	"github.com/hookwall/hookwall/shared/protocol/providers"
)

// sampleTenant is the tenant a sample is signed for and parsed as.
const sampleTenant = "sample"

// Sample returns the payload of the first event of typ in body, a
// delivery of typ's provider as the platform sends it (a sample of
// events/bodies: the placeholders {{id}}, {{now}} … of `hookwall sign`
// filled in): body is signed with the provider's demo settings and parsed
// by the provider's own parser, as the receiver does, so that the payload
// a handler decodes carries the sample's real ids and fields. Pass it to
// [Run]. A body that does not parse, or carries no event of typ, fails t.
func Sample[T any](t testing.TB, typ webhook.Type[T], body []byte) json.RawMessage {
	t.Helper()
	payload, err := sample(typ.Provider, typ.Name, body, time.Now())
	if err != nil {
		t.Fatalf("processtest: sample of %s/%s: %v", typ.Provider, typ.Name, err)
	}
	var data T
	if err := json.Unmarshal(payload, &data); err != nil {
		t.Fatalf("processtest: sample of %s/%s: the event does not decode as %T: %v", typ.Provider, typ.Name, data, err)
	}
	return payload
}

func sample(name, typ string, body []byte, now time.Time) (json.RawMessage, error) {
	p, ok := providers.Lookup(name)
	if !ok {
		return nil, fmt.Errorf("no provider %q (providers: %s)", name, strings.Join(providers.Names(), ", "))
	}
	body, err := signer.Expand(body, now, rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("fill in the body: %w", err)
	}
	doc, err := json.Marshal(map[string]any{"tenants": map[string]any{sampleTenant: map[string]any{name: p.Demo.Settings}}})
	if err != nil {
		return nil, err
	}
	ts, err := tenants.Parse(doc)
	if err != nil {
		return nil, fmt.Errorf("the provider's demo settings: %w", err)
	}
	tenant, ok := ts.Tenant(sampleTenant)
	if !ok {
		return nil, fmt.Errorf("tenant %q missing from its own document", sampleTenant)
	}
	req, err := signer.Sign(tenant, name, body, signer.Options{Now: now})
	if err != nil {
		return nil, fmt.Errorf("sign: %w", err)
	}
	s, _ := tenant.Settings(name)
	parser, err := s.Parser(provider.ParserOptions{})
	if err != nil {
		return nil, fmt.Errorf("parser: %w", err)
	}
	d, err := parser.Parse(context.Background(), &webhook.Request{Method: req.Method, Provider: name, Tenant: sampleTenant,
		Query: req.Query, Header: req.Header, Body: req.Body, Now: now})
	if err != nil {
		return nil, fmt.Errorf("parse: %w", err)
	}
	var found []string
	for _, ev := range d.Events {
		if ev.Type == typ {
			return ev.JSON, nil
		}
		found = append(found, ev.Type)
	}
	return nil, fmt.Errorf("the delivery carries no %s event (it carries %v)", typ, found)
}
