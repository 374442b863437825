package settings

import (
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// The configuration contract is written three times: here (what each
// function reads), in docs/CONFIGURATION.md's environment tables, and in
// template.yaml's Environment of each function. This test holds the three
// together.

const (
	docPath      = "../../../docs/CONFIGURATION.md"
	docName      = "docs/CONFIGURATION.md" // in messages
	docSection   = "Environment variables" // the "## " section holding the tables
	templatePath = "../../../template.yaml"
	templateName = "template.yaml" // in messages
)

// functions lists each function with its loader and its docs table and
// template resource. A new function is added here.
var functions = []struct {
	name      string // as in docs/CONFIGURATION.md's "### Environment (<name>)"
	logicalID string // its AWS::Serverless::Function in template.yaml
	load      func(*reader)
}{
	{"receiver", "ReceiverFunction", func(r *reader) { loadReceiver(r, ReceiverDefaults{}) }},
	{"processor", "ProcessorFunction", func(r *reader) { loadProcessor(r) }},
	{"compensator", "CompensatorFunction", func(r *reader) { loadCompensator(r, CompensatorDefaults{}) }},
	{"pretraffic", "PreTrafficFunction", func(r *reader) { loadPreTraffic(r) }},
}

// ignoredGlobals are the Globals variables a function is given but does not
// read, by function (the pre-traffic hook calls neither the table nor the
// queue).
var ignoredGlobals = map[string][]string{"pretraffic": PreTrafficIgnoredVariables()}

// sdkVariable reports a variable the AWS SDK reads itself, which the docs
// document but no loader reads.
func sdkVariable(name string) bool { return strings.HasPrefix(name, "AWS_ENDPOINT_URL_") }

// reads is what one function's loader reads: current names, and deprecated
// aliases mapped to their replacements.
type reads struct {
	current    map[string]bool
	deprecated map[string]string
}

func readsOf(load func(*reader)) reads {
	r := newReader(func(string) string { return "" })
	load(r)
	rd := reads{current: map[string]bool{}, deprecated: r.aliases}
	for _, name := range r.read {
		if _, old := r.aliases[name]; !old {
			rd.current[name] = true
		}
	}
	return rd
}

func TestConfigDocDocumentsEveryVariable(t *testing.T) {
	doc, err := os.ReadFile(docPath)
	if err != nil {
		t.Fatal(err)
	}
	tables := docTables(t, string(doc))
	allDeprecated := map[string]string{}
	for _, fn := range functions {
		rd := readsOf(fn.load)
		heading := "Environment (" + fn.name + ")"
		documented := map[string]bool{}
		for _, row := range tables[heading] {
			for _, name := range row[0] {
				documented[name] = true
			}
		}
		if len(documented) == 0 {
			t.Errorf("%s has no table under %q", docName, "### "+heading)
			continue
		}
		for _, name := range sorted(rd.current) {
			if !documented[name] {
				t.Errorf("%s reads %s, which %s's %q table does not document", fn.name, name, docName, heading)
			}
		}
		for _, name := range sorted(documented) {
			if !rd.current[name] && !sdkVariable(name) {
				t.Errorf("%s's %q table documents %s, which %s does not read", docName, heading, name, fn.name)
			}
		}
		for old, name := range rd.deprecated {
			allDeprecated[old] = name
		}
	}
	// Deprecated names: each in the "Deprecated names" table, on the row of
	// its replacement, and nothing else there.
	const heading = "Deprecated names"
	listed := map[string]bool{}
	for _, row := range tables[heading] {
		if len(row) < 2 {
			t.Errorf("%s's %q table: row %v has no replacement column", docName, heading, row)
			continue
		}
		for _, old := range row[0] {
			listed[old] = true
			switch name, ok := allDeprecated[old]; {
			case !ok:
				t.Errorf("%s's %q table lists %s, which no function reads", docName, heading, old)
			case !slices.Contains(row[1], name):
				t.Errorf("%s's %q table gives %s a replacement other than %s", docName, heading, old, name)
			}
		}
	}
	for _, old := range sorted(allDeprecated) {
		if !listed[old] {
			t.Errorf("%s is read as a deprecated name of %s, but %s's %q table does not list it", old, allDeprecated[old], docName, heading)
		}
	}
}

func TestTemplateDeclaresEveryVariable(t *testing.T) {
	b, err := os.ReadFile(templatePath)
	if err != nil {
		t.Fatal(err)
	}
	var doc yaml.Node // a Node keeps CloudFormation's !Ref, !GetAtt, !Sub as tags
	if err := yaml.Unmarshal(b, &doc); err != nil {
		t.Fatalf("%s: %v", templatePath, err)
	}
	root := doc.Content[0]
	globals := envVars(t, lookup(root, "Globals", "Function"), "Globals.Function")
	handlerSetting := generatedVariables(string(b))
	known := map[string]bool{} // what !Ref may name
	for _, section := range []string{"Parameters", "Resources"} {
		for _, k := range keys(lookup(root, section)) {
			known[k] = true
		}
	}
	for _, k := range []string{"AWS::Region", "AWS::StackName", "AWS::AccountId", "AWS::URLSuffix"} {
		known[k] = true
	}
	// SAM's references to what AutoPublishAlias makes: <Function>.Version, <Function>.Alias.
	for _, k := range keys(lookup(root, "Resources")) {
		if lookup(root, "Resources", k, "Properties", "AutoPublishAlias") != nil {
			known[k+".Version"], known[k+".Alias"] = true, true
		}
	}
	covered := map[string]bool{}
	for _, fn := range functions {
		covered[fn.logicalID] = true
		res := lookup(root, "Resources", fn.logicalID)
		if res == nil {
			t.Errorf("%s: no resource %s (the %s)", templateName, fn.logicalID, fn.name)
			continue
		}
		own := envVars(t, lookup(res, "Properties"), fn.logicalID)
		declared := map[string]*yaml.Node{}
		for name, v := range globals {
			declared[name] = v
		}
		for name, v := range own {
			declared[name] = v
		}
		rd := readsOf(fn.load)
		for _, name := range sorted(rd.current) {
			if _, ok := declared[name]; !ok {
				t.Errorf("%s reads %s, which %s declares neither in Globals.Function nor in %s's Environment.Variables",
					fn.name, name, templateName, fn.logicalID)
			}
		}
		for _, name := range sorted(declared) {
			if _, global := globals[name]; global && slices.Contains(ignoredGlobals[fn.name], name) {
				continue
			}
			if !rd.current[name] && !sdkVariable(name) && !handlerSetting[name] {
				t.Errorf("%s gives %s the variable %s, which it does not read (deprecated or unknown)", templateName, fn.logicalID, name)
			}
			if v := declared[name]; v.Tag == "!Ref" && !known[v.Value] {
				t.Errorf("%s: %s=!Ref %s names no parameter or resource", templateName, name, v.Value)
			}
		}
	}
	for _, id := range keys(lookup(root, "Resources")) {
		if r := lookup(root, "Resources", id, "Type"); r != nil && r.Value == "AWS::Serverless::Function" && !covered[id] {
			t.Errorf("%s: function %s has no loader in this test's functions", templateName, id)
		}
	}
}

// generatedVariables returns the variables of the template's generated
// handler-settings environment blocks: the settings the team packages
// declare (process.Setting), which no loader here reads; cmd/hookwall-gen
// writes them and its test holds them to the declarations.
func generatedVariables(template string) map[string]bool {
	const begin, end = "# BEGIN GENERATED handler-settings environment", "# END GENERATED handler-settings environment"
	name := regexp.MustCompile(`^\s*([A-Z][A-Z0-9_]*):`)
	vars := map[string]bool{}
	in := false
	for line := range strings.Lines(template) {
		switch t := strings.TrimSpace(line); {
		case strings.HasPrefix(t, begin):
			in = true
		case strings.HasPrefix(t, end):
			in = false
		case in:
			if m := name.FindStringSubmatch(line); m != nil {
				vars[m[1]] = true
			}
		}
	}
	return vars
}

// docTables returns the tables of docs/CONFIGURATION.md's "## Environment
// variables" section by the heading above them: each row's cells, each
// cell's `NAME`s.
func docTables(t *testing.T, doc string) map[string][][][]string {
	t.Helper()
	_, section, ok := strings.Cut(doc, "\n## "+docSection+"\n")
	if !ok {
		t.Fatalf("%s has no \"## %s\" section", docName, docSection)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	name := regexp.MustCompile("`([A-Z][A-Z0-9_]*)`")
	tables := map[string][][][]string{}
	heading := ""
	for line := range strings.Lines(section) {
		line = strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(line, "### "):
			heading = strings.TrimPrefix(line, "### ")
		case strings.HasPrefix(line, "|") && !strings.HasPrefix(line, "|---"):
			var row [][]string
			for _, cell := range strings.Split(strings.Trim(line, "|"), "|") {
				var names []string
				for _, m := range name.FindAllStringSubmatch(cell, -1) {
					names = append(names, m[1])
				}
				row = append(row, names)
			}
			if len(row[0]) > 0 { // not the header
				tables[heading] = append(tables[heading], row)
			}
		}
	}
	return tables
}

// lookup follows keys through nested mappings; nil if one is missing.
func lookup(n *yaml.Node, path ...string) *yaml.Node {
	for _, key := range path {
		if n == nil || n.Kind != yaml.MappingNode {
			return nil
		}
		var next *yaml.Node
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == key {
				next = n.Content[i+1]
			}
		}
		n = next
	}
	return n
}

func keys(n *yaml.Node) []string {
	var ks []string
	if n != nil && n.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(n.Content); i += 2 {
			ks = append(ks, n.Content[i].Value)
		}
	}
	return ks
}

// envVars returns the Environment.Variables under n, by name.
func envVars(t *testing.T, n *yaml.Node, where string) map[string]*yaml.Node {
	t.Helper()
	vars := map[string]*yaml.Node{}
	m := lookup(n, "Environment", "Variables")
	if m == nil {
		return vars
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		name := m.Content[i].Value
		if _, dup := vars[name]; dup {
			t.Errorf("%s: %s declares %s twice", templateName, where, name)
		}
		vars[name] = m.Content[i+1]
	}
	return vars
}

func sorted[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// The exported lists (for infra/templatetest) are what the loaders read.
func TestVariablesAreWhatTheLoadersRead(t *testing.T) {
	exported := map[string]func() []string{
		"receiver": ReceiverVariables, "processor": ProcessorVariables, "compensator": CompensatorVariables,
		"pretraffic": PreTrafficVariables}
	for _, fn := range functions {
		list, ok := exported[fn.name]
		if !ok {
			t.Errorf("no exported variable list for %s", fn.name)
			continue
		}
		if got, want := list(), sorted(readsOf(fn.load).current); !slices.Equal(got, want) {
			t.Errorf("%sVariables() = %v, want %v", fn.name, got, want)
		}
	}
	for _, name := range LocalOnlyVariables() {
		if !readsOf(functions[0].load).current[name] {
			t.Errorf("LocalOnlyVariables lists %s, which the receiver does not read", name)
		}
	}
}

// TestConfigDocListsEveryParameter holds docs/CONFIGURATION.md's "Template
// parameters" table to template.yaml's Parameters: every parameter is
// named in the table's first column, and the column names no other.
func TestConfigDocListsEveryParameter(t *testing.T) {
	doc, err := os.ReadFile(docPath)
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(doc), "\n## Template parameters\n")
	if !ok {
		t.Fatalf("%s has no \"## Template parameters\" section", docName)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	name := regexp.MustCompile("`([A-Z][A-Za-z0-9]*)`")
	documented := map[string]bool{}
	for line := range strings.Lines(section) {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "|") || strings.HasPrefix(line, "|---") {
			continue
		}
		first, _, _ := strings.Cut(strings.Trim(line, "|"), "|")
		for _, m := range name.FindAllStringSubmatch(first, -1) {
			documented[m[1]] = true
		}
	}
	b, err := os.ReadFile(templatePath)
	if err != nil {
		t.Fatal(err)
	}
	var tpl yaml.Node
	if err := yaml.Unmarshal(b, &tpl); err != nil {
		t.Fatalf("%s: %v", templatePath, err)
	}
	params := map[string]bool{}
	for _, k := range keys(lookup(tpl.Content[0], "Parameters")) {
		params[k] = true
	}
	if len(params) == 0 {
		t.Fatalf("%s has no Parameters", templateName)
	}
	for _, p := range sorted(params) {
		if !documented[p] {
			t.Errorf("%s declares the parameter %s, which %s's \"Template parameters\" table does not list", templateName, p, docName)
		}
	}
	for _, p := range sorted(documented) {
		if !params[p] {
			t.Errorf("%s's \"Template parameters\" table lists %s, which %s does not declare", docName, p, templateName)
		}
	}
}
