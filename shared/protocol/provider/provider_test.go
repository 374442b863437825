package provider

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hookwall/hookwall/shared/base/webhook"
)

type fakeSettings struct{ Token string }

func (*fakeSettings) Validate() []Problem { return nil }
func (*fakeSettings) Parser(ParserOptions) (webhook.Parser, error) {
	return nil, nil
}
func (*fakeSettings) Sign([]byte, SignOptions) (*Request, error) {
	return NewRequest(http.MethodPost), nil
}

func fake(name string) Provider {
	return Provider{
		Name: name, Label: "Fake", Docs: "https://example.test/docs", DedupKey: "the id",
		Reply:        webhook.Reply{Status: http.StatusOK},
		AnswerWithin: time.Second,
		Demo: Demo{
			Settings: map[string]string{},
			ID:       func(tag string, n uint64) string { return tag },
			Body:     func(ids []string, at time.Time, retry bool) []byte { return nil },
		},
	}
}

func mustPanic(t *testing.T, want string, fn func()) {
	t.Helper()
	defer func() {
		r := recover()
		if r == nil || !strings.Contains(r.(string), want) {
			t.Fatalf("panic = %v, want one mentioning %q", r, want)
		}
	}()
	fn()
}

func TestListIsSortedAndRefusesDuplicates(t *testing.T) {
	l := NewList(New[fakeSettings](fake("zfake")), New[fakeSettings](fake("afake")))
	if names := strings.Join(l.Names(), ","); names != "afake,zfake" {
		t.Fatalf("names = %s, want afake,zfake", names)
	}
	if all := l.All(); len(all) != 2 || all[0].Name != "afake" {
		t.Fatalf("All() = %v, want afake then zfake", all)
	}
	if p, ok := l.Lookup("zfake"); !ok || p.Label != "Fake" {
		t.Fatalf("Lookup(zfake) = %v, %v", p, ok)
	}
	if _, ok := l.Lookup("nope"); ok {
		t.Fatal("Lookup(nope) found a provider")
	}
	mustPanic(t, "name \"zfake\" taken", func() { NewList(New[fakeSettings](fake("zfake")), New[fakeSettings](fake("zfake"))) })
}

// New gives the provider its settings constructor, a new *S each call,
// and, by default, the identity as its demo key.
func TestNewSetsNewSettingsAndTheDefaultKey(t *testing.T) {
	p := fake("defaults")
	p.Demo.ID = func(tag string, n uint64) string { return tag }
	got := New[fakeSettings](p)
	a, b := got.NewSettings(), got.NewSettings()
	if _, ok := a.(*fakeSettings); !ok || a == b {
		t.Errorf("NewSettings gives %T %p and %p, want a new *fakeSettings each call", a, a, b)
	}
	if k := got.Demo.Key("ev-1"); k != "ev-1" {
		t.Errorf("default Demo.Key(ev-1) = %q, want the id itself", k)
	}
	p = fake("ownkey")
	p.Demo.Key = func(id string) string { return "msg:" + id }
	if got := New[fakeSettings](p); got.Demo.Key("1") != "msg:1" {
		t.Errorf("Demo.Key(1) = %q, want the provider's own msg:1", got.Demo.Key("1"))
	}
}

func TestNewRefusesIncompleteProviders(t *testing.T) {
	cases := map[string]func(p *Provider){
		"Name must match":   func(p *Provider) { p.Name = "Bad#Name" },
		"Name is reserved":  func(p *Provider) { p.Name = "forward" },
		"Label, Docs":       func(p *Provider) { p.Docs = "" },
		"set by New":        func(p *Provider) { p.NewSettings = func() Settings { return new(fakeSettings) } },
		"Reply.Status":      func(p *Provider) { p.Reply = webhook.Reply{} },
		"AnswerWithin":      func(p *Provider) { p.AnswerWithin = 0 },
		"Demo.Settings, ID": func(p *Provider) { p.Demo.Body = nil },
	}
	for want, breakIt := range cases {
		p := fake("incomplete")
		breakIt(&p)
		mustPanic(t, want, func() { New[fakeSettings](p) })
	}
}

// bodySigner signs by returning the body it was given.
type bodySigner struct{ fakeSettings }

func (*bodySigner) Sign(body []byte, _ SignOptions) (*Request, error) {
	r := NewRequest(http.MethodPost)
	r.Body = body
	return r, nil
}

func TestSignJSON(t *testing.T) {
	r, err := SignJSON(&bodySigner{}, map[string]string{"type": "url_verification", "challenge": "c<1>"}, SignOptions{})
	if err != nil || string(r.Body) != `{"challenge":"c\u003c1\u003e","type":"url_verification"}` {
		t.Fatalf("SignJSON: %s, %v", r.Body, err)
	}
	if _, err := SignJSON(&bodySigner{}, func() {}, SignOptions{}); !errors.Is(err, ErrBadBody) {
		t.Errorf("a value without JSON: %v, want ErrBadBody", err)
	}
}

func TestProblemsKeepsOrderAndIsNilWhenNone(t *testing.T) {
	var none Problems
	none.Require("token", "set")
	if got := []Problem(none); got != nil {
		t.Fatalf("no problem: got %v, want nil", got)
	}
	var ps Problems
	ps.Require("token", "")
	ps.Add("key", "must be 43 characters")
	ps.Require("corpId", "ww1")
	ps.Require("appId", "")
	want := []Problem{{"token", "required"}, {"key", "must be 43 characters"}, {"appId", "required"}}
	if len(ps) != len(want) {
		t.Fatalf("got %v, want %v", ps, want)
	}
	for i := range want {
		if ps[i] != want[i] {
			t.Errorf("problem %d: got %v, want %v", i, ps[i], want[i])
		}
	}
}
