package iaminventory

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/hookwall/hookwall/tools/iaminventory/reach"
	"github.com/hookwall/hookwall/tools/iaminventory/samtmpl"
)

// Paths of the files the inventory reads and writes, relative to the
// repository root.
const (
	InventoryPath = "iam/inventory.json"
	RulesPath     = "iam/resources.json"
	TemplatePath  = "template.yaml"
)

// GeneratedBy is the inventory's generated_by: how to regenerate it.
const GeneratedBy = "make inventory"

// DefaultFunctions are Hookwall's Lambda functions, each the main package
// functions/<name>.
var DefaultFunctions = []string{"receiver", "processor", "compensator", "pretraffic"}

// Inventory is iam/inventory.json.
type Inventory struct {
	GeneratedBy string   `json:"generated_by"`
	Functions   []string `json:"functions"`
	Rows        []Row    `json:"rows"`
}

// Row is one AWS operation a function can call on one resource.
type Row struct {
	// Function is the Lambda function ("receiver").
	Function string `json:"function"`
	// Operation is the IAM service prefix and the SDK operation
	// ("sqs:SendMessageBatch"), or the API AWS calls ("kms:Decrypt").
	Operation string `json:"operation"`
	// Actions are the IAM actions it needs, sorted.
	Actions []string `json:"actions"`
	// Resource is the logical resource (iam/README.md).
	Resource string `json:"resource"`
	// When is the template parameter that must be non-empty for the row to
	// exist ("" always).
	When string `json:"when"`
	// Context are the IAM condition keys the request carries.
	Context map[string]string `json:"context"`
	// Sites are where the call is made, sorted.
	Sites []string `json:"sites"`
}

// Key identifies a row: rows with equal keys are merged. The context is
// part of it: the same KMS action through SQS and through DynamoDB are two
// rows.
func (r Row) Key() string {
	ctx := make([]string, 0, len(r.Context))
	for k, v := range r.Context {
		ctx = append(ctx, k+"="+v)
	}
	sort.Strings(ctx)
	return strings.Join([]string{r.Function, r.Operation, r.Resource, r.When, strings.Join(ctx, ",")}, " ")
}

// String names the row in messages.
func (r Row) String() string {
	s := r.Function + " " + r.Operation + " on " + r.Resource
	if r.When != "" {
		s += " when " + r.When
	}
	if len(r.Context) > 0 {
		b, _ := json.Marshal(r.Context)
		s += " context " + string(b)
	}
	return s
}

// Options say what to analyze.
type Options struct {
	// Root is the repository root.
	Root string
	// Functions are the functions to analyze (nil: DefaultFunctions).
	Functions []string
	// Overlay replaces or adds source files (absolute paths) for the
	// analysis only, as packages.Config.Overlay.
	Overlay map[string][]byte
}

// Analysis is the static analysis of every function: the expensive part,
// done once.
type Analysis struct {
	Functions []string
	ByFunc    map[string]*reach.Analysis
	Program   *reach.Program
}

// Analyze loads the functions' main packages (one load, one SSA program,
// one call graph) and finds the SDK calls each can reach.
func Analyze(opts Options) (*Analysis, error) {
	fns := opts.Functions
	if fns == nil {
		fns = DefaultFunctions
	}
	mains := map[string]string{}
	for _, f := range fns {
		mains[f] = "./functions/" + f
	}
	prog, err := reach.Load(reach.Config{Dir: opts.Root, Mains: mains, Overlay: opts.Overlay})
	if err != nil {
		return nil, err
	}
	a := &Analysis{Functions: slices.Clone(fns), ByFunc: map[string]*reach.Analysis{}, Program: prog}
	for _, f := range fns {
		if a.ByFunc[f], err = prog.Analyze(f); err != nil {
			return nil, err
		}
	}
	return a, nil
}

// Excluded is a call site a rule excludes from the inventory.
type Excluded struct {
	Site reach.Site
	Why  string
}

// Result is an inventory with what the binding found wrong and left out.
type Result struct {
	Inventory *Inventory
	// Problems are sites without a binding, bindings without a site, and
	// the template's gaps: the inventory is not to be trusted while there
	// are any.
	Problems []string
	// Excluded are the sites the rules exclude, with why.
	Excluded []Excluded
}

// Build binds the analysis's call sites with rules and adds the calls AWS
// makes with each function's role, read from the template.
func Build(a *Analysis, rules *Rules, tmpl *samtmpl.Template) *Result {
	res := &Result{Inventory: &Inventory{GeneratedBy: GeneratedBy, Functions: slices.Clone(a.Functions)}}
	used := make([]bool, len(rules.Rules))
	var rows []Row
	for _, f := range a.Functions {
		for _, s := range a.ByFunc[f].Sites {
			op := ServicePrefix(s.Service) + ":" + s.Operation
			indexes := []string{""}
			if s.Indexes != nil {
				indexes = s.Indexes
			}
			for _, index := range indexes {
				rule, err := rules.bind(s, op, index, used)
				if err != nil {
					res.Problems = append(res.Problems, err.Error())
					continue
				}
				if rule.Exclude {
					res.Excluded = append(res.Excluded, Excluded{Site: s, Why: rule.Why})
					continue
				}
				for _, r := range rule.Resources {
					rows = append(rows, Row{Function: f, Operation: op, Actions: Actions(op, s.Items),
						Resource: r, When: rule.When, Context: map[string]string{}, Sites: []string{s.Where()}})
				}
			}
		}
	}
	for i, u := range used {
		if !u {
			res.Problems = append(res.Problems, fmt.Sprintf("binding %s in iam/resources.json matches no reachable call site", rules.Rules[i]))
		}
	}
	awsRows, problems := roleRows(a.Functions, rows, tmpl)
	res.Problems = append(res.Problems, problems...)
	res.Inventory.Rows = merge(append(rows, awsRows...))
	return res
}

// Generate analyzes the repository at opts.Root and builds its inventory
// from its iam/resources.json and template.yaml.
func Generate(opts Options) (*Result, *Analysis, error) {
	rules, tmpl, err := ReadInputs(opts.Root)
	if err != nil {
		return nil, nil, err
	}
	a, err := Analyze(opts)
	if err != nil {
		return nil, nil, err
	}
	return Build(a, rules, tmpl), a, nil
}

// ReadInputs reads the bindings and the template of the repository at root.
func ReadInputs(root string) (*Rules, *samtmpl.Template, error) {
	data, err := os.ReadFile(filepath.Join(root, RulesPath))
	if err != nil {
		return nil, nil, err
	}
	rules, err := ParseRules(data)
	if err != nil {
		return nil, nil, err
	}
	data, err = os.ReadFile(filepath.Join(root, TemplatePath))
	if err != nil {
		return nil, nil, err
	}
	tmpl, err := samtmpl.Parse(data)
	if err != nil {
		return nil, nil, err
	}
	return rules, tmpl, nil
}

// merge merges the rows with equal keys (their actions and sites united)
// and sorts them by function, operation, resource, when and context.
func merge(rows []Row) []Row {
	byKey := map[string]*Row{}
	var keys []string
	for _, r := range rows {
		k := r.Key()
		m := byKey[k]
		if m == nil {
			c := r
			c.Actions, c.Sites = nil, nil
			m = &c
			byKey[k] = m
			keys = append(keys, k)
		}
		m.Actions = union(m.Actions, r.Actions)
		m.Sites = union(m.Sites, r.Sites)
	}
	out := make([]Row, 0, len(keys))
	for _, k := range keys {
		out = append(out, *byKey[k])
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Function != b.Function {
			return a.Function < b.Function
		}
		if a.Operation != b.Operation {
			return a.Operation < b.Operation
		}
		if a.Resource != b.Resource {
			return a.Resource < b.Resource
		}
		return a.Key() < b.Key()
	})
	return out
}

// union returns the sorted union of a and b, without duplicates.
func union(a, b []string) []string {
	out := append(slices.Clone(a), b...)
	sort.Strings(out)
	return slices.Compact(out)
}

// Marshal returns the inventory as iam/inventory.json holds it.
func (inv *Inventory) Marshal() ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(inv); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// ParseInventory reads iam/inventory.json.
func ParseInventory(data []byte) (*Inventory, error) {
	var inv Inventory
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&inv); err != nil {
		return nil, fmt.Errorf("inventory.json: %w", err)
	}
	return &inv, nil
}
