package webhook

import (
	"errors"
	"strings"
	"testing"
)

func TestCheckID(t *testing.T) {
	cases := []struct {
		name string
		id   string
		ok   bool
	}{
		{"ulid", "01JABCDEFGHJKMNPQRSTVWXYZ0", true},
		{"cjk", "消息-1", true},
		{"at the limit", strings.Repeat("a", 256), true},
		{"empty", "", false},
		{"over the limit", strings.Repeat("a", 257), false},
		{"invalid utf-8", "id-\xff", false},
		{"truncated rune", "id-\xe6\xb6", false},
		{"nul", "id\x00", false},
		{"newline", "id\n", false},
		{"del", "id\x7f", false},
		{"c1 control", "id\u0085", false},
		{"noncharacter fffe", "id\ufffe", false},
		{"noncharacter ffff", "id\uffff", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := CheckID("id", c.id, MaxDedupKeyBytes)
			if (err == nil) != c.ok {
				t.Fatalf("CheckID(%q) = %v, want ok=%v", c.id, err, c.ok)
			}
			if err != nil && !errors.Is(err, ErrMalformed) {
				t.Fatalf("error %v does not wrap ErrMalformed", err)
			}
		})
	}
}

func TestMarshalMessage(t *testing.T) {
	env := Envelope{Key: "line#t#1", Provider: "line", Tenant: "t", Type: "message",
		Payload: []byte(`{"text":"<a>&b \ufffe\uffff"}`)}
	b, err := env.MarshalMessage()
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	if !strings.Contains(s, `<a>&b`) {
		t.Errorf("HTML characters escaped: %s", s)
	}
	if strings.Contains(s, "\ufffe") || strings.Contains(s, "\uffff") || !strings.Contains(s, `\ufffe\uffff`) {
		t.Errorf("noncharacters not escaped: %s", s)
	}
	env.Payload = []byte("{\"text\":\"\xff\"}")
	if _, err := env.MarshalMessage(); !errors.Is(err, ErrMalformed) {
		t.Errorf("invalid UTF-8: err = %v, want ErrMalformed", err)
	}
}

func TestValidTenant(t *testing.T) {
	for name, want := range map[string]bool{
		"acme": true, "a": true, "A-b_c.9": true, "0tenant": true, strings.Repeat("x", 64): true,
		"": false, "-acme": false, ".acme": false, "a#b": false, "a/b": false, "a b": false, "é": false,
		strings.Repeat("x", 65): false, "acme\n": false,
	} {
		if got := ValidTenant(name); got != want {
			t.Errorf("ValidTenant(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestMessageGroup(t *testing.T) {
	for _, c := range []struct{ own, key, want string }{
		{"acme", "line#beta#ev1", "acme"}, // its own group first
		{"", "line#beta#ev1", "beta"},     // else its key's tenant
		{"", "line#beta#ev#1", "beta"},    // a dedup key may hold '#'
		{"", "line#be ta#ev1", ""},        // not a valid tenant
		{"", "nokey", ""},
		{"", "", ""},
	} {
		if got := MessageGroup(c.own, c.key); got != c.want {
			t.Errorf("MessageGroup(%q, %q) = %q, want %q", c.own, c.key, got, c.want)
		}
	}
}
