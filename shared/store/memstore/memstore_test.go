package memstore_test

import (
	"testing"
	"time"

	"github.com/hookwall/hookwall/shared/intake"
	"github.com/hookwall/hookwall/shared/process"
	"github.com/hookwall/hookwall/shared/store"
	"github.com/hookwall/hookwall/shared/store/memstore"
	"github.com/hookwall/hookwall/shared/store/storetest"
)

// The in-memory store serves the receiver and the processor as the table does.
var (
	_ intake.Store           = (*memstore.Store)(nil)
	_ process.Store          = (*memstore.Store)(nil)
	_ storetest.Store        = (*memstore.Store)(nil)
	_ store.UpdateItemAPI    = (*memstore.Table)(nil)
	_ storetest.TransitionDB = (*memstore.Table)(nil)
)

func TestContract(t *testing.T) {
	storetest.Run(t, func(_ *testing.T, now func() time.Time) storetest.Store {
		return memstore.New(memstore.Config{Now: now})
	}, storetest.Transitions(func(*testing.T) (storetest.TransitionDB, string) {
		return memstore.NewTable("rows", "pk", "sk"), "rows"
	}))
}
