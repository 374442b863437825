package process

import (
	"fmt"
	"strconv"
	"time"

	"github.com/hookwall/hookwall/shared/config/setting"
)

// String returns the value of s, a setting of kind setting.KindString or
// setting.KindURL (an absolute http(s) URL): "" when unset and without a
// default.
func (r *Registry) String(s setting.Setting) string {
	if s.Kind == setting.KindURL {
		return r.value(s, setting.KindURL)
	}
	return r.value(s, setting.KindString)
}

// Duration returns the value of s, a setting of kind setting.KindDuration
// (a Go duration such as "30s"): 0 when unset and without a default.
func (r *Registry) Duration(s setting.Setting) time.Duration {
	d, _ := time.ParseDuration(r.value(s, setting.KindDuration)) // validated; "" is 0
	return d
}

// Int returns the value of s, a setting of kind setting.KindInt (a decimal
// integer): 0 when unset and without a default.
func (r *Registry) Int(s setting.Setting) int {
	n, _ := strconv.Atoi(r.value(s, setting.KindInt)) // validated; "" is 0
	return n
}

// value returns the value of s, read as kind, for the team registering
// now. Reading a setting of another kind, or one the team's Settings do
// not list, panics: a programmer error, which platform.Build reports.
func (r *Registry) value(s setting.Setting, kind setting.Kind) string {
	if s.Kind != kind {
		panic(fmt.Sprintf("process: setting %s is declared of kind %q, read as %q", s.Name, s.Kind, kind))
	}
	v, ok := r.table().Value(s.Name)
	if !ok {
		panic(fmt.Sprintf("process: setting %s is not in the Settings of the team registering (%q)", s.Name, r.table().Owner()))
	}
	return v
}
