package provider

import (
	"encoding/json"
	"errors"
	"log/slog"
)

// Secret is a secret string of a tenants document. It prints and logs as
// "REDACTED"; call Reveal where the secret is really needed.
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
