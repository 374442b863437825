// Package setting is the one record of a team's handler setting: the
// declaration a team package writes and lists in its platform.Team, which the
// processor and the compensator read at their cold start, `make generate`
// writes into template.yaml and the README, and the runtime records and the
// IAM inventory name a team's resource by. It imports nothing of Hookwall's,
// so that the generator reads declarations without the engines.
package setting

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// Kind is the type of a setting's value.
type Kind string

// The kinds of handler settings.
const (
	KindString   Kind = "string"
	KindURL      Kind = "URL"
	KindDuration Kind = "duration"
	KindInt      Kind = "int"
)

// Setting declares one setting of a team's handlers: an environment
// variable of the processor and the compensator. A team package declares
// it as a value and lists it in its platform.Team's Settings; the
// declaration is the only place a setting is written by hand.
type Setting struct {
	// Name is the environment variable: A-Z, 0-9 and _, not starting with
	// HOOKWALL_ or AWS_ (the platform's). Two teams cannot share a name
	// unless they declare it identically.
	Name string
	// Kind is the type of its value: [KindString], [KindURL],
	// [KindDuration] or [KindInt] (required); the team reads it with the
	// getter of its kind.
	Kind Kind
	// Default is the value when the variable is unset or empty (optional;
	// it must be valid).
	Default string
	// Doc is one line for the README's table and the template's parameter.
	Doc string
	// Pattern, if set, is a regular expression the whole value must match;
	// it is the template parameter's AllowedPattern too (optional).
	Pattern string
	// Example is a valid value the README's table shows and the test that
	// registers every team uses (optional; default: Default, else one made
	// up from the kind, see [Setting.Sample]).
	Example string
	// Check, if set, validates a value further; its error is reported with
	// the variable's name (optional).
	Check func(value string) error
	// Grants, if set, says that the value names an AWS resource the team's
	// code calls, and lists the IAM actions it calls there: `make generate`
	// grants exactly those, on that resource only, to the processor's and
	// the compensator's roles when the template parameter is set. The
	// service of the actions says how the value names the resource:
	// dynamodb: a table's name, sqs: a queue's name, any other service: the
	// resource's ARN (optional).
	//
	//	Grants: []string{"dynamodb:GetItem", "dynamodb:UpdateItem"}
	Grants []string
	// Owner is the package that declares it, e.g.
	// functions/processor/handlers/crm: the team's platform.Team.Owner,
	// filled in when the teams' settings are listed (a team leaves it
	// empty).
	Owner string
}

// KindPattern is the template's AllowedPattern of a kind's values, for a
// declaration without a Pattern of its own ("" for an unknown kind). A
// string holds no white space unless its declaration's Pattern allows it.
func KindPattern(k Kind) string {
	switch k {
	case KindURL:
		return `https?://[^\s]+`
	case KindDuration:
		return `([0-9]+(\.[0-9]+)?(ns|us|ms|s|m|h))+`
	case KindInt:
		return `-?[0-9]+`
	case KindString:
		return `[^\s]+`
	}
	return ""
}

// AllowedPattern is the regular expression a whole value of s matches:
// its Pattern, else its kind's ([KindPattern]).
func (s Setting) AllowedPattern() string {
	if s.Pattern != "" {
		return s.Pattern
	}
	return KindPattern(s.Kind)
}

var envName = regexp.MustCompile(`^[A-Z][A-Z0-9_]*$`)

// Validate reports a malformed declaration: a bad name, no one-line doc,
// an unknown kind, malformed grants, an invalid pattern, default or
// example.
func (s Setting) Validate() error {
	switch {
	case !envName.MatchString(s.Name):
		return fmt.Errorf("setting %q: the name must be an environment variable name (A-Z, 0-9, _)", s.Name)
	case strings.HasPrefix(s.Name, "HOOKWALL_") || strings.HasPrefix(s.Name, "AWS_"):
		return fmt.Errorf("setting %s: HOOKWALL_ and AWS_ names are the platform's", s.Name)
	case s.Doc == "" || strings.ContainsAny(s.Doc, "\n|"):
		return fmt.Errorf("setting %s: needs a one-line Doc (no '|')", s.Name)
	case KindPattern(s.Kind) == "":
		return fmt.Errorf("setting %s: unknown kind %q (want string, URL, duration or int)", s.Name, s.Kind)
	}
	if err := checkGrants(s.Name, s.Grants); err != nil {
		return err
	}
	if s.Pattern != "" {
		if _, err := regexp.Compile(s.Pattern); err != nil {
			return fmt.Errorf("setting %s: Pattern: %w", s.Name, err)
		}
	}
	for _, v := range [][2]string{{"default", s.Default}, {"example", s.Example}} {
		if v[1] != "" {
			if err := s.CheckValue(v[1]); err != nil {
				return fmt.Errorf("setting %s: invalid %s: %w", s.Name, v[0], err)
			}
		}
	}
	return nil
}

// Same reports whether s and o are the same declaration: every field but
// Owner and Check equal.
func (s Setting) Same(o Setting) bool {
	return s.Name == o.Name && s.Kind == o.Kind && s.Default == o.Default && s.Doc == o.Doc &&
		s.Pattern == o.Pattern && s.Example == o.Example && slices.Equal(s.Grants, o.Grants)
}

// CheckValue reports a value s does not accept, naming the variable (never
// showing a URL's value, which may carry a token).
func (s Setting) CheckValue(v string) error {
	quoted := strconv.Quote(v)
	switch s.Kind {
	case KindURL:
		quoted = "" // a URL may carry a token: never in a log
		if u, err := url.Parse(v); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("%s: want an absolute http(s) URL", s.Name)
		}
	case KindDuration:
		if _, err := time.ParseDuration(v); err != nil {
			return fmt.Errorf("%s=%s: want a Go duration such as \"30s\"", s.Name, quoted)
		}
	case KindInt:
		if _, err := strconv.Atoi(v); err != nil {
			return fmt.Errorf("%s=%s: want an integer", s.Name, quoted)
		}
	case KindString:
		if s.Pattern == "" && strings.IndexFunc(v, unicode.IsSpace) >= 0 {
			return fmt.Errorf("%s=%s: contains white space", s.Name, quoted)
		}
	}
	name := s.Name
	if quoted != "" {
		name += "=" + quoted
	}
	if s.Pattern != "" {
		re, err := regexp.Compile(`^(?:` + s.Pattern + `)$`)
		if err != nil {
			return fmt.Errorf("%s: Pattern: %w", s.Name, err)
		}
		if !re.MatchString(v) {
			return fmt.Errorf("%s: want a value matching %s", name, s.Pattern)
		}
	}
	if s.Check != nil {
		if err := s.Check(v); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	return nil
}

// Sample returns a valid value of s: its example, else its default, else
// one made up from its kind.
func (s Setting) Sample() string {
	switch {
	case s.Example != "":
		return s.Example
	case s.Default != "":
		return s.Default
	}
	switch s.Kind {
	case KindURL:
		return "https://example.test/" + strings.ToLower(strings.ReplaceAll(s.Name, "_", "-"))
	case KindDuration:
		return "1s"
	case KindInt:
		return "1"
	}
	return "example"
}

// Values returns the value of each setting as getenv (nil: os.Getenv)
// gives it, or its default when unset or empty, by name. The error names every invalid
// value, one error each, joined; an invalid value is also replaced by the
// default in the map.
func Values(settings []Setting, getenv func(string) string) (map[string]string, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	values := make(map[string]string, len(settings))
	var errs []error
	for _, s := range settings {
		v := getenv(s.Name)
		if v == "" {
			v = s.Default
		} else if err := s.CheckValue(v); err != nil {
			errs = append(errs, err)
			v = s.Default
		}
		values[s.Name] = v
	}
	if len(errs) > 0 {
		return values, fmt.Errorf("handler settings: %w", errors.Join(errs...))
	}
	return values, nil
}

// ParameterName is the template parameter `make generate` gives the
// handler setting name (CRM_LEADS_URL → CrmLeadsUrl): the logical name of
// the resource a setting names, as iam/README.md calls a team's resource
// (APPROVALS_TABLE → ApprovalsTable).
func ParameterName(name string) string {
	var b strings.Builder
	for _, part := range strings.Split(name, "_") {
		if part == "" {
			continue
		}
		b.WriteString(part[:1])
		b.WriteString(strings.ToLower(part[1:]))
	}
	return b.String()
}
