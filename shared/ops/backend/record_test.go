package backend

import (
	"maps"
	"testing"

	"github.com/hookwall/hookwall/shared/aws/awsconf"
	"github.com/hookwall/hookwall/shared/config/setting"
	"github.com/hookwall/hookwall/shared/engine/platform"
	"github.com/hookwall/hookwall/shared/engine/process"
)

// The runtime records name the platform's resources by their logical
// names, over a team's setting that names the same one.
func TestConfigRecorderNamesThePlatformsResources(t *testing.T) {
	c := Config{Function: "processor", TableName: "t", QueueURL: "http://q/1/q", DLQURL: "http://q/1/dlq",
		TenantsSecretARN: "arn:s", Resources: map[string]string{"approvals": "ApprovalsTable", "t": "TeamsTable"}}
	rec := c.Recorder()
	want := map[string]string{"t": awsconf.EventsTable, "http://q/1/q": awsconf.EventsQueue, "http://q/1/dlq": awsconf.EventsDeadLetterQueue,
		"arn:s": awsconf.TenantsSecret, "approvals": "ApprovalsTable"}
	if rec.Function != "processor" || !maps.Equal(rec.Names, want) {
		t.Errorf("Recorder() = %+v, want processor with %v", rec, want)
	}
	if c.Resources["t"] != "TeamsTable" {
		t.Error("Recorder() changed c.Resources")
	}
}

var (
	teamTable = setting.Setting{Name: "TEAM_TABLE", Kind: setting.KindString, Doc: "a table"}
	teamQueue = setting.Setting{Name: "TEAM_AUDIT_QUEUE", Kind: setting.KindString, Doc: "a queue", Default: "audit"}
)

// A team's resources are named after its settings' template parameters,
// read from the declarations: the team's Register is not run.
func TestTeamResourcesAreTheSettingsParameters(t *testing.T) {
	team := platform.Team{Owner: "functions/processor/handlers/team", Settings: []setting.Setting{teamTable, teamQueue},
		Register: func(*process.Registry, platform.Deps) { panic("Register run to name the resources") }}
	got, err := TeamResources([]platform.Team{team}, func(k string) string {
		if k == teamTable.Name {
			return "team-table"
		}
		return ""
	})
	want := map[string]string{"team-table": "TeamTable", "audit": "TeamAuditQueue"}
	if err != nil || !maps.Equal(got, want) {
		t.Errorf("TeamResources = %v (%v), want %v", got, err, want)
	}
}
