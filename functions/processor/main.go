// Command processor is the Lambda on the events queue: env → settings.Processor → wiring.Build.
package main

import (
	"github.com/hookwall/hookwall/functions/processor/wiring"
	"github.com/hookwall/hookwall/shared/config/settings"
	"github.com/hookwall/hookwall/shared/config/startup"
)

func main() {
	startup.Run("processor", settings.LoadProcessor, wiring.Build, func(h *wiring.Handler) any { return h.Handle })
}
