package registry

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// Kind is the type of a handler setting's value.
type Kind string

// The kinds of handler settings.
const (
	KindString   Kind = "string"
	KindURL      Kind = "URL"
	KindDuration Kind = "duration"
	KindInt      Kind = "int"
)

// Decl is one handler setting as a team declares it: an environment
// variable of the processor and the compensator.
type Decl struct {
	// Name is the environment variable.
	Name string
	// Kind is the type of its value.
	Kind Kind
	// Default is the value when the variable is unset or empty.
	Default string
	// Doc is the one-line description the template and the README show.
	Doc string
	// Pattern, if set, is a regular expression the whole value must match
	// (besides the kind's own check); the template's AllowedPattern.
	Pattern string
	// Example is a valid value, for the README and the tests that register
	// every team ("" : one is made up from the kind, see [Decl.Sample]).
	Example string
	// Check, if set, validates a value besides its kind and pattern.
	Check func(value string) error
	// Owner is the package that declared it, e.g.
	// functions/processor/handlers/crm.
	Owner string
	// Grants, if set, are the IAM actions the team's code calls on the AWS
	// resource the value names (the roles' grants; see process.Setting).
	Grants []string
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

var envName = regexp.MustCompile(`^[A-Z][A-Z0-9_]*$`)

// Setting declares d (once per name: a second declaration must be the
// same) and returns its value from the registry's environment, or its
// default when the variable is unset or empty. An invalid value is
// recorded (see [Table.Err]) and d's default is returned in its place. A
// malformed declaration (a bad name, no doc, an unknown kind, an invalid
// default) panics: it is a programmer error.
func (t *Table) Setting(d Decl) string {
	switch {
	case !envName.MatchString(d.Name):
		panic(fmt.Sprintf("process: setting %q: the name must be an environment variable name (A-Z, 0-9, _)", d.Name))
	case strings.HasPrefix(d.Name, "HOOKWALL_") || strings.HasPrefix(d.Name, "AWS_"):
		panic(fmt.Sprintf("process: setting %s: HOOKWALL_ and AWS_ names are the platform's", d.Name))
	case d.Doc == "" || strings.ContainsAny(d.Doc, "\n|"):
		panic(fmt.Sprintf("process: setting %s: needs a one-line Doc (no '|')", d.Name))
	case KindPattern(d.Kind) == "":
		panic(fmt.Sprintf("process: setting %s: unknown kind %q", d.Name, d.Kind))
	}
	if err := checkGrants(d.Name, d.Grants); err != nil {
		panic("process: " + err.Error())
	}
	for what, v := range map[string]string{"default": d.Default, "example": d.Example} {
		if v != "" {
			if err := d.validate(v); err != nil {
				panic(fmt.Sprintf("process: setting %s: invalid %s: %v", d.Name, what, err))
			}
		}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if prev, ok := t.decls[d.Name]; ok {
		if prev.Kind != d.Kind || prev.Default != d.Default || prev.Doc != d.Doc || prev.Pattern != d.Pattern || prev.Example != d.Example ||
			!sameGrants(prev.Grants, d.Grants) {
			panic(fmt.Sprintf("process: setting %s declared twice, differently (%s and %s)", d.Name, prev.Owner, d.Owner))
		}
		return t.values[d.Name]
	}
	t.decls[d.Name] = d
	t.order = append(t.order, d.Name)
	v := t.getenv(d.Name)
	if v == "" {
		v = d.Default
	} else if err := d.validate(v); err != nil {
		t.errs = append(t.errs, err)
		v = d.Default
	}
	t.values[d.Name] = v
	return v
}

// validate reports a value d does not accept, naming the variable.
func (d Decl) validate(v string) error {
	quoted := strconv.Quote(v)
	switch d.Kind {
	case KindURL:
		quoted = "" // a URL may carry a token: never in a log
		if u, err := url.Parse(v); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("%s: want an absolute http(s) URL", d.Name)
		}
	case KindDuration:
		if _, err := time.ParseDuration(v); err != nil {
			return fmt.Errorf("%s=%s: want a Go duration such as \"30s\"", d.Name, quoted)
		}
	case KindInt:
		if _, err := strconv.Atoi(v); err != nil {
			return fmt.Errorf("%s=%s: want an integer", d.Name, quoted)
		}
	case KindString:
		if d.Pattern == "" && strings.IndexFunc(v, unicode.IsSpace) >= 0 {
			return fmt.Errorf("%s=%s: contains white space", d.Name, quoted)
		}
	}
	name := d.Name
	if quoted != "" {
		name += "=" + quoted
	}
	if d.Pattern != "" {
		re, err := regexp.Compile(`^(?:` + d.Pattern + `)$`)
		if err != nil {
			panic(fmt.Sprintf("process: setting %s: Pattern: %v", d.Name, err))
		}
		if !re.MatchString(v) {
			return fmt.Errorf("%s: want a value matching %s", name, d.Pattern)
		}
	}
	if d.Check != nil {
		if err := d.Check(v); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	return nil
}

// Sample returns a valid value of d: its example, else its default, else
// one made up from its kind.
func (d Decl) Sample() string {
	switch {
	case d.Example != "":
		return d.Example
	case d.Default != "":
		return d.Default
	}
	switch d.Kind {
	case KindURL:
		return "https://example.test/" + strings.ToLower(strings.ReplaceAll(d.Name, "_", "-"))
	case KindDuration:
		return "1s"
	case KindInt:
		return "1"
	}
	return "example"
}

// Settings returns the declarations, in the order they were first made.
func (t *Table) Settings() []Decl {
	t.mu.RLock()
	defer t.mu.RUnlock()
	out := make([]Decl, len(t.order))
	for i, n := range t.order {
		out[i] = t.decls[n]
	}
	return out
}

// Check validates the value getenv gives each declared setting, as
// [Table.Setting] would: the invalid ones, one error each, joined, in the
// form of [Table.Err] (nil: none). An unset or empty value is valid.
func (t *Table) Check(getenv func(string) string) error {
	var errs []error
	for _, d := range t.Settings() {
		if v := getenv(d.Name); v != "" {
			if err := d.validate(v); err != nil {
				errs = append(errs, err)
			}
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return fmt.Errorf("handler settings: %w", errors.Join(errs...))
}

// Err returns the invalid setting values, one error each, joined (nil: none).
func (t *Table) Err() error {
	t.mu.RLock()
	defer t.mu.RUnlock()
	if len(t.errs) == 0 {
		return nil
	}
	return fmt.Errorf("handler settings: %w", errors.Join(t.errs...))
}

// Deps returns the dependencies provided to the table ([NewWith]), in order.
func (t *Table) Deps() []any {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.deps
}

// envGetenv is the default environment: the process's.
var envGetenv = os.Getenv
