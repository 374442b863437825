// Command processor is the Lambda on the events queue: env → settings.Processor → wiring.Build.
package main

import (
	"github.com/hookwall/hookwall/functions/processor/wiring"
	"github.com/hookwall/hookwall/shared/settings"
	"github.com/hookwall/hookwall/shared/startup"
)

func main() {
	startup.Run("processor", settings.LoadProcessor, wiring.Build, func(h *wiring.Handler) any { return h.Handle })
}
