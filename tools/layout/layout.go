// Package layout checks the repository's shape where a rule is about code
// rather than behaviour: the product module's go.mod requires none of the
// development harnesses' dependencies (they are the dev/ module's), and no
// function outside tests is longer than a limit (a long function is split
// into named stages). Its tests run the checks on the repository.
package layout

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/mod/modfile"
)

// MaxFuncLines is the longest a function outside tests may be, from its
// func keyword to its closing brace.
const MaxFuncLines = 120

// HarnessOnly are the modules only the development harnesses use: the
// product module's go.mod must not require them.
var HarnessOnly = []string{
	"github.com/Shopify/toxiproxy/v2", // storm's chaos scenarios
	"github.com/rs/zerolog",           // toxiproxy's logs
	"github.com/chromedp/chromedp",    // the local page's browser test
}

// Func is a function (or function literal) found by [LongFuncs].
type Func struct {
	Path  string // relative to the root walked
	Line  int
	Name  string // "func literal" for a literal
	Lines int
}

func (f Func) String() string {
	return fmt.Sprintf("%s:%d %s (%d lines)", f.Path, f.Line, f.Name, f.Lines)
}

// LongFuncs returns the functions and function literals of the .go files
// under root, tests (_test.go) left out, longer than limit lines. It skips
// directories named testdata or node_modules and those starting with a dot
// (.git, .local, ...).
func LongFuncs(root string, limit int) ([]Func, error) {
	var long []Func
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		found, err := longFuncsIn(root, p, limit)
		long = append(long, found...)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("layout: %w", err)
	}
	return long, nil
}

// longFuncsIn returns the functions of the file p longer than limit lines.
func longFuncsIn(root, p string, limit int) ([]Func, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
	if err != nil {
		return nil, fmt.Errorf("parse: %w", err)
	}
	rel, err := filepath.Rel(root, p)
	if err != nil {
		return nil, err
	}
	var long []Func
	ast.Inspect(f, func(n ast.Node) bool {
		var body *ast.BlockStmt
		name := "func literal"
		switch x := n.(type) {
		case *ast.FuncDecl:
			body, name = x.Body, x.Name.Name
		case *ast.FuncLit:
			body = x.Body
		}
		if body != nil {
			start := fset.Position(n.Pos()).Line
			if lines := fset.Position(body.Rbrace).Line - start + 1; lines > limit {
				long = append(long, Func{Path: filepath.ToSlash(rel), Line: start, Name: name, Lines: lines})
			}
		}
		return true
	})
	return long, nil
}

// Required returns those of modules that the go.mod file at path requires
// (directly or as indirect).
func Required(path string, modules []string) ([]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("layout: %w", err)
	}
	mf, err := modfile.ParseLax(path, data, nil)
	if err != nil {
		return nil, fmt.Errorf("layout: %s: %w", path, err)
	}
	var found []string
	for _, r := range mf.Require {
		for _, m := range modules {
			if r.Mod.Path == m {
				found = append(found, m)
			}
		}
	}
	return found, nil
}
