package signer

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/config/tenants"
	"github.com/hookwall/hookwall/shared/protocol/provider"
	"github.com/hookwall/hookwall/shared/protocol/providers"
)

// ErrNotConfigured reports a tenant without the provider's settings, or a
// mode or handshake its settings cannot serve.
var ErrNotConfigured = provider.ErrNotConfigured

// ErrBadBody reports a body the provider's platform could not have sent
// (LINE and Standard Webhooks: not JSON; WeCom and WeChat: not message XML).
var ErrBadBody = provider.ErrBadBody

// Options tune Sign and Verification: the provider's sign options
// ([provider.SignOptions]: Mode, Now, Nonce, MessageID, Retry, Random).
// The zero value signs now, with fresh randomness (crypto/rand).
type Options = provider.SignOptions

// defaults returns o with its clock and randomness set.
func defaults(o Options) Options {
	if o.Now.IsZero() {
		o.Now = time.Now()
	}
	if o.Random == nil {
		o.Random = rand.Reader
	}
	return o
}

// Request is a signed request for the receiver.
type Request struct {
	// Method is POST, or GET for a URL verification.
	Method string
	// Provider and Tenant are the route's path parameters.
	Provider, Tenant string
	// Query is the query string's parameters (WeCom, WeChat).
	Query url.Values
	// Header holds the headers that matter (Content-Type and the signature).
	Header http.Header
	// Body is the exact body that was signed.
	Body []byte
	// Reply is the answer the platform expects to a URL-verification
	// handshake ([Verification]: the provider's
	// [provider.Handshaker.HandshakeReply]); nil for [Sign]'s requests.
	Reply *webhook.Reply
}

// Path returns the receiver route of the request: /webhooks/{provider}/{tenant}.
func (r *Request) Path() string {
	return "/webhooks/" + url.PathEscape(r.Provider) + "/" + url.PathEscape(r.Tenant)
}

// URL returns the request's URL at base: base's scheme and host, and its
// path if it already ends with the route (or else base's path followed by
// the route, so a stage prefix such as https://api.example.com/prod
// works), with the query.
func (r *Request) URL(base string) (string, error) {
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("signer: %q is not an absolute http(s) URL", base)
	}
	route := r.Path()
	if !strings.HasSuffix(strings.TrimSuffix(u.Path, "/"), route) {
		u.Path = strings.TrimSuffix(u.Path, "/") + route
		u.RawPath = ""
	}
	u.RawQuery = r.Query.Encode()
	u.Fragment = ""
	return u.String(), nil
}

// HTTPRequest returns the request for the receiver at base (see [Request.URL]).
func (r *Request) HTTPRequest(ctx context.Context, base string) (*http.Request, error) {
	target, err := r.URL(base)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, r.Method, target, bytes.NewReader(r.Body))
	if err != nil {
		return nil, fmt.Errorf("signer: %w", err)
	}
	for k, v := range r.Header {
		req.Header[k] = slices.Clone(v)
	}
	return req, nil
}

// Curl returns a POSIX shell command that sends the request to base with
// curl: every argument single-quoted, the body passed verbatim with
// --data-binary (no trailing newline is added, so the signature holds).
func (r *Request) Curl(base string) (string, error) {
	target, err := r.URL(base)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString("curl -sS -i -X " + r.Method + " " + shellQuote(target))
	keys := make([]string, 0, len(r.Header))
	for k := range r.Header {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		for _, v := range r.Header[k] {
			b.WriteString(" \\\n  -H " + shellQuote(k+": "+v))
		}
	}
	if len(r.Body) > 0 {
		b.WriteString(" \\\n  --data-binary " + shellQuote(string(r.Body)))
	}
	return b.String(), nil
}

// shellQuote quotes s for a POSIX shell: inside single quotes everything is
// literal, newlines included; a single quote is written as '\”.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// Providers returns the providers Sign knows (every registered one), in
// the order usage messages show them.
func Providers() []string { return providers.Names() }

// Sign returns the request t's platform would send for provider with body:
// the platform's body as it means it (a JSON request body for LINE,
// Standard Webhooks and Slack; the message XML for WeCom and WeChat),
// signed, and encrypted where the tenant's settings and opts.Mode say so,
// by the provider's settings ([provider.Settings.Sign]). Errors wrap
// [webhook.ErrUnknownProvider], [ErrNotConfigured] or [ErrBadBody].
func Sign(t *tenants.Tenant, name string, body []byte, opts Options) (*Request, error) {
	opts = defaults(opts)
	s, err := settings(t, name, opts)
	if err != nil {
		return nil, err
	}
	r, err := s.Sign(body, opts)
	if err != nil {
		return nil, signError(t, name, err)
	}
	return request(t, name, r), nil
}

// Verification returns the URL-verification handshake of provider for t,
// carrying echo (see [provider.Handshaker]): WeCom's GET with echo
// encrypted for the CorpID, WeChat's GET with echo itself, Slack's and
// Feishu's url_verification POST. The request's Reply is the answer the
// receiver must give: echo itself, or what the platform wants around it
// (Feishu: {"challenge": echo}). Errors wrap [webhook.ErrUnknownProvider]
// or [ErrNotConfigured] (also for a provider without a handshake).
func Verification(t *tenants.Tenant, name, echo string, opts Options) (*Request, error) {
	opts = defaults(opts)
	if echo == "" {
		return nil, errors.New("signer: empty echostr")
	}
	s, err := settings(t, name, opts)
	if err != nil {
		return nil, err
	}
	hs, ok := s.(provider.Handshaker)
	if !ok {
		return nil, fmt.Errorf("signer: %s has no GET URL verification (nor any handshake): %w", name, ErrNotConfigured)
	}
	r, err := hs.Handshake(echo, opts)
	if err != nil {
		return nil, signError(t, name, err)
	}
	req := request(t, name, r)
	reply := hs.HandshakeReply(echo)
	req.Reply = &reply
	return req, nil
}

// settings returns t's settings of the named provider, once the provider
// is known and opts.Mode is one of its modes.
func settings(t *tenants.Tenant, name string, opts Options) (provider.Settings, error) {
	p, ok := providers.Lookup(name)
	if !ok {
		return nil, fmt.Errorf("signer: provider %q: want one of %s: %w", name, strings.Join(Providers(), ", "), webhook.ErrUnknownProvider)
	}
	if opts.Mode != "" && len(p.Modes) == 0 {
		return nil, fmt.Errorf("signer: a mode applies to %s only, not %s: %w", strings.Join(ModeProviders(), ", "), name, ErrNotConfigured)
	}
	s, ok := t.Settings(name)
	if !ok {
		return nil, fmt.Errorf("signer: tenant %q has no %s settings in the tenants document: %w", t.Name, name, ErrNotConfigured)
	}
	return s, nil
}

// ModeProviders returns the providers that have signing modes (WeChat).
func ModeProviders() []string {
	var names []string
	for _, p := range providers.All() {
		if len(p.Modes) > 0 {
			names = append(names, p.Name)
		}
	}
	return names
}

// HandshakeProviders returns the providers with a URL-verification
// handshake, the ones [Verification] builds.
func HandshakeProviders() []string {
	var names []string
	for _, p := range providers.All() {
		if _, ok := p.NewSettings().(provider.Handshaker); ok {
			names = append(names, p.Name)
		}
	}
	return names
}

// signError wraps an error of the provider's signing: a bad body as the
// provider says it, anything else with the tenant and provider.
func signError(t *tenants.Tenant, name string, err error) error {
	if errors.Is(err, ErrBadBody) {
		return fmt.Errorf("signer: %w", err)
	}
	return fmt.Errorf("signer: tenant %q %s: %w", t.Name, name, err)
}

// request returns the provider's request r as one for t's route.
func request(t *tenants.Tenant, name string, r *provider.Request) *Request {
	return &Request{Method: r.Method, Provider: name, Tenant: t.Name, Query: r.Query, Header: r.Header, Body: r.Body}
}

// randomID returns 26 random characters of A–Z and 2–7 read from random.
func randomID(random io.Reader) (string, error) {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
	var b [26]byte
	if _, err := io.ReadFull(random, b[:]); err != nil {
		return "", fmt.Errorf("signer: random id: %w", err)
	}
	for i := range b {
		b[i] = alphabet[b[i]%32]
	}
	return string(b[:]), nil
}
