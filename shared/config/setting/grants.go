package setting

import (
	"fmt"
	"regexp"
	"strings"
)

var iamAction = regexp.MustCompile(`^[a-z0-9-]+:[A-Za-z0-9]+$`)

// checkGrants reports a malformed Grants declaration of the setting name:
// each action service:Action without a wildcard, all of one service (the
// resource the value names is of that service).
func checkGrants(name string, grants []string) error {
	for _, a := range grants {
		if !iamAction.MatchString(a) {
			return fmt.Errorf("setting %s: Grants: %q: want service:Action, no wildcard", name, a)
		}
		if svc, _, _ := strings.Cut(grants[0], ":"); !strings.HasPrefix(a, svc+":") {
			return fmt.Errorf("setting %s: Grants: %q and %q: the actions on one resource are of one service", name, grants[0], a)
		}
	}
	return nil
}
