package approvals

import (
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/hookwall/hookwall/shared/engine/dispatch"
	"github.com/hookwall/hookwall/shared/engine/platform"
)

func env(table string) func(string) string {
	return func(name string) string {
		if name == Table.Name {
			return table
		}
		return ""
	}
}

func TestRegisterReadsItsSettingAndDependency(t *testing.T) {
	r, err := platform.Build(env("approvals"), platform.Deps{DynamoDB: &dynamodb.Client{}}, Team)
	if err != nil {
		t.Fatal(err)
	}
	if hs := dispatch.Handlers(r); len(hs) != 1 || hs[0].Name != HandlerName || hs[0].Provider != "wecom" ||
		hs[0].EventType != "sys_approval_change" || !hs[0].Compensated {
		t.Errorf("got registrations %+v, want %s on wecom/sys_approval_change, compensated", hs, HandlerName)
	}
	// Unset: the team is off.
	if r, err := platform.Build(env(""), platform.Deps{DynamoDB: &dynamodb.Client{}}, Team); err != nil || len(dispatch.Handlers(r)) != 0 {
		t.Errorf("APPROVALS_TABLE unset: got %v, %v; want no handler", err, r)
	}
	for name, tc := range map[string]struct {
		table string
		deps  platform.Deps
		want  string
	}{
		"no DynamoDB client": {"approvals", platform.Deps{}, "no DynamoDB client"},
		"a bad table name":   {"ab", platform.Deps{DynamoDB: &dynamodb.Client{}}, `APPROVALS_TABLE="ab"`},
	} {
		if _, err := platform.Build(env(tc.table), tc.deps, Team); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want an error with %q", name, err, tc.want)
		}
	}
}
