package provider

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hookwall/hookwall/shared/webhook"
)

type fakeSettings struct{}

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
		NewSettings:  func() Settings { return new(fakeSettings) },
		Reply:        webhook.Reply{Status: http.StatusOK},
		AnswerWithin: time.Second,
		Demo: Demo{
			Settings: map[string]string{},
			ID:       func(tag string, n uint64) string { return tag },
			Body:     func(ids []string, at time.Time, retry bool) []byte { return nil },
			Key:      func(id string) string { return id },
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

func TestRegisterListsSortedAndRefusesDuplicates(t *testing.T) {
	Register(fake("zfake"))
	Register(fake("afake"))
	names := strings.Join(Names(), ",")
	if !strings.Contains(names, "afake") || strings.Index(names, "afake") > strings.Index(names, "zfake") {
		t.Fatalf("names = %s, want afake before zfake", names)
	}
	if p, ok := Lookup("zfake"); !ok || p.Label != "Fake" {
		t.Fatalf("Lookup(zfake) = %v, %v", p, ok)
	}
	if _, ok := Lookup("nope"); ok {
		t.Fatal("Lookup(nope) found a provider")
	}
	mustPanic(t, "name taken", func() { Register(fake("zfake")) })
}

func TestRegisterRefusesIncompleteProviders(t *testing.T) {
	cases := map[string]func(p *Provider){
		"Name must match":   func(p *Provider) { p.Name = "Bad#Name" },
		"Label, Docs":       func(p *Provider) { p.Docs = "" },
		"NewSettings":       func(p *Provider) { p.NewSettings = nil },
		"Reply.Status":      func(p *Provider) { p.Reply = webhook.Reply{} },
		"AnswerWithin":      func(p *Provider) { p.AnswerWithin = 0 },
		"Demo.Settings, ID": func(p *Provider) { p.Demo.Key = nil },
	}
	for want, breakIt := range cases {
		p := fake("incomplete")
		breakIt(&p)
		mustPanic(t, want, func() { Register(p) })
	}
	if _, ok := Lookup("incomplete"); ok {
		t.Fatal("an incomplete provider was registered")
	}
}
