package skew

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Mix is one way two releases share the functions: which versions each
// role runs at the start, and the changes made while the storm is sent
// (a rollback in the middle).
type Mix struct {
	// Name and What name and describe the mix in the report.
	Name, What string
	// Start is the versions each role runs when the storm starts.
	Start map[string][]string
	// Changes happen while the storm is sent, in order.
	Changes []Change
}

// Change sets a role's versions once a share of the storm's jobs is done.
type Change struct {
	// After is the share of jobs done (0 to 1).
	After    float64
	Role     string
	Versions []string
}

// End returns the versions each role runs once every change is made: what
// runs while the mix settles.
func (m Mix) End() map[string][]string {
	end := maps.Clone(m.Start)
	for _, c := range m.Changes {
		end[c.Role] = c.Versions
	}
	return end
}

// Uses returns the versions role runs at any time of the mix.
func (m Mix) Uses(role string) []string {
	out := slices.Clone(m.Start[role])
	for _, c := range m.Changes {
		if c.Role == role {
			out = append(out, c.Versions...)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// Unexercised returns the "<role>@<version>" of the receiver and the
// processor that the mix runs but that were never invoked (a mix that
// never mixed proves nothing). The compensator is left out: with nothing
// dead-lettered it may only see a sweep or none.
func (m Mix) Unexercised(invocations map[string]int64) []string {
	var out []string
	for _, r := range []string{Receiver, Processor} {
		for _, v := range m.Uses(r) {
			if invocations[r+"@"+v] == 0 {
				out = append(out, r+"@"+v)
			}
		}
	}
	return out
}

// Describe is one line: each role's versions at the start and the changes.
func (m Mix) Describe() string {
	var b strings.Builder
	for _, r := range Roles {
		fmt.Fprintf(&b, "%s %s; ", r, strings.Join(m.Start[r], "+"))
	}
	for _, c := range m.Changes {
		fmt.Fprintf(&b, "at %.0f%%: %s → %s; ", 100*c.After, c.Role, strings.Join(c.Versions, "+"))
	}
	return strings.TrimSuffix(b.String(), "; ")
}

// Mixes returns the three mixes of issue #32 between the old release and
// the new code: (a) the receiver still old while the processor and the
// compensator run new; (b) the receiver new while the processor and the
// compensator are still old; (c) everything new, then a rollback of the
// processor and the compensator in the middle of the storm (both processor
// versions polling while the rollback shifts, then the old one alone).
func Mixes(old, cur string) []Mix {
	all := func(recv, proc, comp string) map[string][]string {
		return map[string][]string{Receiver: {recv}, Processor: {proc}, Compensator: {comp}}
	}
	return []Mix{
		{Name: "old-receiver", What: "old receiver + new processor and compensator", Start: all(old, cur, cur)},
		{Name: "old-processor", What: "new receiver + old processor and compensator", Start: all(cur, old, old)},
		{Name: "rollback", What: "all new, then a rollback to the old processor and compensator in the middle of the storm",
			Start: all(cur, cur, cur), Changes: []Change{
				{After: 0.35, Role: Processor, Versions: []string{cur, old}},
				{After: 0.35, Role: Compensator, Versions: []string{old}},
				{After: 0.6, Role: Processor, Versions: []string{old}},
			}},
	}
}

// Select returns the mixes named in names (all when names is empty).
func Select(mixes []Mix, names []string) ([]Mix, error) {
	if len(names) == 0 {
		return mixes, nil
	}
	var out []Mix
	for _, n := range names {
		i := slices.IndexFunc(mixes, func(m Mix) bool { return m.Name == n })
		if i < 0 {
			return nil, fmt.Errorf("skew: no mix %q (have old-receiver, old-processor, rollback)", n)
		}
		out = append(out, mixes[i])
	}
	return out, nil
}
