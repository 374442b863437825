package process

import (
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/hookwall/hookwall/shared/internal/registry"
)

// Setting declares one setting of a team's handlers: an environment
// variable of the processor and the compensator, read in Register through
// the registry's getter of its kind ([Registry.String], [Registry.URL],
// [Registry.Duration], [Registry.Int]). The declaration is the only place a
// setting is written by hand: `make generate` writes its template.yaml
// parameter and environment entries and its row of the README's
// handler-settings table from it.
//
// Read every setting at the top of Register, before any early return, so
// that the generator (which registers with an empty environment) sees it.
// A value the getter rejects makes the processor and the compensator fail
// to start, with an error naming the variable.
//
//	var leadsURL = process.Setting{Name: "CRM_LEADS_URL", Doc: "the CRM's leads API (empty: the crm handlers are off)"}
//
//	func Register(r *process.Registry) {
//		base := r.URL(leadsURL)
//		if base == "" {
//			return
//		}
//		...
//	}
type Setting struct {
	// Name is the environment variable: A-Z, 0-9 and _, not starting with
	// HOOKWALL_ or AWS_ (the platform's). Two teams cannot share a name
	// unless they declare it identically.
	Name string
	// Default is the value when the variable is unset or empty (optional;
	// it must be valid).
	Default string
	// Doc is one line for the README's table and the template's parameter.
	Doc string
	// Pattern, if set, is a regular expression the whole value must match;
	// it is the template parameter's AllowedPattern too (optional).
	Pattern string
	// Example is a valid value the README's table shows and the test that
	// registers every team uses (optional; default: Default, else one made
	// up from the kind).
	Example string
	// Check, if set, validates a value further; its error is reported with
	// the variable's name (optional).
	Check func(value string) error
	// Grants, if set, says that the value names an AWS resource the team's
	// code calls, and lists the IAM actions it calls there: `make generate`
	// grants exactly those, on that resource only, to the processor's and
	// the compensator's roles when the template parameter is set. The
	// service of the actions says how the value names the resource:
	// dynamodb: a table's name, sqs: a queue's name, any other service: the
	// resource's ARN (optional).
	//
	//	Grants: []string{"dynamodb:GetItem", "dynamodb:UpdateItem"}
	Grants []string
}

// String returns the value of s, a string ("" when unset and without a default).
func (r *Registry) String(s Setting) string { return r.setting(s, registry.KindString) }

// URL returns the value of s, an absolute http(s) URL ("" when unset and
// without a default).
func (r *Registry) URL(s Setting) string { return r.setting(s, registry.KindURL) }

// Duration returns the value of s, a Go duration such as "30s" (0 when
// unset and without a default).
func (r *Registry) Duration(s Setting) time.Duration {
	d, _ := time.ParseDuration(r.setting(s, registry.KindDuration)) // validated; "" is 0
	return d
}

// Int returns the value of s, a decimal integer (0 when unset and without a
// default).
func (r *Registry) Int(s Setting) int {
	n, _ := strconv.Atoi(r.setting(s, registry.KindInt)) // validated; "" is 0
	return n
}

// setting declares s with kind, owned by the package of the getter's caller.
func (r *Registry) setting(s Setting, kind registry.Kind) string {
	return r.table().Setting(registry.Decl{Name: s.Name, Kind: kind, Default: s.Default, Doc: s.Doc,
		Pattern: s.Pattern, Example: s.Example, Check: s.Check, Owner: callerPackage(3), Grants: s.Grants})
}

// callerPackage returns the import path of the function skip frames up,
// less the module's path.
func callerPackage(skip int) string {
	pc, _, _, ok := runtime.Caller(skip)
	if !ok {
		return ""
	}
	fn := runtime.FuncForPC(pc)
	if fn == nil {
		return ""
	}
	name := fn.Name() // e.g. github.com/hookwall/hookwall/functions/processor/handlers/crm.Register
	slash := strings.LastIndexByte(name, '/')
	if dot := strings.IndexByte(name[slash+1:], '.'); dot >= 0 {
		name = name[:slash+1+dot]
	}
	return strings.TrimPrefix(name, "github.com/hookwall/hookwall/")
}

// Use returns the first dependency of type T the platform gave the
// registry, and whether there is one. The processor and the compensator
// give every team the tenants document (*tenants.Tenants), the AWS
// configuration (aws.Config) and a DynamoDB client (*dynamodb.Client, also
// as store.UpdateItemAPI); a test gives its own (shared/dispatch.BuildRegistry).
//
//	db, ok := process.Use[store.UpdateItemAPI](r)
//	if !ok {
//		panic("approvals: no DynamoDB client")
//	}
func Use[T any](r *Registry) (T, bool) {
	for _, d := range r.table().Deps() {
		if v, ok := d.(T); ok {
			return v, true
		}
	}
	var zero T
	return zero, false
}
