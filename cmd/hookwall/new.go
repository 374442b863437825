package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/hookwall/hookwall/cmd/internal/scaffold"
	"github.com/hookwall/hookwall/shared/base/repo"
)

// generateCommand is what `make generate` runs: it writes the handler
// settings into template.yaml and the README.
var generateCommand = []string{"go", "run", "./cmd/hookwall-gen"}

// runGenerate runs generateCommand in the module at root, its output to w.
func runGenerate(ctx context.Context, root string, w io.Writer) error {
	c := exec.CommandContext(ctx, generateCommand[0], generateCommand[1:]...)
	c.Dir, c.Stdout, c.Stderr = root, w, w
	if err := c.Run(); err != nil {
		return fmt.Errorf("%s: %w", strings.Join(generateCommand, " "), err)
	}
	return nil
}

// newHandlerJSON is what `new handler --json` prints.
type newHandlerJSON struct {
	Team string `json:"team"`
	scaffold.Result
	Generated []string `json:"generated"`
}

func (a *app) newHandler(ctx context.Context, args []string) error {
	const cmd = "new handler"
	fs := a.flagSet(cmd)
	dir := fs.String("dir", "", "the module's root (default: found from the working directory up)")
	event := fs.String("event", scaffold.DefaultEvent, "the event the handler is registered for, provider/type")
	pos, err := a.parse(cmd, fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef(cmd, "want one team name, e.g. hookwall new handler billing (got %d arguments)", len(pos))
	}
	team := pos[0]
	if err := scaffold.CheckTeam(team); err != nil {
		return usagef(cmd, "%v", err)
	}
	root := *dir
	if root == "" {
		if root, err = repo.FindRoot(a.wd); err != nil {
			return usagef(cmd, "%v: run it in the repository, or give --dir", err)
		}
	}
	res, err := scaffold.NewHandler(scaffold.Options{Root: root, Team: team, Event: *event})
	if errors.Is(err, scaffold.ErrInvalid) {
		return usagef(cmd, "%v", err)
	}
	if err != nil {
		return err
	}
	if !a.json {
		for _, f := range res.Created {
			fmt.Fprintln(a.stdout, "created "+f)
		}
		fmt.Fprintf(a.stdout, "changed %s: %s.Team before the built-in forwarder\n", res.Changed[0], team)
	}
	generated := []string{"template.yaml", "README.md"}
	// The generator's output is for people; with --json stdout is the JSON alone.
	if err := a.generate(ctx, root, a.stderr); err != nil {
		return fmt.Errorf("the package and its entry are written, but the handler settings are not generated (%w); "+
			"fix what the generator says, then run: cd %s && make generate", err, root)
	}
	if a.json {
		return a.writeJSON(newHandlerJSON{Team: team, Result: res, Generated: generated})
	}
	fmt.Fprintf(a.stdout, "generated %s (%s)\n", strings.Join(generated, ", "), strings.Join(generateCommand, " "))
	fmt.Fprintf(a.stdout, `
Handler %s on %s events; the team is off until %s is set.
Next:
  go test ./%s/
  %s=http://127.0.0.1:9000 make run    # any server that answers 2xx; see the README's "Add a handler"
`, res.Handler, res.Event, res.Setting, filepath.ToSlash(res.Dir), res.Setting)
	return nil
}
