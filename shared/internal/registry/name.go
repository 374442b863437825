package registry

import (
	"strings"

	"github.com/hookwall/hookwall/shared/base/webhook"
)

// MaxNameBytes is the longest handler or target name.
const MaxNameBytes = 256

// NameRule describes a valid handler or target name, for error texts.
const NameRule = "1 to 256 bytes of UTF-8 without '#' or control characters, " +
	"in '/'-separated parts none of which is empty, \".\" or \"..\""

// ValidName reports whether name can be a handler's name or a target's
// (the handler's name, or what its process.Target pattern gives for a
// tenant): at most [MaxNameBytes] of valid UTF-8 without control
// characters (what [webhook.CheckID] accepts) and without '#' (the
// separator of the keys and scopes it is part of), made of '/'-separated
// parts none of which is empty, "." or "..". A pause of a scope whose name
// fails it could never match an event.
func ValidName(name string) bool {
	if webhook.CheckID("name", name, MaxNameBytes) != nil || strings.Contains(name, "#") {
		return false
	}
	for part := range strings.SplitSeq(name, "/") {
		if part == "" || part == "." || part == ".." {
			return false
		}
	}
	return true
}
