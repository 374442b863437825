package breaker

import (
	"strconv"
	"strings"
)

// Admission tokens: "r:<window start ms>" for a reserved call, "f" for a
// free one, "p:<owner>" for a probe, "" for an admission the breaker did
// not see (no target).

// ReservedToken returns the token of a call reserved in window.
func ReservedToken(window int64) string { return "r:" + strconv.FormatInt(window, 10) }

// FreeToken is the token of a free call.
const FreeToken = "f"

// ProbeToken returns the token of the probe owned by owner.
func ProbeToken(owner string) string { return "p:" + owner }

// ParseToken returns the kind of tok ('r', 'f', 'p' or 0 for none or an
// unknown token), its window (r) and its owner (p).
func ParseToken(tok string) (kind byte, window int64, owner string) {
	switch k, v, _ := strings.Cut(tok, ":"); k {
	case "r":
		w, err := strconv.ParseInt(v, 10, 64)
		if err != nil || w == 0 {
			return 0, 0, ""
		}
		return 'r', w, ""
	case "f":
		return 'f', 0, ""
	case "p":
		if v == "" {
			return 0, 0, ""
		}
		return 'p', 0, v
	}
	return 0, 0, ""
}
