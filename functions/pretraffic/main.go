// Command pretraffic is the CodeDeploy pre-traffic hook of the receiver's and
// the processor's deployments: env → settings.PreTraffic → pretraffic.Build.
package main

import (
	"github.com/hookwall/hookwall/shared/config/settings"
	"github.com/hookwall/hookwall/shared/config/startup"
	"github.com/hookwall/hookwall/shared/ops/pretraffic"
)

func main() {
	startup.Run("pretraffic", settings.LoadPreTraffic, pretraffic.Build, func(h *pretraffic.Handler) any { return h.Handle })
}
