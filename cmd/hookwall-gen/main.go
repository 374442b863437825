// Command hookwall-gen writes the handler settings the team packages
// declare (process.Setting, listed in their platform.Team) into template.yaml (the parameters and the
// processor's and compensator's Environment) and the README's
// handler-settings table, between their marker comments. `make generate`
// runs it from the module's root; -check only reports drift (exit 1).
//
//	go run ./cmd/hookwall-gen [-root .] [-check]
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/hookwall/hookwall/cmd/internal/settingsgen"
	"github.com/hookwall/hookwall/functions/processor/handlers"
	"github.com/hookwall/hookwall/shared/config/setting"
	"github.com/hookwall/hookwall/shared/engine/platform"
)

func main() {
	root := flag.String("root", ".", "the module's root")
	check := flag.Bool("check", false, "report the files that drifted from the declarations, write nothing")
	flag.Parse()
	if err := run(*root, *check); err != nil {
		fmt.Fprintln(os.Stderr, "hookwall-gen:", err)
		os.Exit(1)
	}
}

// Declared returns the handler settings of every team, in declaration
// order: read from the teams' declarations (handlers.Teams), no Register
// run.
func Declared() ([]setting.Setting, error) {
	return platform.Settings(handlers.Teams...)
}

func run(root string, check bool) error {
	settings, err := Declared()
	if err != nil {
		return err
	}
	if check {
		drifted, err := settingsgen.Drift(root, settings)
		if err != nil {
			return err
		}
		if len(drifted) > 0 {
			return fmt.Errorf("%v drifted from the handler settings the teams declare: run make generate", drifted)
		}
		return nil
	}
	files, err := settingsgen.Generate(root, settings)
	if err != nil {
		return err
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(root, name), b, 0o644); err != nil {
			return err
		}
	}
	return nil
}
