package registry

import (
	"errors"
	"fmt"
	"slices"
	"testing"
)

func TestUndoStepNames(t *testing.T) {
	if UndoStep("tag") != "$undo:tag" {
		t.Errorf("got %s", UndoStep("tag"))
	}
	for step, want := range map[string]string{"$undo:tag": "tag", "tag": "", "$done": "", "$undo:": ""} {
		got, ok := IsUndoStep(step)
		if got != want || ok != (want != "") {
			t.Errorf("IsUndoStep(%q): got %q, %v; want %q", step, got, ok, want)
		}
	}
	if ValidStepName(UndoStep("x")) == nil {
		t.Error("an undo step name is accepted as a forward step name")
	}
	for _, bad := range []string{"", "a#b", "$done"} {
		if err := ValidStepName(bad); !IsPermanent(err) {
			t.Errorf("ValidStepName(%q): got %v, want a permanent error", bad, err)
		}
	}
	if err := ValidStepName("create-lead"); err != nil {
		t.Errorf("ValidStepName(create-lead): %v", err)
	}
}

func TestPermanent(t *testing.T) {
	base := errors.New("blocked")
	if Permanent(nil) != nil {
		t.Error("Permanent(nil) is not nil")
	}
	err := fmt.Errorf("crm: %w", Permanent(base))
	if !IsPermanent(err) || !errors.Is(err, base) || IsPermanent(base) {
		t.Errorf("got IsPermanent %v, Is %v", IsPermanent(err), errors.Is(err, base))
	}
}

func TestTableOrderAndDuplicates(t *testing.T) {
	tb := New()
	tb.Add(&Entry{Name: "all", Provider: AnyType, EventType: AnyType})
	tb.Add(&Entry{Name: "typed", Provider: "line", EventType: "follow", Tenants: func(t string) bool { return t == "acme" }})
	tb.Add(&Entry{Name: "other", Provider: "line", EventType: "unfollow"})
	name := func(es []*Entry) []string {
		var out []string
		for _, e := range es {
			out = append(out, e.Name)
		}
		return out
	}
	if got := name(tb.Match("line", "acme", "follow")); !slices.Equal(got, []string{"all", "typed"}) {
		t.Errorf("Match acme: got %v", got)
	}
	if got := name(tb.Match("line", "globex", "follow")); !slices.Equal(got, []string{"all"}) {
		t.Errorf("Match globex: got %v", got)
	}
	if got := name(tb.Handlers()); !slices.Equal(got, []string{"all", "typed", "other"}) {
		t.Errorf("Handlers: got %v, want registration order", got)
	}
	defer func() {
		if recover() == nil {
			t.Error("a duplicate name did not panic")
		}
	}()
	tb.Add(&Entry{Name: "typed", Provider: "x", EventType: "y"})
}

func TestBreakerKeys(t *testing.T) {
	shared := &Entry{Name: "crm.lead"}
	named := &Entry{Name: "forward", Target: func(t string) string { return "forward/" + t }, TargetNamesTenant: true}
	for _, tc := range []struct {
		e           *Entry
		tenant, key string
	}{{shared, "acme", "crm.lead/@acme"}, {shared, "", "crm.lead"}, {named, "acme", "forward/acme"}} {
		if got := tc.e.BreakerOf(tc.tenant); got != tc.key {
			t.Errorf("%s for %q: %q, want %q", tc.e.Name, tc.tenant, got, tc.key)
		}
	}
	for key, want := range map[string][2]string{
		"crm.lead/@acme": {"crm.lead", "acme"}, "forward/acme": {"forward/acme", ""}, "x/@y/@acme": {"x/@y", "acme"},
		"@acme": {"@acme", ""}, "crm/@": {"crm/@", ""}, "crm/@a/b": {"crm/@a/b", ""},
	} {
		if target, tenant := SplitBreakerKey(key); target != want[0] || tenant != want[1] {
			t.Errorf("SplitBreakerKey(%q) = %q, %q; want %q, %q", key, target, tenant, want[0], want[1])
		}
	}
}
