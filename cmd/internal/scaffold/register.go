package scaffold

import (
	"bytes"
	"errors"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"path"
	"slices"
	"strconv"

	"github.com/hookwall/hookwall/shared/repo"
)

// forwardPath is the import path of the built-in forwarder, which handlers.go
// registers last.
const forwardPath = repo.Module + "/" + HandlersDir + "/forward"

// addTeam returns handlers.go (src) with team's entry: its import, and the
// call team.Register(r) in Register after the last team's and before the
// built-in forwarder's. Everything else stays as it is.
func addTeam(src []byte, team string) ([]byte, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "handlers.go", src, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	teamPath := repo.Module + "/" + HandlersDir + "/" + team
	var forwardImport *ast.ImportSpec
	for _, imp := range f.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		name := path.Base(p)
		if imp.Name != nil {
			name = imp.Name.Name
		}
		switch {
		case p == teamPath:
			return nil, fmt.Errorf("%w team %q: already imported", ErrInvalid, team)
		case name == team:
			return nil, fmt.Errorf("%w team name %q: handlers.go imports %s under that name", ErrInvalid, team, p)
		case p == forwardPath:
			forwardImport = imp
		}
	}
	if forwardImport == nil {
		return nil, errors.New("no import of the forwarder (" + forwardPath + ")")
	}
	fn := registerFunc(f)
	if fn == nil {
		return nil, errors.New("no func Register(r *process.Registry)")
	}
	param := fn.Type.Params.List[0].Names[0].Name
	at := slices.IndexFunc(fn.Body.List, func(s ast.Stmt) bool { return callsRegister(s, localName(forwardImport)) })
	if at < 0 {
		return nil, errors.New("Register does not call the forwarder's Register")
	}
	entry := team + ".Register(" + param + ")"
	// The entry goes after the statement before the forwarder's (the last
	// team's), so that the comment above the forwarder stays with it; with
	// no team yet, first in the body.
	var insert edit
	if at > 0 {
		insert = edit{lineEnd(src, fset.Position(fn.Body.List[at-1].End()).Offset), "\n\t" + entry}
	} else {
		insert = edit{fset.Position(fn.Body.Lbrace).Offset + 1, "\n\t" + entry + "\n"}
	}
	imp := edit{lineEnd(src, fset.Position(forwardImport.End()).Offset), "\n\t" + strconv.Quote(teamPath)}
	out := apply(src, imp, insert) // imp comes first in the file
	return format.Source(out)      // gofmt sorts the new import into its group
}

// lineEnd returns the offset of the end of the line holding off (its
// newline), so that an insertion there keeps a trailing comment on its line.
func lineEnd(src []byte, off int) int {
	if i := bytes.IndexByte(src[off:], '\n'); i >= 0 {
		return off + i
	}
	return len(src)
}

// edit inserts text at a byte offset.
type edit struct {
	at   int
	text string
}

// apply applies edits given in increasing order of offset.
func apply(src []byte, edits ...edit) []byte {
	out := make([]byte, 0, len(src)+64)
	last := 0
	for _, e := range edits {
		out = append(out, src[last:e.at]...)
		out = append(out, e.text...)
		last = e.at
	}
	return append(out, src[last:]...)
}

// registerFunc returns func Register(r *process.Registry) of f, or nil.
func registerFunc(f *ast.File) *ast.FuncDecl {
	for _, d := range f.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if ok && fn.Recv == nil && fn.Name.Name == "Register" && fn.Body != nil &&
			fn.Type.Params != nil && len(fn.Type.Params.List) == 1 && len(fn.Type.Params.List[0].Names) == 1 {
			return fn
		}
	}
	return nil
}

// localName is the name an import is used under.
func localName(imp *ast.ImportSpec) string {
	if imp.Name != nil {
		return imp.Name.Name
	}
	p, _ := strconv.Unquote(imp.Path.Value)
	return path.Base(p)
}

// callsRegister reports whether s is the statement pkg.Register(...).
func callsRegister(s ast.Stmt, pkg string) bool {
	es, ok := s.(*ast.ExprStmt)
	if !ok {
		return false
	}
	call, ok := es.X.(*ast.CallExpr)
	if !ok {
		return false
	}
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok || sel.Sel.Name != "Register" {
		return false
	}
	x, ok := sel.X.(*ast.Ident)
	return ok && x.Name == pkg
}
