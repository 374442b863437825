package dispatch

import (
	"fmt"
	"os"

	"github.com/hookwall/hookwall/shared/internal/registry"
	"github.com/hookwall/hookwall/shared/process"
)

// BuildRegistry builds the handler registry as the processor and the
// compensator do once per cold start: it runs register (the list of teams,
// functions/processor/handlers.Register, or one team's Register) on a new
// registry whose settings are read through getenv (nil: os.Getenv) and which
// gives the teams deps ([process.Use]). The error names every setting whose
// value is invalid, or reports the panic of a registration (a duplicate
// handler name, a malformed setting declaration, a missing dependency).
func BuildRegistry(register func(r *process.Registry), getenv func(string) string, deps ...any) (reg *process.Registry, err error) {
	t := registry.NewWith(getenv, deps...)
	defer func() {
		if p := recover(); p != nil {
			reg, err = nil, fmt.Errorf("register the handlers: %v", p)
		}
	}()
	register((*process.Registry)(t))
	if err := t.Err(); err != nil {
		return nil, err
	}
	return (*process.Registry)(t), nil
}

// CheckSettings validates, before anything is started, the values getenv
// (nil: os.Getenv) gives the handler settings register declares (found as
// cmd/hookwall-gen finds them, with an empty environment): the error names
// every invalid one, as [BuildRegistry]'s would at the cold start.
func CheckSettings(register func(r *process.Registry), getenv func(string) string) error {
	if getenv == nil {
		getenv = os.Getenv
	}
	decl, err := BuildRegistry(register, func(string) string { return "" })
	if err != nil {
		return err
	}
	return (*registry.Table)(decl).Check(getenv)
}

// Setting is one handler setting a team declared ([process.Setting]), as
// the generator of template.yaml and the README (cmd/hookwall-gen) and the
// tests read it.
type Setting struct {
	// Name is the environment variable.
	Name string
	// Kind is the type of its value: "string", "URL", "duration" or "int".
	Kind string
	// Default is its value when unset ("" : none).
	Default string
	// Doc is its one-line description.
	Doc string
	// Pattern is the regular expression a whole value matches: the team's,
	// else its kind's ("" : any string).
	Pattern string
	// Example is a valid value (the team's, else its default, else one made
	// up from its kind).
	Example string
	// Owner is the package that declared it, e.g.
	// functions/processor/handlers/crm.
	Owner string
	// Grants are the IAM actions the team's code calls on the AWS resource
	// the value names (none: it names none).
	Grants []string
}

// Settings returns the settings declared on r, in the order they were first
// declared.
func Settings(r *process.Registry) []Setting {
	decls := (*registry.Table)(r).Settings()
	out := make([]Setting, len(decls))
	for i, d := range decls {
		pattern := d.Pattern
		if pattern == "" {
			pattern = registry.KindPattern(d.Kind)
		}
		out[i] = Setting{Name: d.Name, Kind: string(d.Kind), Default: d.Default, Doc: d.Doc, Pattern: pattern,
			Example: d.Sample(), Owner: d.Owner, Grants: d.Grants}
	}
	return out
}
