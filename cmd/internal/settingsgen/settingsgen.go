// Package settingsgen writes the handler settings the team packages declare
// (setting.Setting) into the files that must list them: template.yaml (the
// parameters, and the Environment of ProcessorFunction and
// CompensatorFunction) and the README's handler-settings table, each between
// marker comments. cmd/hookwall-gen runs it (`make generate`) and its test
// fails when the committed files drift from the declarations.
package settingsgen

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/hookwall/hookwall/shared/config/setting"
)

// The generated files, relative to the module's root.
const (
	Template = "template.yaml"
	README   = "README.md"
)

// A block is the text between a begin and an end marker line; a file may
// hold several blocks of one label.
type block struct {
	file  string
	begin string // the begin marker, a whole line less its indentation
	end   string
	body  func(indent string, s []setting.Setting) string
}

var blocks = []block{
	{Template, "# BEGIN GENERATED handler-settings parameters (make generate: from the team packages' process.Setting; do not edit)",
		"# END GENERATED handler-settings parameters", parameters},
	{Template, "# BEGIN GENERATED handler-settings environment (make generate)",
		"# END GENERATED handler-settings environment", environment},
	{Template, "# BEGIN GENERATED handler-resources conditions (make generate: from the team packages' process.Setting Grants; do not edit)",
		"# END GENERATED handler-resources conditions", conditions},
	{Template, "# BEGIN GENERATED handler-resources statements (make generate)",
		"# END GENERATED handler-resources statements", statements},
	{README, "<!-- BEGIN GENERATED handler settings (make generate: from the team packages' process.Setting; do not edit) -->",
		"<!-- END GENERATED handler settings -->", readmeTable},
}

// Generate returns the new contents of the generated files under root for
// settings, by file name ([Template], [README]). A file without its
// markers, or with a begin marker and no end, is an error.
func Generate(root string, settings []setting.Setting) (map[string][]byte, error) {
	out := map[string][]byte{}
	for _, name := range []string{Template, README} {
		b, err := os.ReadFile(filepath.Join(root, name))
		if err != nil {
			return nil, fmt.Errorf("settingsgen: %w", err)
		}
		text := string(b)
		for _, bl := range blocks {
			if bl.file != name {
				continue
			}
			if text, err = replace(text, bl, settings); err != nil {
				return nil, fmt.Errorf("settingsgen: %s: %w", name, err)
			}
		}
		out[name] = []byte(text)
	}
	return out, nil
}

// Drift returns the generated files whose committed contents under root
// differ from what [Generate] writes.
func Drift(root string, settings []setting.Setting) ([]string, error) {
	files, err := Generate(root, settings)
	if err != nil {
		return nil, err
	}
	var drifted []string
	for _, name := range []string{Template, README} {
		b, err := os.ReadFile(filepath.Join(root, name))
		if err != nil {
			return nil, fmt.Errorf("settingsgen: %w", err)
		}
		if !bytes.Equal(b, files[name]) {
			drifted = append(drifted, name)
		}
	}
	return drifted, nil
}

// replace rewrites every block bl of text.
func replace(text string, bl block, s []setting.Setting) (string, error) {
	lines := strings.SplitAfter(text, "\n")
	var out strings.Builder
	found := false
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		out.WriteString(line)
		if strings.TrimSpace(line) != bl.begin {
			continue
		}
		found = true
		indent := line[:len(line)-len(strings.TrimLeft(line, " \t"))]
		j := i + 1
		for j < len(lines) && strings.TrimSpace(lines[j]) != bl.end {
			j++
		}
		if j == len(lines) {
			return "", fmt.Errorf("%q without %q", bl.begin, bl.end)
		}
		out.WriteString(bl.body(indent, s))
		out.WriteString(lines[j])
		i = j
	}
	if !found {
		return "", fmt.Errorf("no line %q", bl.begin)
	}
	return out.String(), nil
}

// ParameterName is the template parameter of the variable name:
// CRM_LEADS_URL → CrmLeadsUrl (setting.ParameterName: the runtime records
// name a team's resource by the same rule).
func ParameterName(name string) string { return setting.ParameterName(name) }

func parameters(indent string, s []setting.Setting) string {
	var b strings.Builder
	for _, st := range s {
		fmt.Fprintf(&b, "%s%s:\n", indent, ParameterName(st.Name))
		fmt.Fprintf(&b, "%s  Type: String\n", indent)
		fmt.Fprintf(&b, "%s  Default: \"\"\n", indent)
		fmt.Fprintf(&b, "%s  AllowedPattern: %s\n", indent, yamlScalar(allowedPattern(st.AllowedPattern()), '\''))
		fmt.Fprintf(&b, "%s  Description: %s\n", indent, yamlScalar(description(st), '"'))
	}
	return b.String()
}

// allowedPattern is the parameter's pattern: empty (the setting's default)
// or a whole value matching the setting's pattern.
func allowedPattern(p string) string {
	if strings.Contains(p, "|") {
		p = "(?:" + p + ")"
	}
	return "^$|^" + p + "$"
}

func description(st setting.Setting) string {
	d := st.Name + ", " + st.Doc
	if st.Default != "" {
		d += " (empty: " + st.Default + ")"
	}
	return strings.TrimSuffix(d, ".") + "."
}

func environment(indent string, s []setting.Setting) string {
	var b strings.Builder
	for _, st := range s {
		fmt.Fprintf(&b, "%s%s: !Ref %s\n", indent, st.Name, ParameterName(st.Name))
	}
	return b.String()
}

// ConditionName is the template condition that holds when the parameter of
// the variable name is set: APPROVALS_TABLE → HasApprovalsTable.
func ConditionName(name string) string { return "Has" + ParameterName(name) }

// conditions writes one condition per setting that names a resource.
func conditions(indent string, s []setting.Setting) string {
	var b strings.Builder
	for _, st := range s {
		if len(st.Grants) > 0 {
			fmt.Fprintf(&b, "%s%s: !Not [!Equals [!Ref %s, \"\"]]\n", indent, ConditionName(st.Name), ParameterName(st.Name))
		}
	}
	return b.String()
}

// statements writes, for every setting that names a resource, the role
// statement that grants the declared actions on it when it is set.
func statements(indent string, s []setting.Setting) string {
	var b strings.Builder
	for _, st := range s {
		if len(st.Grants) == 0 {
			continue
		}
		fmt.Fprintf(&b, "%s# %s (%s): the actions %s declares\n", indent, st.Name, ParameterName(st.Name), st.Owner)
		fmt.Fprintf(&b, "%s- !If\n", indent)
		fmt.Fprintf(&b, "%s  - %s\n", indent, ConditionName(st.Name))
		fmt.Fprintf(&b, "%s  - Sid: %s\n", indent, ParameterName(st.Name))
		fmt.Fprintf(&b, "%s    Effect: Allow\n", indent)
		fmt.Fprintf(&b, "%s    Action:\n", indent)
		for _, a := range st.Grants {
			fmt.Fprintf(&b, "%s      - %s\n", indent, a)
		}
		fmt.Fprintf(&b, "%s    Resource: %s\n", indent, ResourceARN(st.Grants, ParameterName(st.Name)))
		fmt.Fprintf(&b, "%s  - !Ref AWS::NoValue\n", indent)
	}
	return b.String()
}

// ResourceARN is the template expression of the ARN of the resource the
// parameter param names, for grants of its service (setting.Setting.Grants):
// a DynamoDB table's or an SQS queue's name, else the ARN itself.
func ResourceARN(grants []string, param string) string {
	svc, _, _ := strings.Cut(grants[0], ":")
	switch svc {
	case "dynamodb":
		return "!Sub arn:${AWS::Partition}:dynamodb:${AWS::Region}:${AWS::AccountId}:table/${" + param + "}"
	case "sqs":
		return "!Sub arn:${AWS::Partition}:sqs:${AWS::Region}:${AWS::AccountId}:${" + param + "}"
	}
	return "!Ref " + param
}

func readmeTable(_ string, s []setting.Setting) string {
	var b strings.Builder
	b.WriteString("| Variable (template parameter) | Kind | Default | Example | Declared by | What it is |\n")
	b.WriteString("|---|---|---|---|---|---|\n")
	for _, st := range s {
		def := "empty"
		if st.Default != "" {
			def = "`" + st.Default + "`"
		}
		fmt.Fprintf(&b, "| `%s` (`%s`) | %s | %s | `%s` | `%s` | %s |\n", st.Name, ParameterName(st.Name), st.Kind, def,
			st.Sample(), st.Owner, st.Doc)
	}
	if len(s) == 0 {
		b.WriteString("| (none) | | | | | |\n")
	}
	return b.String()
}

var plainScalar = regexp.MustCompile(`^[A-Za-z0-9^(\[][^\n]*$`)

// yamlScalar returns v as a plain YAML scalar when that reads back as v,
// else quoted with quote (' or ").
func yamlScalar(v string, quote byte) string {
	if plainScalar.MatchString(v) && !strings.Contains(v, ": ") && !strings.Contains(v, " #") &&
		!strings.HasSuffix(v, ":") && !strings.HasSuffix(v, " ") {
		return v
	}
	if quote == '\'' {
		return "'" + strings.ReplaceAll(v, "'", "''") + "'"
	}
	return strconv.Quote(v)
}
