package bus

import (
	"testing"

	"github.com/hookwall/hookwall/shared/base/webhook"
)

func TestDetailTypeOfEachOutcome(t *testing.T) {
	for st, want := range map[webhook.Status]string{
		webhook.StatusSucceeded:   "hookwall.event.succeeded",
		webhook.StatusFailed:      "hookwall.event.failed",
		webhook.StatusCompensated: "hookwall.event.compensated",
		webhook.StatusDead:        "hookwall.event.dead",
	} {
		if got := DetailType(st); got != want {
			t.Errorf("DetailType(%s): got %s, want %s", st, got, want)
		}
	}
}
