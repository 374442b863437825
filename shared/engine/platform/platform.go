// Package platform is what the processor and the compensator give the
// business teams, and how they build the handler registry from them: a
// team's declaration ([Team]: its package, its settings as data, its
// Register), the dependencies its Register receives ([Deps]), the list of
// the teams' settings `make generate` writes ([Settings]) and the
// registry's builder ([Build]). The handler API itself is shared/engine/process;
// the setting record is shared/config/setting.
package platform

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/hookwall/hookwall/shared/config/setting"
	"github.com/hookwall/hookwall/shared/config/tenants"
	"github.com/hookwall/hookwall/shared/engine/process"
	"github.com/hookwall/hookwall/shared/internal/registry"
)

// Team is one team's package as the list of teams
// (functions/processor/handlers.Teams) holds it: who it is, the settings
// it declares and the function that registers its handlers. It is data:
// the generator of template.yaml and the README reads its Settings without
// running Register.
//
//	var LeadsURL = setting.Setting{Name: "CRM_LEADS_URL", Kind: setting.KindURL,
//		Doc: "the CRM's leads API (empty: the crm handlers are off)"}
//
//	var Team = platform.Team{
//		Owner:    "functions/processor/handlers/crm",
//		Settings: []setting.Setting{LeadsURL},
//		Register: Register,
//	}
//
// A setting (shared/config/setting) is an environment variable of the processor
// and the compensator, declared once, as data: `make generate` writes its
// template.yaml parameter and environment entries and its row of the
// README's handler-settings table from the teams' lists, without running
// any Register. Register reads it with the getter of its kind
// (process.Registry's String, Duration, Int); a value the
// setting rejects makes the processor and the compensator fail to start,
// with an error naming the variable.
type Team struct {
	// Owner is the team package's import path less the module's, e.g.
	// functions/processor/handlers/crm: the owner of its settings and
	// handlers in the README's table, the template and the handler list.
	Owner string
	// Settings are every setting Register reads; Register can read no
	// other.
	Settings []setting.Setting
	// Register adds the team's handlers to r, reading its settings from r
	// and taking its dependencies from d. A team whose settings are unset
	// registers nothing.
	Register func(r *process.Registry, d Deps)
}

// Deps are the dependencies the platform gives every team's Register, as
// its second argument: the processor and the compensator give all three; a
// test gives what its team uses (a missing one is its zero value).
type Deps struct {
	// Tenants is the tenants document (nil: none).
	Tenants *tenants.Tenants
	// AWS is the function's AWS configuration, for a client of the team's
	// own.
	AWS aws.Config
	// DynamoDB is the function's DynamoDB client, as the team's handlers
	// use it on their own tables (nil: none). *dynamodb.Client satisfies
	// it, and so do the tables of shared/engine/processtest.
	DynamoDB interface {
		GetItem(ctx context.Context, in *dynamodb.GetItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error)
		PutItem(ctx context.Context, in *dynamodb.PutItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error)
		UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error)
	}
}

// Build builds the handler registry as the processor and the compensator
// do once per cold start: it reads the settings teams declare through
// getenv (nil: os.Getenv), then runs each team's Register, in order, with
// deps. The error names every setting whose value is invalid, or reports a
// malformed team or setting declaration or the panic of a registration (a
// duplicate handler name, a setting read but not declared).
func Build(getenv func(string) string, deps Deps, teams ...Team) (*process.Registry, error) {
	settings, err := Settings(teams...)
	if err != nil {
		return nil, err
	}
	values, err := setting.Values(settings, getenv)
	if err != nil {
		return nil, err
	}
	t := registry.New()
	for _, tm := range teams {
		own := make(map[string]string, len(tm.Settings))
		for _, s := range tm.Settings {
			own[s.Name] = values[s.Name]
		}
		if err := register(t, tm, own, deps); err != nil {
			return nil, err
		}
	}
	t.Begin("", nil)
	return (*process.Registry)(t), nil
}

// register runs tm's Register on t with the values of its settings; a
// panic is the error.
func register(t *registry.Table, tm Team, values map[string]string, deps Deps) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("register the handlers of %s: %v", tm.Owner, p)
		}
	}()
	t.Begin(tm.Owner, values)
	tm.Register((*process.Registry)(t), deps)
	return nil
}

// Settings returns the settings teams declare, in order, each with its
// team as Owner: what `make generate` writes and [Build] reads. A setting
// two teams declare identically is listed once, with the first's. The
// error reports a team without Owner or Register, a malformed declaration,
// or one name declared differently.
func Settings(teams ...Team) ([]setting.Setting, error) {
	var out []setting.Setting
	byName := map[string]setting.Setting{}
	var errs []error
	for _, tm := range teams {
		if tm.Owner == "" || tm.Register == nil {
			errs = append(errs, fmt.Errorf("team %q: needs an Owner and a Register", tm.Owner))
			continue
		}
		for _, s := range tm.Settings {
			s.Owner = tm.Owner
			if err := s.Validate(); err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", tm.Owner, err))
				continue
			}
			if prev, ok := byName[s.Name]; ok {
				if !prev.Same(s) {
					errs = append(errs, fmt.Errorf("setting %s declared twice, differently (%s and %s)", s.Name, prev.Owner, s.Owner))
				}
				continue
			}
			byName[s.Name] = s
			out = append(out, s)
		}
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("handler settings: %w", errors.Join(errs...))
	}
	return out, nil
}
