package iaminventory

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/hookwall/hookwall/tools/iaminventory/reach"
)

// Rules are the bindings of iam/resources.json: which logical resources
// the SDK call sites act on.
type Rules struct {
	// Comment says what the file is, for its reader.
	Comment string `json:"comment,omitempty"`
	Rules   []Rule `json:"rules"`
}

// Rule binds the call sites it matches to resources (or excludes them:
// calls not made with the function's role). A site is bound by the most
// specific of the rules that match it (see [Rule.specificity]); two
// equally specific matches are an error.
type Rule struct {
	// Package is the import path of the function making the call; a
	// trailing "/..." matches the packages under it too (required).
	Package string `json:"package"`
	// Operation is the row's operation ("dynamodb:Query"), "dynamodb:*"
	// for every operation of a service, "*" for every one (required).
	Operation string `json:"operation"`
	// Function is the Lambda function ("" any).
	Function string `json:"function,omitempty"`
	// Enclosing is the short name of the function making the call
	// ("(*store.Table).GetMany"; "" any).
	Enclosing string `json:"enclosing,omitempty"`
	// Index is, for Query and Scan, the IndexName the call's input
	// carries: "" the base table (the default: a Query of an index needs a
	// rule naming it), "?" an input the analysis cannot trace.
	Index string `json:"index,omitempty"`
	// Callers, when set, are the packages the enclosing function's direct
	// callers must all be in: for a shared helper acting on the resource
	// its caller names (store.ApplyTransition on a team's table), so that a
	// new caller needs its own binding.
	Callers []string `json:"callers,omitempty"`
	// Resources are the logical resources the call acts on (iam/README.md).
	Resources []string `json:"resources,omitempty"`
	// When is the template parameter that must be non-empty for the call
	// to be made ("ApprovalsTable"; "" always).
	When string `json:"when,omitempty"`
	// Exclude marks calls that are not made with the function's role (the
	// SDK's credential providers, disabled endpoint discovery): listed by
	// -explain, never in the inventory.
	Exclude bool `json:"exclude,omitempty"`
	// Why says how the binding was established (required).
	Why string `json:"why"`
}

// ParseRules reads iam/resources.json, strictly (an unknown field is an
// error: a misspelt selector would match too much).
func ParseRules(data []byte) (*Rules, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var r Rules
	if err := dec.Decode(&r); err != nil {
		return nil, fmt.Errorf("resources.json: %w", err)
	}
	for i, rule := range r.Rules {
		switch {
		case rule.Package == "" || rule.Operation == "":
			return nil, fmt.Errorf("resources.json: rule %d: package and operation are required", i)
		case rule.Why == "":
			return nil, fmt.Errorf("resources.json: rule %d (%s %s): no why", i, rule.Package, rule.Operation)
		case rule.Exclude == (len(rule.Resources) > 0):
			return nil, fmt.Errorf("resources.json: rule %d (%s %s): either resources or exclude", i, rule.Package, rule.Operation)
		}
	}
	return &r, nil
}

// String names the rule in messages.
func (r Rule) String() string {
	parts := []string{r.Package, r.Operation}
	if r.Function != "" {
		parts = append(parts, "function="+r.Function)
	}
	if r.Enclosing != "" {
		parts = append(parts, "enclosing="+r.Enclosing)
	}
	if r.Index != "" {
		parts = append(parts, "index="+r.Index)
	}
	if len(r.Callers) > 0 {
		parts = append(parts, "callers="+strings.Join(r.Callers, ","))
	}
	return "{" + strings.Join(parts, " ") + "}"
}

// matches reports whether the rule matches the call site s acting through
// the index (for Query and Scan; "" otherwise).
func (r Rule) matches(s reach.Site, operation, index string) bool {
	return r.matchesSite(s, operation, index) && r.uncovered(s) == nil
}

// uncovered returns the callers of the site's enclosing function that the
// rule's Callers do not list (nil when it lists none: any caller).
func (r Rule) uncovered(s reach.Site) []string {
	if len(r.Callers) == 0 {
		return nil
	}
	if len(s.Callers) == 0 {
		return []string{"(none)"}
	}
	var out []string
	for _, c := range s.Callers {
		if !slices.Contains(r.Callers, c) {
			out = append(out, c)
		}
	}
	return out
}

// matchesSite is matches without the callers.
func (r Rule) matchesSite(s reach.Site, operation, index string) bool {
	pkg, under := strings.CutSuffix(r.Package, "/...")
	if s.Package != pkg && !(under && strings.HasPrefix(s.Package, pkg+"/")) {
		return false
	}
	service, _, _ := strings.Cut(operation, ":")
	if r.Operation != "*" && r.Operation != service+":*" && r.Operation != operation {
		return false
	}
	if r.Function != "" && r.Function != s.Function || r.Enclosing != "" && r.Enclosing != s.Enclosing {
		return false
	}
	return r.Index == index
}

// specificity ranks matching rules: each selector beyond the package
// counts, and an exact operation beats a wildcard.
func (r Rule) specificity() int {
	n := 0
	if !strings.HasSuffix(r.Operation, "*") {
		n++
	}
	if r.Function != "" {
		n++
	}
	if r.Enclosing != "" {
		n++
	}
	if len(r.Callers) > 0 {
		n++
	}
	if !strings.HasSuffix(r.Package, "/...") {
		n++
	}
	return n
}

// bind returns the rule that binds the site through index, or an error
// when none or several equally specific ones do.
func (rs *Rules) bind(s reach.Site, operation, index string, used []bool) (*Rule, error) {
	best, bestN := -1, -1
	tie := false
	for _, r := range rs.Rules {
		// A rule that names its callers claims the site: a caller it does
		// not list needs its own binding, not a fall-back to a wider rule.
		if r.matchesSite(s, operation, index) {
			if extra := r.uncovered(s); len(extra) > 0 {
				return nil, fmt.Errorf("%s %s at %s%s: called from %s, which binding %s does not list: bind that caller's call",
					s.Function, operation, s.Where(), indexNote(index), strings.Join(extra, ", "), r)
			}
		}
	}
	for i, r := range rs.Rules {
		if !r.matches(s, operation, index) {
			continue
		}
		switch n := r.specificity(); {
		case n > bestN:
			best, bestN, tie = i, n, false
		case n == bestN:
			tie = true
		}
	}
	if best < 0 {
		return nil, fmt.Errorf("%s %s at %s%s: no binding in iam/resources.json", s.Function, operation, s.Where(), indexNote(index))
	}
	if tie {
		return nil, fmt.Errorf("%s %s at %s%s: several equally specific bindings in iam/resources.json", s.Function, operation, s.Where(), indexNote(index))
	}
	used[best] = true
	return &rs.Rules[best], nil
}

func indexNote(index string) string {
	if index == "" {
		return ""
	}
	return " (index " + index + ")"
}
