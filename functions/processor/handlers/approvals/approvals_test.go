package approvals

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/hookwall/hookwall/shared/dispatch"
	"github.com/hookwall/hookwall/shared/process"
)

func TestRegisterNeedsItsDependencies(t *testing.T) {
	for name, cfg := range map[string]Config{
		"no DB":    {Table: "approvals"},
		"no table": {DB: &dynamodb.Client{}},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			Register(process.NewRegistry(), cfg)
		}()
	}
	r := process.NewRegistry()
	Register(r, Config{DB: &dynamodb.Client{}, Table: "approvals"})
	if hs := dispatch.Handlers(r); len(hs) != 1 || hs[0].Name != HandlerName || hs[0].Provider != "wecom" || hs[0].EventType != "sys_approval_change" {
		t.Errorf("got registrations %+v, want %s on wecom/sys_approval_change", hs, HandlerName)
	}
}
