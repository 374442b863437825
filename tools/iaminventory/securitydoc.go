package iaminventory

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// SecurityDocPath is the document whose IAM section [SecurityDoc] writes,
// relative to the repository root.
const SecurityDocPath = "docs/SECURITY.md"

// The markers around the generated section of [SecurityDocPath].
const (
	securityBegin = "<!-- BEGIN GENERATED IAM inventory (make inventory: from iam/inventory.json; do not edit) -->"
	securityEnd   = "<!-- END GENERATED IAM inventory -->"
)

// SecurityDoc renders inv as the Markdown of docs/SECURITY.md's IAM
// section: per function, each operation with the IAM actions it needs, its
// resource, the parameter it depends on, and why (the call sites, file:line
// and enclosing function, or the template entry that makes AWS call).
func SecurityDoc(inv *Inventory) string {
	var b strings.Builder
	for _, fn := range inv.Functions {
		fmt.Fprintf(&b, "\n**%s**\n\n", fn)
		b.WriteString("| IAM actions | resource | when | why (where the call is made) |\n")
		b.WriteString("|---|---|---|---|\n")
		for _, r := range inv.Rows {
			if r.Function != fn {
				continue
			}
			actions := "`" + strings.Join(r.Actions, "`, `") + "`"
			if len(r.Actions) != 1 || r.Actions[0] != r.Operation {
				actions += " (" + r.Operation + ")"
			}
			res := "`" + r.Resource + "`"
			for _, k := range slices.Sorted(maps.Keys(r.Context)) {
				res += fmt.Sprintf(" (%s %s)", k, r.Context[k])
			}
			when := "always"
			if r.When != "" {
				when = "`" + r.When + "` set"
			}
			sites := make([]string, len(r.Sites))
			for i, s := range r.Sites {
				sites[i] = "`" + strings.ReplaceAll(s, "|", `\|`) + "`"
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", actions, res, when, strings.Join(sites, "<br>"))
		}
	}
	return b.String()
}

// WithSecurityDoc returns doc (the text of docs/SECURITY.md) with its
// generated section replaced by [SecurityDoc] of inv.
func WithSecurityDoc(doc string, inv *Inventory) (string, error) {
	i := strings.Index(doc, securityBegin)
	j := strings.Index(doc, securityEnd)
	if i < 0 || j < i {
		return "", fmt.Errorf("%s: no %q … %q section", SecurityDocPath, securityBegin, securityEnd)
	}
	return doc[:i+len(securityBegin)] + "\n" + SecurityDoc(inv) + "\n" + doc[j:], nil
}
