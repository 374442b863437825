package platform

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/config/setting"
	"github.com/hookwall/hookwall/shared/config/tenants"
	"github.com/hookwall/hookwall/shared/engine/process"
	"github.com/hookwall/hookwall/shared/internal/registry"
)

// build builds the registry of one team of the tests, its settings read
// from env.
func build(env map[string]string, settings []setting.Setting, register func(r *process.Registry, d Deps), deps Deps) (*process.Registry, error) {
	team := Team{Owner: "shared/engine/platform", Settings: settings, Register: register}
	return Build(func(k string) string { return env[k] }, deps, team)
}

func TestGettersReadTheirKind(t *testing.T) {
	env := map[string]string{"A_URL": "https://a.example", "A_DURATION": "90s", "A_INT": "7", "A_STRING": "x.y"}
	var (
		aURL      = setting.Setting{Name: "A_URL", Kind: setting.KindURL, Doc: "d"}
		aDuration = setting.Setting{Name: "A_DURATION", Kind: setting.KindDuration, Doc: "d"}
		aInt      = setting.Setting{Name: "A_INT", Kind: setting.KindInt, Doc: "d"}
		aString   = setting.Setting{Name: "A_STRING", Kind: setting.KindString, Doc: "d"}
		dDuration = setting.Setting{Name: "UNSET_DURATION", Kind: setting.KindDuration, Doc: "d", Default: "2m"}
		unsetInt  = setting.Setting{Name: "UNSET_INT", Kind: setting.KindInt, Doc: "d"}
	)
	_, err := build(env, []setting.Setting{aURL, aDuration, aInt, aString, dDuration, unsetInt}, func(r *process.Registry, _ Deps) {
		for what, got := range map[string][2]any{
			"String of a URL": {r.String(aURL), "https://a.example"}, "Duration": {r.Duration(aDuration), 90 * time.Second},
			"Int": {r.Int(aInt), 7}, "String": {r.String(aString), "x.y"},
			"Duration default": {r.Duration(dDuration), 2 * time.Minute}, "Int unset": {r.Int(unsetInt), 0},
		} {
			if got[0] != got[1] {
				t.Errorf("%s: got %v, want %v", what, got[0], got[1])
			}
		}
	}, Deps{})
	if err != nil {
		t.Fatal(err)
	}
	check := setting.Setting{Name: "CHECKED", Kind: setting.KindString, Doc: "d", Check: func(v string) error {
		if v != "ok" {
			return errors.New("want ok")
		}
		return nil
	}}
	if _, err := build(map[string]string{"CHECKED": "nope"}, []setting.Setting{check}, func(*process.Registry, Deps) {}, Deps{}); err == nil ||
		!strings.Contains(err.Error(), `CHECKED="nope": want ok`) {
		t.Errorf("got %v, want the check's error naming the variable", err)
	}
}

// Reading a setting the team does not declare, or with the getter of
// another kind, fails the build; so does a malformed declaration, or one
// name declared differently by two teams.
func TestBuildRefusesWhatTheDeclarationsDoNotSay(t *testing.T) {
	n := setting.Setting{Name: "N", Kind: setting.KindInt, Doc: "d"}
	for name, tc := range map[string]struct {
		settings []setting.Setting
		register func(r *process.Registry, d Deps)
		want     string
	}{
		"undeclared":    {nil, func(r *process.Registry, _ Deps) { r.Int(n) }, "N is not in the Settings"},
		"another kind":  {[]setting.Setting{n}, func(r *process.Registry, _ Deps) { r.String(n) }, `read as "string"`},
		"no kind":       {[]setting.Setting{{Name: "X", Doc: "d"}}, func(*process.Registry, Deps) {}, "unknown kind"},
		"no register":   {nil, nil, "needs an Owner and a Register"},
		"declared once": {[]setting.Setting{n, n}, func(r *process.Registry, _ Deps) { r.Int(n) }, ""},
	} {
		_, err := build(nil, tc.settings, tc.register, Deps{})
		if (err == nil) != (tc.want == "") || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%s: got %v, want an error with %q", name, err, tc.want)
		}
	}
	other := n
	other.Default = "3"
	nop := func(*process.Registry, Deps) {}
	_, err := Build(nil, Deps{}, Team{Owner: "a", Settings: []setting.Setting{n}, Register: nop}, Team{Owner: "b", Settings: []setting.Setting{other}, Register: nop})
	if err == nil || !strings.Contains(err.Error(), "N declared twice, differently (a and b)") {
		t.Errorf("got %v, want N declared twice", err)
	}
}

// The handlers a team registers are its Owner's; its Register gets the
// dependencies given to Build.
func TestBuildGivesTheOwnerAndTheDeps(t *testing.T) {
	doc := &tenants.Tenants{}
	var got *tenants.Tenants
	r, err := build(nil, nil, func(r *process.Registry, d Deps) {
		got = d.Tenants
		process.HandleAll(r, "t.noop", func(context.Context, *process.Event[webhook.Envelope]) error { return nil })
	}, Deps{Tenants: doc})
	if err != nil {
		t.Fatal(err)
	}
	if got != doc {
		t.Errorf("Register got tenants %v, want %v", got, doc)
	}
	if e := (*registry.Table)(r).Handler("t.noop"); e == nil || e.Owner != "shared/engine/platform" {
		t.Errorf("got entry %+v, want t.noop owned by shared/engine/platform", e)
	}
}
