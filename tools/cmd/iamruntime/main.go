// Command iamruntime is `make iam-runtime`: the dynamic check of the static
// IAM inventory. It reads the runtime records that the functions' AWS
// clients wrote under HOOKWALL_IAM_RECORD (shared/aws/awsconf: JSON lines
// {"function","operation","resource"} in <dir>/<function>-<pid>.jsonl) and
// checks that every recorded (function, operation, resource) is a row of
// iam/inventory.json. It prints each one that is not, with the files that
// recorded it, and exits 1 if any (or if nothing was recorded); then a
// summary: the distinct triples recorded across how many files, and how
// many inventory rows no run exercised (informational: the AWS-made calls,
// the KMS rows, the error paths the tests do not reach).
//
//	go run ./cmd/iamruntime [-inventory ../iam/inventory.json] [-v] <record dir>
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// triple is a record, and the key of an inventory row.
type triple struct {
	Function  string `json:"function"`
	Operation string `json:"operation"`
	Resource  string `json:"resource"`
}

func (t triple) String() string { return t.Function + " " + t.Operation + " " + t.Resource }

func main() {
	inventory := flag.String("inventory", "iam/inventory.json", "the static inventory")
	verbose := flag.Bool("v", false, "list the recorded triples and the inventory rows never exercised")
	flag.Usage = func() {
		fmt.Fprintln(flag.CommandLine.Output(), "usage: iamruntime [-inventory iam/inventory.json] [-v] <record dir>")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 1 {
		flag.Usage()
		os.Exit(2)
	}
	ok, err := run(os.Stdout, *inventory, flag.Arg(0), *verbose)
	if err != nil {
		fmt.Fprintln(os.Stderr, "iam-runtime:", err)
		os.Exit(1)
	}
	if !ok {
		os.Exit(1)
	}
}

// run checks the records of dir against the inventory, reporting to out;
// ok is false when a record has no row.
func run(out io.Writer, inventoryPath, dir string, verbose bool) (ok bool, err error) {
	rows, nRows, err := readInventory(inventoryPath)
	if err != nil {
		return false, err
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	if err != nil {
		return false, err
	}
	if len(files) == 0 {
		return false, fmt.Errorf("no records (*.jsonl) in %s: run make test / make chaos / make sam-local-test with IAM_RECORD=%s first", dir, dir)
	}
	recorded := map[triple][]string{} // → the files that recorded it
	for _, f := range files {
		ts, err := readRecords(f)
		if err != nil {
			return false, err
		}
		for _, t := range ts {
			if fs := recorded[t]; len(fs) == 0 || fs[len(fs)-1] != f {
				recorded[t] = append(fs, f)
			}
		}
	}
	keys := make([]triple, 0, len(recorded))
	for t := range recorded {
		keys = append(keys, t)
	}
	sortTriples(keys)
	missing := 0
	for _, t := range keys {
		if rows[t] {
			if verbose {
				fmt.Fprintf(out, "ok       %s\n", t)
			}
			continue
		}
		missing++
		fs := recorded[t]
		more := ""
		if len(fs) > 3 {
			more = fmt.Sprintf(" and %d more", len(fs)-3)
			fs = fs[:3]
		}
		fmt.Fprintf(out, "MISSING  %s  (recorded in %s%s)\n", t, strings.Join(fs, ", "), more)
	}
	var unexercised []triple
	for t := range rows {
		if _, ok := recorded[t]; !ok {
			unexercised = append(unexercised, t)
		}
	}
	sortTriples(unexercised)
	if verbose {
		for _, t := range unexercised {
			fmt.Fprintf(out, "unused   %s\n", t)
		}
	}
	fmt.Fprintf(out, "iam-runtime: %d distinct (function, operation, resource) recorded across %d files; %d not in %s\n",
		len(recorded), len(files), missing, inventoryPath)
	fmt.Fprintf(out, "iam-runtime: %d of the inventory's %d distinct (function, operation, resource) (%d rows) never exercised at run time (informational; -v lists them)\n",
		len(unexercised), len(rows), nRows)
	return missing == 0, nil
}

// readInventory returns the (function, operation, resource) of every row,
// and the number of rows (several may share one: the KMS rows differ in
// their context only).
func readInventory(path string) (map[triple]bool, int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, 0, err
	}
	var inv struct {
		Rows []triple `json:"rows"`
	}
	if err := json.Unmarshal(b, &inv); err != nil {
		return nil, 0, fmt.Errorf("%s: %w", path, err)
	}
	if len(inv.Rows) == 0 {
		return nil, 0, fmt.Errorf("%s: no rows", path)
	}
	rows := map[triple]bool{}
	for i, r := range inv.Rows {
		if r.Function == "" || r.Operation == "" || r.Resource == "" {
			return nil, 0, fmt.Errorf("%s: row %d: function, operation and resource are required: %+v", path, i, r)
		}
		rows[r] = true
	}
	return rows, len(inv.Rows), nil
}

// readRecords returns the records of one file (blank lines skipped).
func readRecords(path string) ([]triple, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []triple
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		var t triple
		if err := json.Unmarshal([]byte(line), &t); err != nil || t.Function == "" || t.Operation == "" || t.Resource == "" {
			return nil, fmt.Errorf("%s:%d: not a record: %q", path, n, line)
		}
		out = append(out, t)
	}
	return out, sc.Err()
}

func sortTriples(ts []triple) {
	sort.Slice(ts, func(i, j int) bool {
		a, b := ts[i], ts[j]
		return slices.Compare([]string{a.Function, a.Operation, a.Resource}, []string{b.Function, b.Operation, b.Resource}) < 0
	})
}
