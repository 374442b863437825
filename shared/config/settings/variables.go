package settings

import "sort"

// The variables each loader reads, for the tests that hold README.md and
// template.yaml to the code (infra/templatetest, docs_test.go). They are
// found by running the loader on an empty environment, so they cannot drift
// from what it reads.

// ReceiverVariables returns the variables [LoadReceiver] reads, sorted.
func ReceiverVariables() []string {
	return variables(func(r *reader) { loadReceiver(r, ReceiverDefaults{}) })
}

// ProcessorVariables returns the variables [LoadProcessor] reads, sorted,
// without the deprecated names (see [DeprecatedVariables]).
func ProcessorVariables() []string {
	return variables(func(r *reader) { loadProcessor(r) })
}

// CompensatorVariables returns the variables [LoadCompensator] reads, sorted.
func CompensatorVariables() []string {
	return variables(func(r *reader) { loadCompensator(r, CompensatorDefaults{}) })
}

// LocalOnlyVariables are read by every function but meant for local runs
// (make run, sam local): on AWS the tenants document is TENANTS_SECRET_ARN.
// The template declares them empty so that sam local's env.json can set them.
func LocalOnlyVariables() []string { return []string{"HOOKWALL_TENANTS_FILE"} }

// variables runs load on an empty environment and returns the current
// names it read.
func variables(load func(*reader)) []string {
	r := newReader(func(string) string { return "" })
	load(r)
	seen := map[string]bool{}
	var names []string
	for _, name := range r.read {
		if _, old := r.aliases[name]; old || seen[name] {
			continue
		}
		seen[name] = true
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}
