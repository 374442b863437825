package setting

import (
	"strings"
	"testing"
)

func TestValuesCheckEachKind(t *testing.T) {
	env := map[string]string{"A_URL": "https://a.example/x?token=secret", "BAD_URL": "a.example/x?token=secret",
		"N": "12", "BAD_N": "twelve", "D": "90s", "BAD_D": "90", "S": "two words", "P": "abc", "BAD_P": "ab"}
	want := map[string]string{}
	var settings []Setting
	for _, tc := range []struct {
		s    Setting
		want string
	}{
		{Setting{Name: "A_URL", Kind: KindURL, Doc: "d"}, env["A_URL"]},
		{Setting{Name: "BAD_URL", Kind: KindURL, Doc: "d", Default: "https://default.example"}, "https://default.example"},
		{Setting{Name: "N", Kind: KindInt, Doc: "d"}, "12"},
		{Setting{Name: "BAD_N", Kind: KindInt, Doc: "d"}, ""},
		{Setting{Name: "D", Kind: KindDuration, Doc: "d"}, "90s"},
		{Setting{Name: "BAD_D", Kind: KindDuration, Doc: "d"}, ""},
		{Setting{Name: "S", Kind: KindString, Doc: "d"}, ""},
		{Setting{Name: "P", Kind: KindString, Doc: "d", Pattern: "[a-z]{3}|x"}, "abc"},
		{Setting{Name: "BAD_P", Kind: KindString, Doc: "d", Pattern: "[a-z]{3}|x"}, ""},
		{Setting{Name: "UNSET", Kind: KindInt, Doc: "d", Default: "5"}, "5"},
	} {
		if err := tc.s.Validate(); err != nil {
			t.Errorf("%s: %v", tc.s.Name, err)
		}
		settings = append(settings, tc.s)
		want[tc.s.Name] = tc.want
	}
	values, err := Values(settings, func(k string) string { return env[k] })
	for name, w := range want {
		if values[name] != w {
			t.Errorf("%s: got %q, want %q", name, values[name], w)
		}
	}
	for _, w := range []string{"BAD_URL: want an absolute http(s) URL", `BAD_N="twelve": want an integer`,
		`BAD_D="90": want a Go duration`, `S="two words": contains white space`, `BAD_P="ab": want a value matching`} {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("got %v, want an error with %q", err, w)
		}
	}
	if err != nil && strings.Contains(err.Error(), "secret") {
		t.Errorf("the error shows a URL's value: %v", err)
	}
}

func TestValidateRefusesAMalformedDeclaration(t *testing.T) {
	if err := (Setting{Name: "T", Kind: KindString, Doc: "d", Grants: []string{"dynamodb:GetItem", "dynamodb:UpdateItem"}}).Validate(); err != nil {
		t.Errorf("grants of one service: %v", err)
	}
	for name, s := range map[string]Setting{
		"lower-case name":  {Name: "n", Kind: KindInt, Doc: "d"},
		"platform name":    {Name: "HOOKWALL_X", Kind: KindInt, Doc: "d"},
		"AWS name":         {Name: "AWS_X", Kind: KindInt, Doc: "d"},
		"no doc":           {Name: "X", Kind: KindInt},
		"two-line doc":     {Name: "X", Kind: KindInt, Doc: "a\nb"},
		"no kind":          {Name: "X", Doc: "d"},
		"unknown kind":     {Name: "X", Kind: "float", Doc: "d"},
		"bad default":      {Name: "X", Kind: KindInt, Doc: "d", Default: "x"},
		"bad example":      {Name: "X", Kind: KindURL, Doc: "d", Example: "x"},
		"bad pattern":      {Name: "X", Kind: KindString, Doc: "d", Pattern: "("},
		"grant wildcard":   {Name: "X", Kind: KindString, Doc: "d", Grants: []string{"dynamodb:*"}},
		"grant no service": {Name: "X", Kind: KindString, Doc: "d", Grants: []string{"UpdateItem"}},
		"grants of two services": {Name: "X", Kind: KindString, Doc: "d",
			Grants: []string{"dynamodb:UpdateItem", "sqs:SendMessage"}},
	} {
		if err := s.Validate(); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestSameIgnoresTheOwner(t *testing.T) {
	a := Setting{Name: "P", Kind: KindString, Doc: "d", Pattern: "x", Owner: "a"}
	b := a
	b.Owner = "b"
	if !a.Same(b) {
		t.Error("two owners of one declaration are not the same")
	}
	b.Grants = []string{"dynamodb:GetItem"}
	if a.Same(b) {
		t.Error("a declaration with grants is the same as one without")
	}
}

func TestSampleAndParameterName(t *testing.T) {
	for s, want := range map[*Setting]string{
		{Name: "X_URL", Kind: KindURL}: "https://example.test/x-url", {Name: "D", Kind: KindDuration}: "1s",
		{Name: "N", Kind: KindInt, Default: "4"}: "4", {Name: "S", Kind: KindString, Example: "e"}: "e",
	} {
		if got := s.Sample(); got != want {
			t.Errorf("%s: Sample %q, want %q", s.Name, got, want)
		}
	}
	if got := ParameterName("CRM_LEADS_URL"); got != "CrmLeadsUrl" {
		t.Errorf("ParameterName: %s", got)
	}
	if got := (Setting{Kind: KindInt}).AllowedPattern(); got != `-?[0-9]+` {
		t.Errorf("AllowedPattern: %s", got)
	}
}
