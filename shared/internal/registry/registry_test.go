package registry

import (
	"errors"
	"fmt"
	"slices"
	"strings"
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

func TestSettings(t *testing.T) {
	env := map[string]string{"A_URL": "https://a.example/x?token=secret", "BAD_URL": "a.example/x?token=secret",
		"N": "12", "BAD_N": "twelve", "D": "90s", "BAD_D": "90", "S": "two words", "P": "abc", "BAD_P": "ab"}
	tb := NewWith(func(k string) string { return env[k] })
	for name, tc := range map[string]struct {
		d    Decl
		want string
	}{
		"url":            {Decl{Name: "A_URL", Kind: KindURL, Doc: "d"}, env["A_URL"]},
		"bad url":        {Decl{Name: "BAD_URL", Kind: KindURL, Doc: "d", Default: "https://default.example"}, "https://default.example"},
		"int":            {Decl{Name: "N", Kind: KindInt, Doc: "d"}, "12"},
		"bad int":        {Decl{Name: "BAD_N", Kind: KindInt, Doc: "d"}, ""},
		"duration":       {Decl{Name: "D", Kind: KindDuration, Doc: "d"}, "90s"},
		"bad duration":   {Decl{Name: "BAD_D", Kind: KindDuration, Doc: "d"}, ""},
		"spaces":         {Decl{Name: "S", Kind: KindString, Doc: "d"}, ""},
		"pattern":        {Decl{Name: "P", Kind: KindString, Doc: "d", Pattern: "[a-z]{3}|x"}, "abc"},
		"bad pattern":    {Decl{Name: "BAD_P", Kind: KindString, Doc: "d", Pattern: "[a-z]{3}|x"}, ""},
		"unset: default": {Decl{Name: "UNSET", Kind: KindInt, Doc: "d", Default: "5"}, "5"},
	} {
		if got := tb.Setting(tc.d); got != tc.want {
			t.Errorf("%s: got %q, want %q", name, got, tc.want)
		}
	}
	err := tb.Err()
	for _, want := range []string{"BAD_URL: want an absolute http(s) URL", `BAD_N="twelve": want an integer`,
		`BAD_D="90": want a Go duration`, `S="two words": contains white space`, `BAD_P="ab": want a value matching`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("got %v, want an error with %q", err, want)
		}
	}
	if err != nil && strings.Contains(err.Error(), "secret") {
		t.Errorf("the error shows a URL's value: %v", err)
	}
	if got := len(tb.Settings()); got != 10 {
		t.Errorf("got %d declarations, want 10", got)
	}
	// Grants of one service are a valid declaration.
	if tb.Setting(Decl{Name: "T", Kind: KindString, Doc: "d", Grants: []string{"dynamodb:GetItem", "dynamodb:UpdateItem"}}) != "" {
		t.Error("T: want unset")
	}
	// The same declaration twice is one setting; a different one panics.
	if tb.Setting(Decl{Name: "N", Kind: KindInt, Doc: "d"}) != "12" || len(tb.Settings()) != 11 {
		t.Error("a repeated declaration is not the same setting")
	}
	for name, d := range map[string]Decl{
		"redeclared":       {Name: "N", Kind: KindString, Doc: "d"},
		"lower-case name":  {Name: "n", Kind: KindInt, Doc: "d"},
		"platform name":    {Name: "HOOKWALL_X", Kind: KindInt, Doc: "d"},
		"AWS name":         {Name: "AWS_X", Kind: KindInt, Doc: "d"},
		"no doc":           {Name: "X", Kind: KindInt},
		"two-line doc":     {Name: "X", Kind: KindInt, Doc: "a\nb"},
		"unknown kind":     {Name: "X", Kind: "float", Doc: "d"},
		"bad default":      {Name: "X", Kind: KindInt, Doc: "d", Default: "x"},
		"bad example":      {Name: "X", Kind: KindURL, Doc: "d", Example: "x"},
		"grant wildcard":   {Name: "X", Kind: KindString, Doc: "d", Grants: []string{"dynamodb:*"}},
		"grant no service": {Name: "X", Kind: KindString, Doc: "d", Grants: []string{"UpdateItem"}},
		"grants of two services": {Name: "X", Kind: KindString, Doc: "d",
			Grants: []string{"dynamodb:UpdateItem", "sqs:SendMessage"}},
		"regranted": {Name: "P", Kind: KindString, Doc: "d", Pattern: "[a-z]{3}|x", Grants: []string{"dynamodb:GetItem"}},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			tb.Setting(d)
		}()
	}
}

func TestDepsDropNils(t *testing.T) {
	var nilPtr *strings.Builder
	tb := NewWith(nil, nil, nilPtr, 3)
	if d := tb.Deps(); len(d) != 1 || d[0] != 3 {
		t.Errorf("got %v, want [3]", d)
	}
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
