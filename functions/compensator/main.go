// Command compensator is the Lambda on the dead-letter queue and the sweep schedule: env → settings.Compensator → wiring.Build.
package main

import (
	"github.com/hookwall/hookwall/functions/compensator/wiring"
	"github.com/hookwall/hookwall/shared/config/settings"
	"github.com/hookwall/hookwall/shared/config/startup"
)

func main() {
	startup.Run("compensator", startup.WithDefaults(settings.LoadCompensator, wiring.Defaults()), wiring.Build, func(h *wiring.Handler) any { return h.Handle })
}
