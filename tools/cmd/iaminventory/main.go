// Command iaminventory writes iam/inventory.json, the AWS calls each
// Hookwall Lambda function can make, derived from the code by static
// analysis (package iaminventory), or with -check reports how the committed
// file drifted from the code.
//
// Usage (from tools/, or anywhere with -root):
//
//	go run ./cmd/iaminventory            # write <root>/iam/inventory.json
//	go run ./cmd/iaminventory -check     # exit 1 when the committed file drifted from the code
//	go run ./cmd/iaminventory -explain   # also print each call site's call path, and the excluded ones
//
// Drift is a reachable call without a row, a row no longer reachable, or a
// row whose actions changed or whose sites were added or removed; sites
// that only moved to other lines are reported without failing. It exits 1,
// writing nothing, when a reachable call site has no binding in
// iam/resources.json or a binding matches no site.
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/hookwall/hookwall/tools/iaminventory"
)

func main() {
	root := flag.String("root", "", "the repository root (default: the nearest directory above the working directory whose go.mod is module github.com/hookwall/hookwall)")
	check := flag.Bool("check", false, "compare with the committed inventory instead of writing it; exit 1 on drift")
	explain := flag.Bool("explain", false, "print every call site with a call path from the function's roots, and the excluded sites")
	verbose := flag.Bool("v", false, "print the analysis's timings")
	flag.Parse()
	if err := run(os.Stdout, *root, *check, *explain, *verbose); err != nil {
		fmt.Fprintln(os.Stderr, "iaminventory:", err)
		os.Exit(1)
	}
}

func run(out io.Writer, root string, check, explain, verbose bool) error {
	if root == "" {
		var err error
		if root, err = findRoot(); err != nil {
			return err
		}
	}
	res, a, err := iaminventory.Generate(iaminventory.Options{Root: root})
	if err != nil {
		return err
	}
	if verbose {
		t := a.Program.Timings
		fmt.Fprintf(out, "load %v, ssa %v, cha %v, vta %v, per function %v\n", t.Load, t.SSA, t.CHA, t.VTA, t.PerFunction)
	}
	if explain {
		for _, f := range a.Functions {
			fa := a.ByFunc[f]
			fmt.Fprintf(out, "%s: roots %s\n", f, strings.Join(fa.Roots, ", "))
			for _, s := range fa.Sites {
				fmt.Fprintf(out, "  %s:%s %s\n", iaminventory.ServicePrefix(s.Service), s.Operation, s.Where())
				for _, step := range fa.Path(s) {
					fmt.Fprintf(out, "      %s\n", step)
				}
			}
		}
		for _, e := range res.Excluded {
			fmt.Fprintf(out, "excluded: %s %s:%s %s: %s\n", e.Site.Function, iaminventory.ServicePrefix(e.Site.Service), e.Site.Operation, e.Site.Where(), e.Why)
		}
	}
	if len(res.Problems) > 0 {
		return fmt.Errorf("the bindings do not fit the code:\n  %s", strings.Join(res.Problems, "\n  "))
	}
	data, err := res.Inventory.Marshal()
	if err != nil {
		return err
	}
	path := filepath.Join(root, iaminventory.InventoryPath)
	if check {
		committed, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		inv, err := iaminventory.ParseInventory(committed)
		if err != nil {
			return err
		}
		drift, moved := iaminventory.Diff(inv, res.Inventory)
		if len(drift) > 0 {
			return fmt.Errorf("%s drifted from the code (regenerate with `make inventory`):\n  %s", iaminventory.InventoryPath, strings.Join(drift, "\n  "))
		}
		if len(moved) > 0 {
			fmt.Fprintf(out, "%s: only line numbers moved (regenerate with `make inventory`):\n  %s\n", iaminventory.InventoryPath, strings.Join(moved, "\n  "))
		} else if !bytes.Equal(committed, data) {
			fmt.Fprintf(out, "%s: not formatted as the generator writes it (regenerate with `make inventory`)\n", iaminventory.InventoryPath)
		}
		fmt.Fprintf(out, "%s: %d rows, no drift\n", iaminventory.InventoryPath, len(res.Inventory.Rows))
		// The document follows the committed inventory (line moves included).
		doc, want, err := securityDoc(root, inv)
		if err != nil {
			return err
		}
		if doc != want {
			return fmt.Errorf("%s: its IAM section differs from %s (regenerate with `make inventory`)", iaminventory.SecurityDocPath, iaminventory.InventoryPath)
		}
		return nil
	}
	doc, want, err := securityDoc(root, res.Inventory)
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		return err
	}
	if doc != want {
		if err := os.WriteFile(filepath.Join(root, iaminventory.SecurityDocPath), []byte(want), 0o644); err != nil {
			return err
		}
	}
	fmt.Fprintf(out, "wrote %s: %d rows, and %s's IAM section\n", iaminventory.InventoryPath, len(res.Inventory.Rows), iaminventory.SecurityDocPath)
	return nil
}

// securityDoc returns docs/SECURITY.md as it is under root and as it is
// with its IAM section generated from inv.
func securityDoc(root string, inv *iaminventory.Inventory) (have, want string, err error) {
	b, err := os.ReadFile(filepath.Join(root, iaminventory.SecurityDocPath))
	if err != nil {
		return "", "", err
	}
	want, err = iaminventory.WithSecurityDoc(string(b), inv)
	return string(b), want, err
}

// findRoot returns the nearest directory at or above the working directory
// whose go.mod declares the Hookwall module.
func findRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && strings.HasPrefix(string(data), "module github.com/hookwall/hookwall\n") {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no directory above the working directory has go.mod of module github.com/hookwall/hookwall: give -root")
		}
		dir = parent
	}
}
