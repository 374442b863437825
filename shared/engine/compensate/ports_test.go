package compensate_test

import (
	"github.com/hookwall/hookwall/shared/aws/bus"
	"github.com/hookwall/hookwall/shared/aws/queue"
	"github.com/hookwall/hookwall/shared/engine/compensate"
	"github.com/hookwall/hookwall/shared/internal/kernel"
	"github.com/hookwall/hookwall/shared/state/store"
	"github.com/hookwall/hookwall/shared/state/store/memstore"
)

// The adapters satisfy the compensator's ports.
var (
	_ compensate.Store    = (*store.Table)(nil)
	_ compensate.Store    = (*memstore.Store)(nil)
	_ compensate.Requeuer = (*queue.Queue)(nil)
	_ kernel.Visibility   = (*queue.Queue)(nil)
	_ kernel.Publisher    = (*bus.Publisher)(nil)
)
