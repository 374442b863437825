package intake

import (
	"fmt"
	"time"

	"github.com/hookwall/hookwall/shared/provider/line"
	"github.com/hookwall/hookwall/shared/provider/standard"
	"github.com/hookwall/hookwall/shared/provider/wechat"
	"github.com/hookwall/hookwall/shared/provider/wecom"
	"github.com/hookwall/hookwall/shared/tenants"
	"github.com/hookwall/hookwall/shared/webhook"
)

// Parsers holds one verified parser per (provider, tenant), built once per
// cold start from the tenants document. It is read-only after BuildParsers.
type Parsers struct {
	byProvider map[string]map[string]webhook.Parser
}

// ParserOptions tune every parser built by BuildParsers.
type ParserOptions struct {
	// Tolerance is the accepted distance between a signed timestamp and now
	// (WeCom, WeChat, Standard Webhooks). Zero means the default, 300 s;
	// negative disables the check where the provider allows it.
	Tolerance time.Duration
}

// BuildParsers builds the parsers of every tenant and provider in tenants.
func BuildParsers(tenants *tenants.Tenants, opts ParserOptions) (*Parsers, error) {
	p := &Parsers{byProvider: map[string]map[string]webhook.Parser{
		webhook.LINE: {}, webhook.WeCom: {}, webhook.WeChat: {}, webhook.Standard: {},
	}}
	for _, name := range tenants.Names() {
		t, _ := tenants.Tenant(name)
		if c := t.LINE; c != nil {
			lp, err := line.New(line.Config{ChannelSecret: c.ChannelSecret.Reveal()})
			if err != nil {
				return nil, fmt.Errorf("intake: tenant %q line: %w", name, err)
			}
			p.byProvider[webhook.LINE][name] = lp
		}
		if c := t.WeCom; c != nil {
			wp, err := wecom.New(wecom.Config{
				Token: c.Token.Reveal(), EncodingAESKey: c.EncodingAESKey.Reveal(), CorpID: c.CorpID,
				Tolerance: opts.Tolerance,
			})
			if err != nil {
				return nil, fmt.Errorf("intake: tenant %q wecom: %w", name, err)
			}
			p.byProvider[webhook.WeCom][name] = wp
		}
		if c := t.WeChat; c != nil {
			wp, err := wechat.New(wechat.Config{
				Token: c.Token.Reveal(), AppID: c.AppID, EncodingAESKey: c.EncodingAESKey.Reveal(),
				Tolerance: opts.Tolerance,
			})
			if err != nil {
				return nil, fmt.Errorf("intake: tenant %q wechat: %w", name, err)
			}
			p.byProvider[webhook.WeChat][name] = wp
		}
		if c := t.Standard; c != nil {
			secrets := make([]string, len(c.Secrets))
			for i, s := range c.Secrets {
				secrets[i] = s.Reveal()
			}
			// Standard Webhooks always checks its timestamp (the spec's replay defence).
			raw := make([][]byte, len(c.RawSecrets))
			for i, s := range c.RawSecrets {
				raw[i] = []byte(s.Reveal())
			}
			sp, err := standard.New(standard.Config{Secrets: secrets, RawSecrets: raw, Tolerance: max(opts.Tolerance, 0)})
			if err != nil {
				return nil, fmt.Errorf("intake: tenant %q standard: %w", name, err)
			}
			p.byProvider[webhook.Standard][name] = sp
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
