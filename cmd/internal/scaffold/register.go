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

	"github.com/hookwall/hookwall/shared/base/repo"
)

// forwardPath is the import path of the built-in forwarder, which handlers.go
// registers last.
const forwardPath = repo.Module + "/" + HandlersDir + "/forward"

// addTeam returns handlers.go (src) with team's entry: its import, and the
// element team.Team in the list Teams after the last team's and before the
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
	list := teamsList(f)
	if list == nil {
		return nil, errors.New("no var Teams = []platform.Team{...}")
	}
	at := slices.IndexFunc(list.Elts, func(e ast.Expr) bool { return isTeam(e, localName(forwardImport)) })
	if at < 0 {
		return nil, errors.New("Teams does not list the forwarder's Team")
	}
	entry := team + ".Team,"
	// The entry goes after the element before the forwarder's (the last
	// team's), so that the comment above the forwarder stays with it; with
	// no team yet, first in the list.
	var insert edit
	if at > 0 {
		insert = edit{lineEnd(src, fset.Position(list.Elts[at-1].End()).Offset), "\n\t" + entry}
	} else {
		insert = edit{fset.Position(list.Lbrace).Offset + 1, "\n\t" + entry + "\n"}
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

// teamsList returns the list of var Teams = []platform.Team{...} of f, or nil.
func teamsList(f *ast.File) *ast.CompositeLit {
	for _, d := range f.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok || gd.Tok != token.VAR {
			continue
		}
		for _, spec := range gd.Specs {
			vs, ok := spec.(*ast.ValueSpec)
			if ok && len(vs.Names) == 1 && vs.Names[0].Name == "Teams" && len(vs.Values) == 1 {
				lit, _ := vs.Values[0].(*ast.CompositeLit)
				return lit
			}
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

// isTeam reports whether e is the element pkg.Team.
func isTeam(e ast.Expr, pkg string) bool {
	sel, ok := e.(*ast.SelectorExpr)
	if !ok || sel.Sel.Name != "Team" {
		return false
	}
	x, ok := sel.X.(*ast.Ident)
	return ok && x.Name == pkg
}
