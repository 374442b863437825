package handlers

import (
	"slices"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/hookwall/hookwall/functions/processor/handlers/approvals"
	"github.com/hookwall/hookwall/functions/processor/handlers/crm"
	"github.com/hookwall/hookwall/functions/processor/handlers/forward"
	"github.com/hookwall/hookwall/shared/config"
	"github.com/hookwall/hookwall/shared/process"
)

func TestRegisterBuildsTheRegistry(t *testing.T) {
	r := process.NewRegistry()
	Register(r, Deps{}) // panics on a duplicate name
	for _, h := range r.Handlers() {
		if h.Name() == "" || h.Provider() == "" || h.EventType() == "" {
			t.Errorf("handler %+v: incomplete registration", h)
		}
	}
}

func registered(r *process.Registry) []string {
	var names []string
	for _, h := range r.Handlers() {
		names = append(names, h.Name())
	}
	slices.Sort(names)
	return names
}

// Every team configured at once: the full registry, so that a duplicate
// name or a missing dependency fails CI.
func TestRegisterListsTheTeamsWhoseSettingsArePresent(t *testing.T) {
	tenants, err := config.Parse([]byte(`{"tenants":{
		"acme":  {"line":{"channelSecret":"c"},"forward":{"url":"https://acme.example/hooks"}},
		"plain": {"line":{"channelSecret":"c"}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		deps Deps
		want []string
	}{
		{"nothing configured: forward only", Deps{}, []string{forward.HandlerName}},
		{"every team", Deps{Tenants: tenants, DynamoDB: &dynamodb.Client{}, CRMLeadsURL: "https://crm.example/api", ApprovalsTable: "approvals"},
			[]string{approvals.HandlerName, crm.HandlerName, forward.HandlerName}},
	}
	for _, tc := range tests {
		r := process.NewRegistry()
		Register(r, tc.deps)
		want := slices.Clone(tc.want)
		slices.Sort(want)
		if got := registered(r); !slices.Equal(got, want) {
			t.Errorf("%s: got handlers %v, want %v", tc.name, got, want)
		}
	}
	all := process.NewRegistry()
	Register(all, Deps{Tenants: tenants, CRMLeadsURL: "https://crm.example/api"})
	var order []string
	for _, h := range all.Match("line", "acme", "follow") {
		order = append(order, h.Name())
	}
	if want := []string{crm.HandlerName, forward.HandlerName}; !slices.Equal(order, want) {
		t.Errorf("acme's LINE follow: got handlers %v, want %v (forward last)", order, want)
	}
	r := process.NewRegistry()
	Register(r, Deps{Tenants: tenants})
	if got := r.Match("wecom", "acme", "text"); len(got) != 1 || got[0].Name() != forward.HandlerName {
		t.Errorf("acme's wecom text: got %v, want the forward handler", got)
	}
	if got := r.Match("wecom", "plain", "text"); len(got) != 0 {
		t.Errorf("plain's wecom text: got %v, want no handler", got)
	}
}

func TestApprovalsWithoutDynamoDBPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("no panic for APPROVALS_TABLE without a DynamoDB client")
		}
	}()
	Register(process.NewRegistry(), Deps{ApprovalsTable: "approvals"})
}
