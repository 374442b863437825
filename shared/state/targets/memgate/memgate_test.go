package memgate_test

import (
	"testing"

	"github.com/hookwall/hookwall/shared/state/targets"
	"github.com/hookwall/hookwall/shared/state/targets/memgate"
	"github.com/hookwall/hookwall/shared/state/targets/targetstest"
)

func TestContract(t *testing.T) {
	targetstest.Run(t, func(t *testing.T) targetstest.Env {
		var first *memgate.Gate
		return targetstest.Env{
			Gate: func(t *testing.T, cfg targets.Config) targets.Gate {
				var g *memgate.Gate
				var err error
				if first == nil {
					g, err = memgate.New(cfg)
					first = g
				} else {
					g, err = first.Instance(cfg)
				}
				if err != nil {
					t.Fatal(err)
				}
				return g
			},
			Writes: func() int { return first.Writes() },
		}
	})
}
