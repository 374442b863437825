package tenants

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"os"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/protocol/provider"
	"github.com/hookwall/hookwall/shared/protocol/provider/standard"
	"github.com/hookwall/hookwall/shared/protocol/providers"
)

// Secret is a secret string. It prints and logs as "REDACTED"; call Reveal
// where the secret is really needed. It is the providers' secret type.
type Secret = provider.Secret

// Forward is where the built-in forwarding handler POSTs the tenant's events,
// signed as Standard Webhooks with Secret when set.
type Forward struct {
	URL    string `json:"url"`
	Secret Secret `json:"secret,omitempty"`
}

// Tenant is one tenant's configuration: the settings of each provider it
// has a section for, and where its events are forwarded.
type Tenant struct {
	Name    string
	Forward *Forward
	// settings holds the tenant's section of each provider it configures,
	// by route name.
	settings map[string]provider.Settings
}

// NewTenant returns a tenant with settings, by provider name, for tests and
// custom wiring (a document goes through [Parse], which validates).
func NewTenant(name string, forward *Forward, settings map[string]provider.Settings) *Tenant {
	return &Tenant{Name: name, Forward: forward, settings: maps.Clone(settings)}
}

// Settings returns the tenant's settings of the named provider: its section
// of the tenants document, of the type the provider's NewSettings returns.
// ok is false when the tenant has no such section.
func (t *Tenant) Settings(provider string) (s provider.Settings, ok bool) {
	s, ok = t.settings[provider]
	return s, ok
}

// Providers returns the names of the providers the tenant configures, sorted.
func (t *Tenant) Providers() []string {
	return slices.Sorted(maps.Keys(t.settings))
}

// Tenants is the validated tenants document. It is read-only after Parse.
type Tenants struct {
	byName map[string]*Tenant
}

// Tenant returns the named tenant.
func (t *Tenants) Tenant(name string) (*Tenant, bool) {
	tn, ok := t.byName[name]
	return tn, ok
}

// Names returns the tenant names, sorted.
func (t *Tenants) Names() []string {
	names := make([]string, 0, len(t.byName))
	for n := range t.byName {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Parse decodes and validates a tenants document. Each tenant may hold a
// section per registered provider (keyed by its route name) and "forward";
// anything else is refused. Errors name the tenant and field at fault and
// never contain secret values.
func Parse(doc []byte) (*Tenants, error) {
	shape := documentShape()
	raw := reflect.New(shape.doc)
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.DisallowUnknownFields()
	if err := dec.Decode(raw.Interface()); err != nil {
		return nil, fmt.Errorf("tenants: tenants document: %w", sanitize(err))
	}
	byName := raw.Elem().Field(0)
	if byName.IsNil() {
		return nil, errors.New(`tenants: tenants document: missing "tenants" object`)
	}
	out := make(map[string]*Tenant, byName.Len())
	var errs []error
	for it := byName.MapRange(); it.Next(); {
		name, v := it.Key().String(), it.Value()
		if !webhook.ValidTenant(name) {
			errs = append(errs, fmt.Errorf("tenant %q: name must match ^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$ (%s)", name, webhook.TenantNameRule))
			continue
		}
		if v.IsNil() {
			errs = append(errs, fmt.Errorf("tenant %q: null", name))
			continue
		}
		t := &Tenant{Name: name, settings: map[string]provider.Settings{}}
		fields := v.Elem()
		for i, p := range shape.providers {
			if f := fields.Field(i); !f.IsNil() {
				t.settings[p.Name] = f.Interface().(provider.Settings)
			}
		}
		t.Forward = fields.Field(len(shape.providers)).Interface().(*Forward)
		out[name] = t
		errs = append(errs, t.validate(shape.providers)...)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("tenants: tenants document: %w", err)
	}
	return &Tenants{byName: out}, nil
}

// shape is the Go type the tenants document decodes into: a struct with a
// "tenants" map of tenant structs holding one pointer field per provider,
// in providers' order, then "forward".
type shape struct {
	doc       reflect.Type
	providers []*provider.Provider
}

// documentShape builds the document's type from the registry, once.
var documentShape = sync.OnceValue(func() shape {
	all := providers.All()
	fields := make([]reflect.StructField, 0, len(all)+1)
	for i, p := range all {
		fields = append(fields, reflect.StructField{
			Name: fmt.Sprintf("P%d", i),
			Type: reflect.TypeOf(p.NewSettings()),
			Tag:  reflect.StructTag(`json:"` + p.Name + `,omitempty"`),
		})
	}
	fields = append(fields, reflect.StructField{Name: "Forward", Type: reflect.TypeFor[*Forward](), Tag: `json:"forward,omitempty"`})
	tenant := reflect.StructOf(fields)
	doc := reflect.StructOf([]reflect.StructField{{
		Name: "Tenants", Type: reflect.MapOf(reflect.TypeFor[string](), reflect.PointerTo(tenant)), Tag: `json:"tenants"`,
	}})
	return shape{doc: doc, providers: all}
})

func (t *Tenant) validate(all []*provider.Provider) []error {
	var errs []error
	bad := func(field, why string) { errs = append(errs, fmt.Errorf("tenant %q: %s: %s", t.Name, field, why)) }
	if len(t.settings) == 0 {
		bad("providers", "none configured")
	}
	for _, p := range all {
		s, ok := t.settings[p.Name]
		if !ok {
			continue
		}
		for _, pr := range s.Validate() {
			field := p.Name
			if pr.Field != "" {
				field += "." + pr.Field
			}
			bad(field, pr.Why)
		}
	}
	if f := t.Forward; f != nil {
		u, err := url.Parse(f.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			bad("forward.url", "must be an absolute http(s) URL")
		}
		if f.Secret != "" {
			if _, err := standard.DecodeSecret(f.Secret.Reveal()); err != nil {
				bad("forward.secret", `must be Base64 ("whsec_" prefix optional)`)
			}
		}
	}
	return errs
}

// sanitize keeps JSON syntax errors but drops any echo of document content.
func sanitize(err error) error {
	var syn *json.SyntaxError
	if errors.As(err, &syn) {
		return fmt.Errorf("invalid JSON at byte %d", syn.Offset)
	}
	var typ *json.UnmarshalTypeError
	if errors.As(err, &typ) {
		return fmt.Errorf("field %s: wrong type %s", typ.Field, typ.Value)
	}
	if strings.HasPrefix(err.Error(), "json: unknown field") {
		return errors.New(strings.TrimPrefix(err.Error(), "json: "))
	}
	return errors.New("invalid document")
}

// LoadFile reads and parses the tenants document at path.
func LoadFile(path string) (*Tenants, error) {
	doc, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("tenants: read tenants file: %w", err)
	}
	return Parse(doc)
}

// SecretGetter fetches a secret's string value (Secrets Manager's
// GetSecretValue, or a fake in tests).
type SecretGetter interface {
	GetSecretString(ctx context.Context, arn string) (string, error)
}

// Source says where the tenants document is: exactly one of File or SecretARN.
type Source struct {
	File      string
	SecretARN string
	Secrets   SecretGetter // required with SecretARN
}

// Load reads the tenants document from src.
func Load(ctx context.Context, src Source) (*Tenants, error) {
	switch {
	case src.File != "" && src.SecretARN != "":
		return nil, errors.New("tenants: set either HOOKWALL_TENANTS_FILE or TENANTS_SECRET_ARN, not both")
	case src.File != "":
		return LoadFile(src.File)
	case src.SecretARN != "":
		if src.Secrets == nil {
			return nil, errors.New("tenants: no Secrets Manager client for TENANTS_SECRET_ARN")
		}
		doc, err := src.Secrets.GetSecretString(ctx, src.SecretARN)
		if err != nil {
			return nil, fmt.Errorf("tenants: read tenants secret: %w", err)
		}
		return Parse([]byte(doc))
	default:
		return nil, errors.New("tenants: no tenants document: set HOOKWALL_TENANTS_FILE (local) or TENANTS_SECRET_ARN (AWS)")
	}
}
