// Command receiver is the webhook Lambda behind API Gateway: env → settings.Receiver → intake.Build.
package main

import (
	"github.com/hookwall/hookwall/shared/intake"
	"github.com/hookwall/hookwall/shared/settings"
	"github.com/hookwall/hookwall/shared/startup"
)

func main() {
	startup.Run("receiver", startup.WithDefaults(settings.LoadReceiver, intake.Defaults()), intake.Build, func(h *intake.Handler) any { return h.HandleAPIGateway })
}
