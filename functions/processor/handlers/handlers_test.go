package handlers

import (
	"testing"

	"github.com/hookwall/hookwall/shared/process"
)

func TestRegisterBuildsTheRegistry(t *testing.T) {
	r := process.NewRegistry()
	Register(r, Deps{}) // panics on a duplicate name
	for _, h := range r.Handlers() {
		if h.Name() == "" || h.Provider() == "" || h.EventType() == "" {
			t.Errorf("handler %+v: incomplete registration", h)
		}
	}
}
