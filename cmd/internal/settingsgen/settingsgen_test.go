package settingsgen

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/hookwall/hookwall/shared/config/setting"
)

func TestParameterName(t *testing.T) {
	for name, want := range map[string]string{"CRM_LEADS_URL": "CrmLeadsUrl", "APPROVALS_TABLE": "ApprovalsTable", "X": "X", "A__B": "AB"} {
		if got := ParameterName(name); got != want {
			t.Errorf("ParameterName(%s) = %s, want %s", name, got, want)
		}
	}
}

const templateIn = `Parameters:
  Before:
    Type: String
  # BEGIN GENERATED handler-settings parameters (make generate: from the team packages' process.Setting; do not edit)
  Stale:
    Type: String
  # END GENERATED handler-settings parameters
Conditions:
  # BEGIN GENERATED handler-resources conditions (make generate: from the team packages' process.Setting Grants; do not edit)
  # END GENERATED handler-resources conditions
Resources:
  Role:
    Properties:
      Policies:
        - PolicyDocument:
            Statement:
              - Effect: Allow
              # BEGIN GENERATED handler-resources statements (make generate)
              - Stale: statement
              # END GENERATED handler-resources statements
  Fn:
    Properties:
      Environment:
        Variables:
          A: b
          # BEGIN GENERATED handler-settings environment (make generate)
          STALE: x
          # END GENERATED handler-settings environment
  Other:
    Properties:
      Environment:
        Variables:
          # BEGIN GENERATED handler-settings environment (make generate)
          # END GENERATED handler-settings environment
`

const readmeIn = "# R\n\n<!-- BEGIN GENERATED handler settings (make generate: from the team packages' process.Setting; do not edit) -->\nold\n<!-- END GENERATED handler settings -->\n\nafter\n"

func write(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

var sample = []setting.Setting{
	{Name: "TEAM_URL", Kind: "URL", Doc: "the team's API (empty: off)", Pattern: `https?://[^\s]+`, Example: "https://x.example", Owner: "functions/processor/handlers/team"},
	{Name: "TEAM_MODE", Kind: "string", Doc: "fast or slow", Default: "fast", Pattern: "fast|slow", Example: "fast", Owner: "functions/processor/handlers/team"},
	{Name: "TEAM_TABLE", Kind: "string", Doc: "the team's table", Example: "orders", Owner: "functions/processor/handlers/team",
		Grants: []string{"dynamodb:GetItem", "dynamodb:UpdateItem"}},
	{Name: "TEAM_TOPIC", Kind: "string", Doc: "the team's topic ARN", Example: "arn:aws:sns:us-east-1:123456789012:t", Owner: "functions/processor/handlers/team",
		Grants: []string{"sns:Publish"}},
}

func TestGenerateRewritesEveryBlock(t *testing.T) {
	dir := write(t, map[string]string{Template: templateIn, README: readmeIn})
	files, err := Generate(dir, sample)
	if err != nil {
		t.Fatal(err)
	}
	tpl := string(files[Template])
	if strings.Contains(tpl, "Stale") || strings.Contains(tpl, "STALE") || strings.Count(tpl, "TEAM_URL: !Ref TeamUrl") != 2 {
		t.Errorf("template:\n%s", tpl)
	}
	var doc struct {
		Parameters map[string]struct {
			Type           string `yaml:"Type"`
			Default        string `yaml:"Default"`
			AllowedPattern string `yaml:"AllowedPattern"`
			Description    string `yaml:"Description"`
		} `yaml:"Parameters"`
	}
	if err := yaml.Unmarshal(files[Template], &doc); err != nil {
		t.Fatalf("the generated template is not YAML: %v\n%s", err, tpl)
	}
	p := doc.Parameters["TeamMode"]
	if p.Type != "String" || p.Default != "" || p.AllowedPattern != "^$|^(?:fast|slow)$" ||
		p.Description != "TEAM_MODE, fast or slow (empty: fast)." {
		t.Errorf("TeamMode: got %+v", p)
	}
	if p := doc.Parameters["TeamUrl"]; p.AllowedPattern != `^$|^https?://[^\s]+$` || p.Description != "TEAM_URL, the team's API (empty: off)." {
		t.Errorf("TeamUrl: got %+v", p)
	}
	if got := slices.Sorted(func(yield func(string) bool) {
		for k := range doc.Parameters {
			if !yield(k) {
				return
			}
		}
	}); !slices.Equal(got, []string{"Before", "TeamMode", "TeamTable", "TeamTopic", "TeamUrl"}) {
		t.Errorf("parameters %v", got)
	}
	if strings.Contains(tpl, "Stale: statement") {
		t.Errorf("the stale statement stayed:\n%s", tpl)
	}
	var grants struct {
		Conditions map[string]yaml.Node `yaml:"Conditions"`
		Resources  struct {
			Role struct {
				Properties struct {
					Policies []struct {
						PolicyDocument struct {
							Statement []yaml.Node `yaml:"Statement"`
						} `yaml:"PolicyDocument"`
					} `yaml:"Policies"`
				} `yaml:"Properties"`
			} `yaml:"Role"`
		} `yaml:"Resources"`
	}
	if err := yaml.Unmarshal(files[Template], &grants); err != nil {
		t.Fatal(err)
	}
	if _, ok := grants.Conditions["HasTeamTable"]; !ok || len(grants.Conditions) != 2 {
		t.Errorf("conditions: got %v, want HasTeamTable and HasTeamTopic", grants.Conditions)
	}
	st := grants.Resources.Role.Properties.Policies[0].PolicyDocument.Statement
	if len(st) != 3 || st[1].Tag != "!If" || st[2].Tag != "!If" {
		t.Fatalf("statements: got %d, want the fixed one and two !If", len(st))
	}
	for _, want := range []string{
		"- HasTeamTable\n", "- dynamodb:GetItem\n", "- dynamodb:UpdateItem\n",
		"Resource: !Sub arn:${AWS::Partition}:dynamodb:${AWS::Region}:${AWS::AccountId}:table/${TeamTable}\n",
		"- sns:Publish\n", "Resource: !Ref TeamTopic\n", "- !Ref AWS::NoValue\n",
	} {
		if !strings.Contains(tpl, want) {
			t.Errorf("template lacks %q:\n%s", want, tpl)
		}
	}
	rd := string(files[README])
	if strings.Contains(rd, "old") || !strings.Contains(rd, "| `TEAM_MODE` (`TeamMode`) | string | `fast` | `fast` | `functions/processor/handlers/team` | fast or slow |") ||
		!strings.HasSuffix(rd, "<!-- END GENERATED handler settings -->\n\nafter\n") {
		t.Errorf("README:\n%s", rd)
	}
	// Generating again changes nothing; Drift sees the stale files.
	dir2 := write(t, map[string]string{Template: tpl, README: rd})
	if d, err := Drift(dir2, sample); err != nil || len(d) != 0 {
		t.Errorf("regenerated files drift: %v, %v", d, err)
	}
	if d, err := Drift(dir, sample); err != nil || !slices.Equal(d, []string{Template, README}) {
		t.Errorf("stale files: got drift %v, %v", d, err)
	}
}

func TestGenerateNeedsTheMarkers(t *testing.T) {
	for name, files := range map[string]map[string]string{
		"no README markers":   {Template: templateIn, README: "# R\n"},
		"no template markers": {Template: "Parameters:\n", README: readmeIn},
		"no end marker":       {Template: templateIn, README: strings.Replace(readmeIn, "<!-- END GENERATED handler settings -->", "", 1)},
	} {
		if _, err := Generate(write(t, files), sample); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
