package dispatch

import "strings"

// ParameterName is the template parameter `make generate` gives the
// handler setting name (CRM_LEADS_URL → CrmLeadsUrl): the logical name of
// the resource a setting names, as iam/README.md calls a team's resource
// (APPROVALS_TABLE → ApprovalsTable). cmd/internal/settingsgen writes the
// template with the same rule (a test there compares the two).
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
