package tenants

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"sort"
	"strings"

	"github.com/hookwall/hookwall/shared/webhook"
)

// Secret is a secret string. It prints and logs as "REDACTED"; call Reveal
// where the secret is really needed.
type Secret string

// Reveal returns the secret itself.
func (s Secret) Reveal() string { return string(s) }

// String hides the secret.
func (s Secret) String() string { return "REDACTED" }

// GoString hides the secret from %#v.
func (s Secret) GoString() string { return `"REDACTED"` }

// LogValue hides the secret from slog.
func (s Secret) LogValue() slog.Value { return slog.StringValue("REDACTED") }

// MarshalJSON hides the secret from JSON output.
func (s Secret) MarshalJSON() ([]byte, error) { return []byte(`"REDACTED"`), nil }

// UnmarshalJSON reads the secret from the document.
func (s *Secret) UnmarshalJSON(b []byte) error {
	var v string
	if err := json.Unmarshal(b, &v); err != nil {
		return errors.New("secret must be a string")
	}
	*s = Secret(v)
	return nil
}

// LINE holds a tenant's LINE channel settings.
type LINE struct {
	ChannelSecret Secret `json:"channelSecret"`
}

// WeCom holds a tenant's WeCom callback settings.
type WeCom struct {
	Token          Secret `json:"token"`
	EncodingAESKey Secret `json:"encodingAESKey"`
	CorpID         string `json:"corpId"`
}

// WeChat holds a tenant's WeChat Official Account settings. An empty
// EncodingAESKey means plaintext mode.
type WeChat struct {
	Token          Secret `json:"token"`
	AppID          string `json:"appId"`
	EncodingAESKey Secret `json:"encodingAESKey"`
}

// Standard holds a tenant's Standard Webhooks secrets (several during a
// rotation; any may match). Secrets are Base64, with or without the
// "whsec_" prefix, padding optional, whitespace ignored: every form the
// reference libraries (standard-webhooks, svix) read. RawSecrets are keys
// used as they are (their UTF-8 bytes), as the libraries' raw constructors take.
type Standard struct {
	Secrets    []Secret `json:"secrets,omitempty"`
	RawSecrets []Secret `json:"rawSecrets,omitempty"`
}

// Forward is where the built-in forwarding handler POSTs the tenant's events,
// signed as Standard Webhooks with Secret when set.
type Forward struct {
	URL    string `json:"url"`
	Secret Secret `json:"secret,omitempty"`
}

// Tenant is one tenant's configuration; a nil provider is not configured.
type Tenant struct {
	Name     string    `json:"-"`
	LINE     *LINE     `json:"line,omitempty"`
	WeCom    *WeCom    `json:"wecom,omitempty"`
	WeChat   *WeChat   `json:"wechat,omitempty"`
	Standard *Standard `json:"standard,omitempty"`
	Forward  *Forward  `json:"forward,omitempty"`
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

// Parse decodes and validates a tenants document. Errors name the tenant and
// field at fault and never contain secret values.
func Parse(doc []byte) (*Tenants, error) {
	var raw struct {
		Tenants map[string]*Tenant `json:"tenants"`
	}
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&raw); err != nil {
		return nil, fmt.Errorf("tenants: tenants document: %w", sanitize(err))
	}
	if raw.Tenants == nil {
		return nil, errors.New(`tenants: tenants document: missing "tenants" object`)
	}
	var errs []error
	for name, t := range raw.Tenants {
		if !webhook.ValidTenant(name) {
			errs = append(errs, fmt.Errorf("tenant %q: name must match ^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$ (%s)", name, webhook.TenantNameRule))
			continue
		}
		if t == nil {
			errs = append(errs, fmt.Errorf("tenant %q: null", name))
			continue
		}
		t.Name = name
		errs = append(errs, t.validate()...)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("tenants: tenants document: %w", err)
	}
	return &Tenants{byName: raw.Tenants}, nil
}

func (t *Tenant) validate() []error {
	var errs []error
	bad := func(field, why string) { errs = append(errs, fmt.Errorf("tenant %q: %s: %s", t.Name, field, why)) }
	if t.LINE == nil && t.WeCom == nil && t.WeChat == nil && t.Standard == nil {
		bad("providers", "none configured")
	}
	if l := t.LINE; l != nil && l.ChannelSecret == "" {
		bad("line.channelSecret", "required")
	}
	if w := t.WeCom; w != nil {
		if w.Token == "" {
			bad("wecom.token", "required")
		}
		if !validAESKey(w.EncodingAESKey) {
			bad("wecom.encodingAESKey", "must be 43 characters of base64")
		}
		if w.CorpID == "" {
			bad("wecom.corpId", "required")
		}
	}
	if w := t.WeChat; w != nil {
		if w.Token == "" {
			bad("wechat.token", "required")
		}
		if w.AppID == "" {
			bad("wechat.appId", "required")
		}
		if w.EncodingAESKey != "" && !validAESKey(w.EncodingAESKey) {
			bad("wechat.encodingAESKey", "must be 43 characters of base64 (or absent for plaintext mode)")
		}
	}
	if s := t.Standard; s != nil {
		if len(s.Secrets) == 0 && len(s.RawSecrets) == 0 {
			bad("standard.secrets", "at least one secret (or rawSecrets entry) required")
		}
		for i, sec := range s.Secrets {
			if !validWhsec(sec) {
				bad(fmt.Sprintf("standard.secrets[%d]", i), `must be Base64 ("whsec_" prefix optional)`)
			}
		}
		for i, sec := range s.RawSecrets {
			if sec == "" {
				bad(fmt.Sprintf("standard.rawSecrets[%d]", i), "must not be empty")
			}
		}
	}
	if f := t.Forward; f != nil {
		u, err := url.Parse(f.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			bad("forward.url", "must be an absolute http(s) URL")
		}
		if f.Secret != "" && !validWhsec(f.Secret) {
			bad("forward.secret", `must be Base64 ("whsec_" prefix optional)`)
		}
	}
	return errs
}

func validAESKey(k Secret) bool {
	if len(k) != 43 {
		return false
	}
	b, err := base64.StdEncoding.DecodeString(string(k) + "=")
	return err == nil && len(b) == 32
}

// validWhsec accepts what standard.DecodeSecret decodes (the reference
// libraries' forms): Base64 with or without "whsec_", padding optional,
// whitespace ignored. tenants cannot import the provider, so the rule is
// repeated here; TestSecretFormsMatchTheProvider keeps the two together.
func validWhsec(s Secret) bool {
	b64 := strings.Map(func(r rune) rune {
		switch r {
		case ' ', '\t', '\r', '\n':
			return -1
		}
		return r
	}, string(s))
	b64 = strings.TrimPrefix(b64, "whsec_")
	b, err := base64.RawStdEncoding.DecodeString(strings.TrimRight(b64, "="))
	return err == nil && len(b) > 0
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
