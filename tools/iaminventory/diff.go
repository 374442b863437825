package iaminventory

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// Diff compares the committed inventory with the one derived from the
// code. drift has one line per difference that matters, naming the row: a
// reachable call without a row, a row no longer reachable, a row whose
// actions changed or whose sites were added or removed. moved has the rows
// whose sites only moved to other lines (an edit above a call): worth a
// regeneration, not a failure. Both empty: the file is up to date.
func Diff(committed, derived *Inventory) (drift, moved []string) {
	if committed.GeneratedBy != derived.GeneratedBy {
		drift = append(drift, fmt.Sprintf("generated_by is %q, want %q", committed.GeneratedBy, derived.GeneratedBy))
	}
	if !slices.Equal(committed.Functions, derived.Functions) {
		drift = append(drift, fmt.Sprintf("functions are %v, want %v", committed.Functions, derived.Functions))
	}
	have := map[string]Row{}
	for _, r := range committed.Rows {
		have[r.Key()] = r
	}
	want := map[string]bool{}
	for _, r := range derived.Rows {
		want[r.Key()] = true
		c, ok := have[r.Key()]
		if !ok {
			drift = append(drift, fmt.Sprintf("missing row: %s is reachable but %s has no row for it (actions %s; sites %s)",
				r, InventoryPath, strings.Join(r.Actions, ", "), strings.Join(r.Sites, "; ")))
			continue
		}
		if !slices.Equal(c.Actions, r.Actions) {
			drift = append(drift, fmt.Sprintf("row %s: actions %v, derived %v", r, c.Actions, r.Actions))
		}
		added, removed := setDiff(r.Sites, c.Sites), setDiff(c.Sites, r.Sites)
		if len(added)+len(removed) == 0 {
			continue
		}
		if slices.Equal(withoutLines(added), withoutLines(removed)) {
			moved = append(moved, fmt.Sprintf("row %s: sites moved: now %v, was %v", r, added, removed))
		} else {
			drift = append(drift, fmt.Sprintf("row %s: sites differ: new %v, gone %v", r, added, removed))
		}
	}
	for _, r := range committed.Rows {
		if !want[r.Key()] {
			drift = append(drift, fmt.Sprintf("stale row: %s is in %s but no longer reachable (sites %s)",
				r, InventoryPath, strings.Join(r.Sites, "; ")))
		}
	}
	if len(drift) == 0 && !slices.EqualFunc(committed.Rows, derived.Rows, func(a, b Row) bool { return a.Key() == b.Key() }) {
		moved = append(moved, "rows are not in the generator's order")
	}
	return drift, moved
}

// lineNumber is the ":<line>" of a code site ("shared/state/store/table.go:88 (*store.Table).Get").
var lineNumber = regexp.MustCompile(`:[0-9]+ `)

// withoutLines returns the sites without their line numbers, sorted.
func withoutLines(sites []string) []string {
	out := make([]string, len(sites))
	for i, s := range sites {
		out[i] = lineNumber.ReplaceAllString(s, " ")
	}
	slices.Sort(out)
	return out
}

// setDiff returns the elements of a not in b.
func setDiff(a, b []string) []string {
	var out []string
	for _, x := range a {
		if !slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	return out
}
