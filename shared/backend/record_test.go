package backend

import (
	"maps"
	"testing"

	"github.com/hookwall/hookwall/shared/awsconf"
	"github.com/hookwall/hookwall/shared/process"
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
	teamTable = process.Setting{Name: "TEAM_TABLE", Doc: "a table"}
	teamQueue = process.Setting{Name: "TEAM_AUDIT_QUEUE", Doc: "a queue", Default: "audit"}
)

// A team's resources are named after its settings' template parameters,
// whatever the environment makes the team register.
func TestTeamResourcesAreTheSettingsParameters(t *testing.T) {
	register := func(r *process.Registry) {
		table, _ := r.String(teamTable), r.String(teamQueue)
		if table == "" {
			return
		}
		if _, ok := process.Use[string](r); !ok {
			panic("no dependency") // as a team that needs the platform's client: the names need none
		}
	}
	got, err := TeamResources(register, func(k string) string {
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
