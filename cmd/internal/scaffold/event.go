package scaffold

import (
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// ProvidersDir is where the provider packages live, relative to the root.
const ProvidersDir = "shared/protocol/provider"

// event is the event a new handler is registered for.
type event struct {
	provider, typ string // the route's provider name and the event type
	// pkg is the provider package's name, typeVar its exported
	// webhook.Type variable for typ and dataType the type's payload type
	// (line, Message, MessageEvent); typeVar is "" when the package
	// declares none for typ.
	pkg, typeVar, dataType string
}

var (
	providerName = regexp.MustCompile(`^[a-z][a-z0-9]*$`)
	typeName     = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.:-]*$`)
)

// findEvent resolves spec, provider/type, in the provider packages of the
// module at root.
func findEvent(root, spec string) (event, error) {
	p, typ, ok := strings.Cut(spec, "/")
	if !ok || !providerName.MatchString(p) || !typeName.MatchString(typ) {
		return event{}, fmt.Errorf("%w event %q: want provider/type, e.g. %s", ErrInvalid, spec, DefaultEvent)
	}
	dir := filepath.Join(root, ProvidersDir, p)
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		known, _ := typedEvents(root)
		return event{}, fmt.Errorf("%w event %q: no provider package %s/%s (typed events: %s)",
			ErrInvalid, spec, ProvidersDir, p, strings.Join(known, ", "))
	}
	decls, pkg, err := declaredTypes(dir)
	if err != nil {
		return event{}, err
	}
	ev := event{provider: p, typ: typ, pkg: pkg}
	for _, d := range decls {
		if d.name == typ {
			ev.typeVar, ev.dataType = d.typeVar, d.dataType
		}
	}
	return ev, nil
}

// typeDecl is one webhook.Type variable of a provider package.
type typeDecl struct{ name, typeVar, dataType string }

// declaredTypes returns the exported variables of the package in dir that
// are webhook.NewType[T](provider, "name") with a literal name, and the
// package's name.
func declaredTypes(dir string) ([]typeDecl, string, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, "", fmt.Errorf("scaffold: %w", err)
	}
	var out []typeDecl
	pkg := filepath.Base(dir)
	fset := token.NewFileSet()
	for _, path := range paths {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, "", fmt.Errorf("scaffold: %w", err)
		}
		pkg = f.Name.Name
		ast.Inspect(f, func(n ast.Node) bool {
			vs, ok := n.(*ast.ValueSpec)
			if !ok {
				return true
			}
			for i, name := range vs.Names {
				if i < len(vs.Values) && name.IsExported() {
					if typ, data, ok := newTypeCall(vs.Values[i]); ok {
						out = append(out, typeDecl{name: typ, typeVar: name.Name, dataType: data})
					}
				}
			}
			return false
		})
	}
	return out, pkg, nil
}

// newTypeCall recognises webhook.NewType[T](provider, "name") with T a type
// of the package itself, and returns the name and T.
func newTypeCall(e ast.Expr) (name, data string, ok bool) {
	call, ok := e.(*ast.CallExpr)
	if !ok || len(call.Args) != 2 {
		return "", "", false
	}
	idx, ok := call.Fun.(*ast.IndexExpr)
	if !ok {
		return "", "", false
	}
	fn, ok := idx.X.(*ast.SelectorExpr)
	if !ok || fn.Sel.Name != "NewType" {
		return "", "", false
	}
	if x, ok := fn.X.(*ast.Ident); !ok || x.Name != "webhook" {
		return "", "", false
	}
	t, ok := idx.Index.(*ast.Ident)
	if !ok || !t.IsExported() {
		return "", "", false
	}
	lit, ok := call.Args[1].(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return "", "", false
	}
	name, err := strconv.Unquote(lit.Value)
	if err != nil {
		return "", "", false
	}
	return name, t.Name, true
}

// typedEvents lists the provider/type of every typed event the provider
// packages declare, sorted.
func typedEvents(root string) ([]string, error) {
	dirs, err := os.ReadDir(filepath.Join(root, ProvidersDir))
	if err != nil {
		return nil, fmt.Errorf("scaffold: %w", err)
	}
	var out []string
	for _, d := range dirs {
		if !d.IsDir() {
			continue
		}
		decls, _, err := declaredTypes(filepath.Join(root, ProvidersDir, d.Name()))
		if err != nil {
			return nil, err
		}
		for _, t := range decls {
			out = append(out, d.Name()+"/"+t.name)
		}
	}
	slices.Sort(out)
	return out, nil
}

// SamplesDir holds the real deliveries of each provider's events, one file
// per event type: <provider>-<type>.json or .xml, the type in lower case
// with every other run of characters as '-' (events/bodies/line-message.json).
// `hookwall sign` sends them; a new team's test runs on its event's.
const SamplesDir = "events/bodies"

// sampleFile is the sample of an event type, read from SamplesDir.
type sampleFile struct {
	path, ext string // path from the root
	body      []byte
}

// findSample reads the sample delivery of ev: a new team's test runs its
// handler on it, so an event type without one cannot be scaffolded (the
// error says where to add the platform's documented example).
func findSample(root string, ev event) (sampleFile, error) {
	base := ev.provider + "-" + slug(ev.typ)
	for _, ext := range []string{"json", "xml"} {
		path := filepath.Join(SamplesDir, base+"."+ext)
		b, err := os.ReadFile(filepath.Join(root, path))
		if err == nil {
			return sampleFile{path: path, ext: ext, body: b}, nil
		}
		if !errors.Is(err, os.ErrNotExist) {
			return sampleFile{}, fmt.Errorf("scaffold: %w", err)
		}
	}
	return sampleFile{}, fmt.Errorf("%w event %s/%s: no sample delivery %s/%s.json (or .xml): add the platform's documented example of the event there, with {{id}} and {{now}} where its id and time go, so that the new team's test runs on a real one",
		ErrInvalid, ev.provider, ev.typ, SamplesDir, base)
}
