package scaffold

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"go/format"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"text/template"

	"github.com/hookwall/hookwall/shared/base/repo"
)

// HandlersDir is where the team packages live, relative to the module root.
const HandlersDir = "functions/processor/handlers"

// DefaultEvent is the event a new handler is registered for unless told
// otherwise: a LINE message.
const DefaultEvent = "line/message"

// ErrInvalid marks a request that cannot be carried out as given (a bad
// team name, a team that exists, an unknown event): a usage error.
var ErrInvalid = errors.New("invalid")

// Options says what handler package to write.
type Options struct {
	// Root is the module's root directory (required).
	Root string
	// Team is the new team's package name (required): lower-case letters
	// and digits, starting with a letter.
	Team string
	// Event is the event the handler is registered for, provider/type
	// (optional; default [DefaultEvent]). A type the provider package
	// declares (e.g. line.Message) is used as it is; another gets a local
	// payload type in the new package.
	Event string
}

// Result says what [NewHandler] wrote (and, as JSON, what `hookwall new
// handler --json` prints).
type Result struct {
	// Dir is the new package's directory, relative to the root.
	Dir string `json:"dir"`
	// Created are the files written, relative to the root.
	Created []string `json:"created"`
	// Changed are the files edited (handlers.go), relative to the root.
	Changed []string `json:"changed"`
	// Handler is the registered handler's name; Setting the variable of
	// the team's setting.
	Handler string `json:"handler"`
	Setting string `json:"setting"`
	// Event is the event the handler is registered for, provider/type.
	Event string `json:"event"`
}

//go:embed templates/*.tmpl
var templateFS embed.FS

var templates = template.Must(template.New("").Funcs(template.FuncMap{
	// tableSetting turns the team's API setting (BILLING_API_URL) into the
	// name of the table setting the Grants example shows (BILLING_TABLE).
	"tableSetting": func(setting string) string { return strings.TrimSuffix(setting, "_API_URL") + "_TABLE" },
}).ParseFS(templateFS, "templates/*.tmpl"))

// files are the new package's files and the templates they come from.
var files = []struct{ name, tmpl string }{
	{"doc.go", "doc.go.tmpl"},
	{"%s.go", "team.go.tmpl"},
	{"%s_test.go", "team_test.go.tmpl"},
}

// teamName is the form of a team's package name: short, lower case, no
// underscore (Go's package naming).
var teamName = regexp.MustCompile(`^[a-z][a-z0-9]{0,29}$`)

// reserved are names a team cannot take: directory names with a meaning to
// the go command, and names whose setting would start with a platform
// prefix (HOOKWALL_, AWS_).
var reserved = map[string]string{
	"internal": "an internal directory is not a team", "testdata": "the go command ignores testdata",
	"vendor": "the go command reserves vendor", "hookwall": "its setting would be a platform's HOOKWALL_ variable",
	"aws": "its setting would be a platform's AWS_ variable",
}

// CheckTeam returns an error wrapping [ErrInvalid] unless team can name a
// new team package: lower-case letters and digits, starting with a letter,
// at most 30; not a Go keyword or predeclared identifier, nor a reserved
// name.
func CheckTeam(team string) error {
	switch {
	case !teamName.MatchString(team):
		return fmt.Errorf("%w team name %q: want lower-case letters and digits, starting with a letter, at most 30 (a Go package name, e.g. billing)", ErrInvalid, team)
	case token.IsKeyword(team):
		return fmt.Errorf("%w team name %q: a Go keyword", ErrInvalid, team)
	case types.Universe.Lookup(team) != nil:
		return fmt.Errorf("%w team name %q: a predeclared Go identifier", ErrInvalid, team)
	case reserved[team] != "":
		return fmt.Errorf("%w team name %q: %s", ErrInvalid, team, reserved[team])
	}
	return nil
}

// view is what the templates are given.
type view struct {
	Team, Setting, Handler string
	Provider, Type         string
	Local                  bool   // the payload type is declared in the new package
	TypeExpr, DataType     string // in the team package: line.Message, line.MessageEvent (or EventType, Payload)
	TestTypeExpr           string // in the test package: line.Message (or billing.EventType)
	TestDataType           string // in the test package: line.MessageEvent (or billing.Payload)
	SampleFile             string // the real delivery the test runs on: events/bodies/line-message.json
	SampleExt              string // its extension in testdata/: json or xml
}

// NewHandler writes the package of a new team under [HandlersDir] and adds
// its entry to handlers.go. It checks everything first and writes nothing
// when a check fails; an error wrapping [ErrInvalid] is the caller's
// mistake (the team exists, a bad name, an unknown event).
func NewHandler(o Options) (Result, error) {
	if !repo.IsRoot(o.Root) {
		return Result{}, fmt.Errorf("%w root %s: no go.mod of %s there", ErrInvalid, o.Root, repo.Module)
	}
	if err := CheckTeam(o.Team); err != nil {
		return Result{}, err
	}
	dir := filepath.Join(HandlersDir, o.Team)
	if _, err := os.Lstat(filepath.Join(o.Root, dir)); err == nil {
		return Result{}, fmt.Errorf("%w team %q: %s exists", ErrInvalid, o.Team, dir)
	} else if !errors.Is(err, os.ErrNotExist) {
		return Result{}, fmt.Errorf("scaffold: %w", err)
	}
	if o.Event == "" {
		o.Event = DefaultEvent
	}
	ev, err := findEvent(o.Root, o.Event)
	if err != nil {
		return Result{}, err
	}
	v := newView(o.Team, ev)
	sample, err := findSample(o.Root, ev)
	if err != nil {
		return Result{}, err
	}
	v.SampleFile, v.SampleExt = filepath.ToSlash(sample.path), sample.ext
	out := map[string][]byte{}
	var created []string
	for _, f := range files {
		name := filepath.Join(dir, strings.ReplaceAll(f.name, "%s", o.Team))
		b, err := render(f.tmpl, v)
		if err != nil {
			return Result{}, err
		}
		out[name] = b
		created = append(created, name)
	}
	sampleName := filepath.Join(dir, "testdata", "sample."+sample.ext)
	out[sampleName] = sample.body
	created = append(created, sampleName)
	handlersGo := filepath.Join(HandlersDir, "handlers.go")
	old, err := os.ReadFile(filepath.Join(o.Root, handlersGo))
	if err != nil {
		return Result{}, fmt.Errorf("scaffold: %w", err)
	}
	listed, err := addTeam(old, o.Team)
	if err != nil {
		return Result{}, fmt.Errorf("scaffold: %s: %w", handlersGo, err)
	}
	if err := os.Mkdir(filepath.Join(o.Root, dir), 0o755); err != nil {
		return Result{}, fmt.Errorf("scaffold: %w", err)
	}
	if err := os.Mkdir(filepath.Join(o.Root, dir, "testdata"), 0o755); err != nil {
		return Result{}, fmt.Errorf("scaffold: %w", err)
	}
	for _, name := range created {
		if err := os.WriteFile(filepath.Join(o.Root, name), out[name], 0o644); err != nil {
			return Result{}, fmt.Errorf("scaffold: %w", err)
		}
	}
	if err := os.WriteFile(filepath.Join(o.Root, handlersGo), listed, 0o644); err != nil {
		return Result{}, fmt.Errorf("scaffold: %w", err)
	}
	return Result{Dir: dir, Created: created, Changed: []string{handlersGo}, Handler: v.Handler, Setting: v.Setting,
		Event: ev.provider + "/" + ev.typ}, nil
}

// newView names what the new package declares.
func newView(team string, ev event) view {
	v := view{Team: team, Provider: ev.provider, Type: ev.typ,
		Setting: strings.ToUpper(team) + "_API_URL",
		Handler: team + ".from-" + ev.provider + "-" + slug(ev.typ)}
	if ev.typeVar == "" {
		v.Local = true
		v.TypeExpr, v.DataType = "EventType", "Payload"
		v.TestTypeExpr, v.TestDataType = team+".EventType", team+".Payload"
		return v
	}
	v.TypeExpr, v.DataType = ev.pkg+"."+ev.typeVar, ev.pkg+"."+ev.dataType
	v.TestTypeExpr, v.TestDataType = v.TypeExpr, v.DataType
	return v
}

// slug returns s in lower case with every run of other characters than
// letters and digits as one '-'.
func slug(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			b.WriteRune(r)
			dash = false
			continue
		}
		dash = true
	}
	return b.String()
}

// render executes the template tmpl with v and formats the result as gofmt
// would (a template that makes invalid Go fails here).
func render(tmpl string, v view) ([]byte, error) {
	var buf bytes.Buffer
	if err := templates.ExecuteTemplate(&buf, tmpl, v); err != nil {
		return nil, fmt.Errorf("scaffold: %s: %w", tmpl, err)
	}
	b, err := format.Source(buf.Bytes())
	if err != nil {
		return nil, fmt.Errorf("scaffold: %s makes invalid Go: %w", tmpl, err)
	}
	return b, nil
}
