package intake

import (
	"fmt"

	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/config/tenants"
	"github.com/hookwall/hookwall/shared/protocol/provider"
	"github.com/hookwall/hookwall/shared/protocol/providers"
)

// Parsers holds one verified parser per (provider, tenant), built once per
// cold start from the tenants document. It is read-only after BuildParsers.
type Parsers struct {
	byProvider map[string]map[string]webhook.Parser
}

// ParserOptions tune every parser built by BuildParsers.
type ParserOptions = provider.ParserOptions

// BuildParsers builds the parser of every tenant and provider in tenants:
// for each provider of the registry a tenant configures, the parser its
// settings build.
func BuildParsers(tenants *tenants.Tenants, opts ParserOptions) (*Parsers, error) {
	all := providers.All()
	p := &Parsers{byProvider: make(map[string]map[string]webhook.Parser, len(all))}
	for _, pr := range all {
		p.byProvider[pr.Name] = map[string]webhook.Parser{}
	}
	for _, name := range tenants.Names() {
		t, _ := tenants.Tenant(name)
		for _, pr := range all {
			s, ok := t.Settings(pr.Name)
			if !ok {
				continue
			}
			parser, err := s.Parser(opts)
			if err != nil {
				return nil, fmt.Errorf("intake: tenant %q %s: %w", name, pr.Name, err)
			}
			p.byProvider[pr.Name][name] = parser
		}
	}
	return p, nil
}

// Lookup returns the parser for provider and tenant, or an error wrapping
// webhook.ErrUnknownProvider or webhook.ErrUnknownTenant.
func (p *Parsers) Lookup(provider, tenant string) (webhook.Parser, error) {
	byTenant, ok := p.byProvider[provider]
	if !ok {
		return nil, fmt.Errorf("intake: %w", webhook.ErrUnknownProvider)
	}
	parser, ok := byTenant[tenant]
	if !ok {
		return nil, fmt.Errorf("intake: %s: %w", provider, webhook.ErrUnknownTenant)
	}
	return parser, nil
}

// Set registers parser for provider and tenant (tests and custom wiring). It
// must not be called once the Handler serves requests.
func (p *Parsers) Set(provider, tenant string, parser webhook.Parser) {
	if p.byProvider == nil {
		p.byProvider = map[string]map[string]webhook.Parser{}
	}
	if p.byProvider[provider] == nil {
		p.byProvider[provider] = map[string]webhook.Parser{}
	}
	p.byProvider[provider][tenant] = parser
}
