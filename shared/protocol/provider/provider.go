package provider

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"time"

	"github.com/hookwall/hookwall/shared/base/webhook"
)

// Provider is one webhook platform, as its package registers it.
type Provider struct {
	// Name is the route name: the {provider} segment of
	// /webhooks/{provider}/{tenant}, the key of the provider's section in
	// each tenant of the tenants document, and the first part of its event
	// keys (provider#tenant#dedupKey). Lower case letters and digits.
	// Required; a stored key depends on it, so it never changes.
	Name string
	// Label is the platform's name for people ("LINE", "Standard Webhooks"). Required.
	Label string
	// Docs is the URL of the platform's webhook documentation the package
	// follows. Required.
	Docs string
	// Signature says in one line how a delivery is signed, for `hookwall
	// sign --help` ("X-Line-Signature over the JSON body"). Optional (the
	// help falls back to Label); a "\n" starts a continuation line.
	Signature string
	// NewSettings returns a new, empty tenant section (a pointer to a struct
	// with JSON tags): the tenants loader decodes a tenant's
	// "<Name>": {...} object into it, refusing unknown fields, and then
	// calls its Validate. The tenant-secret schema. [New] sets it from
	// its type argument; leave it nil.
	NewSettings func() Settings
	// DedupKey says, in words, which part of a delivery is the dedup key of
	// its events ("the event's webhookEventId"). The parser applies the
	// rule; this is its documentation for the CLI, the docs and reviewers.
	// Required.
	DedupKey string
	// Reply is the success answer the platform expects for a delivery whose
	// events are all handed off (a URL-verification handshake is answered
	// with what its parser returns). The parser returns it; tests check
	// that it does. Status is required.
	Reply webhook.Reply
	// AnswerWithin is how long the platform waits for the answer before it
	// counts the delivery as failed and retries. Required; the receiver's
	// budget must fit in it (a test checks every provider).
	AnswerWithin time.Duration
	// Modes are the signing variants [SignOptions.Mode] may name (WeChat:
	// safe, compat, plain); empty when the platform has one way to send.
	Modes []string
	// Demo describes made-up events for `make run`, hookwall-storm and
	// tests. Required.
	Demo Demo
}

// Settings is one tenant's configuration of one provider: the value
// [Provider.NewSettings] returns, filled from the tenant's section of the
// tenants document. Implementations keep secrets in [Secret] fields, so
// they never print.
type Settings interface {
	// Validate returns the section's problems; none means usable. Each
	// names the field as written in the document, relative to the section
	// ("channelSecret", "secrets[0]"); the loader reports it as
	// `tenant "acme": <provider>.<field>: <why>`. Never include a secret.
	Validate() []Problem
	// Parser returns the verifying parser of the tenant's deliveries. It is
	// called once per cold start, after Validate found no problem.
	Parser(opts ParserOptions) (webhook.Parser, error)
	// Sign returns the request the platform would send for body (the
	// platform's body before any encryption: the JSON it posts, or the
	// message XML), signed (and encrypted) with these settings. Errors
	// wrap [ErrBadBody] for a body the platform could not have sent and
	// [ErrNotConfigured] for a mode these settings cannot use.
	Sign(body []byte, opts SignOptions) (*Request, error)
}

// Handshaker is implemented by the [Settings] of a platform with a
// URL-verification handshake of its own (WeCom's and WeChat's GET with an
// echostr, Slack's and Feishu's url_verification POST).
type Handshaker interface {
	// Handshake returns the request the platform sends to check the
	// endpoint, carrying challenge.
	Handshake(challenge string, opts SignOptions) (*Request, error)
	// HandshakeReply returns the answer the platform expects to the
	// handshake carrying challenge: the challenge itself ([webhook.EchoReply]) for
	// WeCom, WeChat and Slack, {"challenge":"..."} for Feishu. The parser
	// answers a handshake with it, and the conformance test and the signer
	// compare the receiver's answer with it (status, body, and content type
	// where set).
	HandshakeReply(challenge string) webhook.Reply
}

// SignJSON returns s.Sign of the JSON of v: the handshake of a platform
// whose URL verification is a JSON POST signed like any delivery (Slack's
// and Feishu's url_verification).
func SignJSON(s Settings, v any, opts SignOptions) (*Request, error) {
	body, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadBody, err)
	}
	return s.Sign(body, opts)
}

// Problem is one thing wrong in a tenant's section of the tenants document.
type Problem struct {
	// Field is the field at fault, relative to the section ("token",
	// "secrets[0]"); "" for the section as a whole.
	Field string
	// Why says what is wrong, without the value ("required").
	Why string
}

// Problems collects a section's problems in the order they are found, for
// [Settings.Validate] to return (nil when there are none).
type Problems []Problem

// Add records that field is wrong, for why.
func (ps *Problems) Add(field, why string) {
	*ps = append(*ps, Problem{Field: field, Why: why})
}

// Require records that field is required when its value is empty.
func (ps *Problems) Require(field, value string) {
	if value == "" {
		ps.Add(field, "required")
	}
}

// ParserOptions tune every parser the receiver builds.
type ParserOptions struct {
	// Tolerance is the accepted distance between a signed timestamp and now.
	// Zero means the provider's default (five minutes for every provider
	// today); negative disables the check where the platform allows it.
	Tolerance time.Duration
}

// SignOptions tune [Settings.Sign] and [Handshaker.Handshake]. Fields a
// provider does not use are ignored.
type SignOptions struct {
	// Mode is one of [Provider.Modes] ("": the provider's default).
	Mode string
	// Now is the signing time. The caller sets it.
	Now time.Time
	// Nonce is the nonce of providers that sign one ("": random).
	Nonce string
	// MessageID is the delivery id of providers that carry one outside the
	// body (Standard Webhooks' webhook-id; "": random).
	MessageID string
	// Retry is the delivery attempt: 0 for the first, n for the n-th retry,
	// for providers that mark retries in headers (Slack's X-Slack-Retry-Num).
	Retry int
	// Random is the source of nonces, ids and encryption prefixes. The
	// caller sets it (crypto/rand.Reader, or a fixed reader in tests).
	Random io.Reader
}

// Request is a signed request as the platform would send it to the route
// /webhooks/{provider}/{tenant}.
type Request struct {
	// Method is POST, or GET for a handshake that is one.
	Method string
	// Query holds the query parameters (never nil).
	Query url.Values
	// Header holds the headers that matter: Content-Type and the signature
	// (never nil).
	Header http.Header
	// Body is the exact body that was signed.
	Body []byte
}

// NewRequest returns an empty request with method.
func NewRequest(method string) *Request {
	return &Request{Method: method, Query: url.Values{}, Header: http.Header{}}
}

// Demo describes the made-up events of a provider: what `make run` offers
// to send, what hookwall-storm sends in bulk, what tests build.
type Demo struct {
	// Settings is the demo tenant's section: a value that marshals to the
	// JSON of the section in the tenants document (made-up secrets that
	// pass Validate). Secret fields marshal as "REDACTED", so use plain
	// strings (a map or a struct of strings).
	Settings any
	// ID returns an event id in the platform's format, different for each
	// (tag, n): tag is 1 to 16 lower-case letters and digits. It need not be
	// random; callers that want a new event pass a random tag.
	ID func(tag string, n uint64) string
	// Body returns the platform's body of a delivery carrying the events
	// ids (one unless MultiEvent), that happened at at. The same arguments
	// give the same body. retry marks the delivery as a retry where the
	// platform marks it in the body (LINE's isRedelivery); it must not
	// change the events' payload hashes.
	Body func(ids []string, at time.Time, retry bool) []byte
	// Key returns the dedup key the receiver derives for the event id of a
	// Body. Optional: nil means the id itself, and [New] sets it so.
	Key func(id string) string
	// MultiEvent says one delivery may carry several events.
	MultiEvent bool
	// Retry is the platform's retry schedule, for hookwall-storm.
	Retry Retry
}

// Retry is how a platform retries a delivery that was not answered 2xx
// within [Provider.AnswerWithin].
type Retry struct {
	// Policy names the schedule in reports ("3 retries in 5s").
	Policy string
	// Waits are the waits before each retry, in order, compressed to
	// seconds where the platform's are minutes, so a storm converges.
	Waits []time.Duration
	// Marked says a retry is marked as one (in the body, see [Demo.Body],
	// or in headers, see [SignOptions.Retry]).
	Marked bool
}

// Errors of [Settings.Sign] and [Handshaker.Handshake].
var (
	// ErrBadBody: the body is not one the platform could have sent.
	ErrBadBody = errors.New("bad body")
	// ErrNotConfigured: the tenant lacks the provider's settings, or its
	// settings cannot serve the requested mode or handshake.
	ErrNotConfigured = errors.New("not configured for this tenant")
)

var nameRule = regexp.MustCompile(`^[a-z][a-z0-9]{0,31}$`)

// reserved are the names a provider cannot take: the tenants document's
// other keys of a tenant.
var reserved = []string{"forward"}

// New returns p with S as its tenant section: p's NewSettings returns a
// new(S) (so *S implements [Settings]), and a nil Demo.Key the id itself.
// A provider package's Provider function returns
// provider.New[Settings](provider.Provider{...}); the list package
// shared/protocol/providers names it. It panics (a programmer's error, found by any
// test that imports shared/protocol/providers) if p lacks a required field or sets
// NewSettings.
func New[S any, PS interface {
	*S
	Settings
}](p Provider) *Provider {
	if p.NewSettings != nil {
		panic(fmt.Sprintf("provider: new %q: NewSettings is set by New", p.Name))
	}
	p.NewSettings = func() Settings { return PS(new(S)) }
	if p.Demo.Key == nil {
		p.Demo.Key = func(id string) string { return id }
	}
	if err := p.check(); err != nil {
		panic(fmt.Sprintf("provider: new %q: %v", p.Name, err))
	}
	p.Modes = slices.Clone(p.Modes)
	return &p
}

// List is a set of providers by route name (shared/protocol/providers holds the
// one Hookwall serves).
type List struct {
	byName map[string]*Provider
	sorted []*Provider
}

// NewList returns the list of ps, sorted by name. It panics (a
// programmer's error) if two share a name.
func NewList(ps ...*Provider) *List {
	l := &List{byName: make(map[string]*Provider, len(ps))}
	for _, p := range ps {
		if _, dup := l.byName[p.Name]; dup {
			panic(fmt.Sprintf("provider: list: name %q taken", p.Name))
		}
		l.byName[p.Name] = p
		l.sorted = append(l.sorted, p)
	}
	slices.SortFunc(l.sorted, func(a, b *Provider) int { return cmp.Compare(a.Name, b.Name) })
	return l
}

// Lookup returns the provider of l named name.
func (l *List) Lookup(name string) (*Provider, bool) {
	p, ok := l.byName[name]
	return p, ok
}

// All returns l's providers, sorted by name. The caller must not modify
// them.
func (l *List) All() []*Provider { return slices.Clone(l.sorted) }

// Names returns l's route names, sorted.
func (l *List) Names() []string {
	names := make([]string, len(l.sorted))
	for i, p := range l.sorted {
		names[i] = p.Name
	}
	return names
}

// check reports the first required field p lacks.
func (p *Provider) check() error {
	d := p.Demo
	switch {
	case !nameRule.MatchString(p.Name):
		return errors.New("Name must match " + nameRule.String())
	case slices.Contains(reserved, p.Name):
		return errors.New("Name is reserved: " + p.Name)
	case p.Label == "", p.Docs == "", p.DedupKey == "":
		return errors.New("Label, Docs and DedupKey are required")
	case p.Reply.Status == 0:
		return errors.New("Reply.Status is required")
	case p.AnswerWithin <= 0:
		return errors.New("AnswerWithin is required")
	case d.Settings == nil || d.ID == nil || d.Body == nil:
		return errors.New("Demo.Settings, ID and Body are required")
	}
	return nil
}
