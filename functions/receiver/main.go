// Command receiver is the webhook Lambda behind API Gateway: env → settings.Receiver → intake.Build.
package main

import (
	"github.com/hookwall/hookwall/shared/config/settings"
	"github.com/hookwall/hookwall/shared/config/startup"
	"github.com/hookwall/hookwall/shared/engine/intake"
)

func main() {
	startup.Run("receiver", startup.WithDefaults(settings.LoadReceiver, intake.Defaults()), intake.Build, func(h *intake.Handler) any { return h.HandleAPIGateway })
}
