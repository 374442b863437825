package intake

import (
	"os"
	"testing"

	"gopkg.in/yaml.v3"
)

// TestTemplateProtectsOnlyTheEventsAPI holds template.yaml to the rule: the
// events API route is IAM-authorized, the webhook routes, GET and POST (which platforms
// call, and which checks their signatures itself) is not, and the API has
// no default authorizer that would change either.
func TestTemplateProtectsOnlyTheEventsAPI(t *testing.T) {
	b, err := os.ReadFile("../../../template.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Resources map[string]struct {
			Type       string `yaml:"Type"`
			Properties struct {
				Auth *struct {
					DefaultAuthorizer   string `yaml:"DefaultAuthorizer"`
					EnableIamAuthorizer bool   `yaml:"EnableIamAuthorizer"`
				} `yaml:"Auth"`
				Events map[string]struct {
					Type       string `yaml:"Type"`
					Properties struct {
						Path   string `yaml:"Path"`
						Method string `yaml:"Method"`
						Auth   *struct {
							Authorizer string `yaml:"Authorizer"`
						} `yaml:"Auth"`
					} `yaml:"Properties"`
				} `yaml:"Events"`
			} `yaml:"Properties"`
		} `yaml:"Resources"`
	}
	if err := yaml.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	found := map[string]bool{}
	for id, r := range doc.Resources {
		if r.Type == "AWS::Serverless::HttpApi" && r.Properties.Auth != nil && r.Properties.Auth.DefaultAuthorizer != "" {
			t.Errorf("%s has DefaultAuthorizer %s: the webhook route must stay open to the platforms", id, r.Properties.Auth.DefaultAuthorizer)
		}
		for name, ev := range r.Properties.Events {
			if ev.Type != "HttpApi" {
				continue
			}
			p := ev.Properties
			authorizer := ""
			if p.Auth != nil {
				authorizer = p.Auth.Authorizer
			}
			switch p.Method + " " + p.Path {
			case EventsRoute:
				found["events"] = true
				if authorizer != "AWS_IAM" {
					t.Errorf("%s.%s (%s) has authorizer %q, want AWS_IAM: the events API is never public", id, name, EventsRoute, authorizer)
				}
				if api := doc.Resources["WebhookApi"]; api.Properties.Auth == nil || !api.Properties.Auth.EnableIamAuthorizer {
					t.Errorf("WebhookApi does not set Auth.EnableIamAuthorizer, which AWS_IAM on a route needs")
				}
			case "ANY " + Route:
				t.Errorf("%s.%s routes ANY %s: declare GET (handshakes) and POST only", id, name, Route)
			case "GET " + Route, "POST " + Route:
				found[p.Method+" webhooks"] = true
				if authorizer != "" {
					t.Errorf("%s.%s (%s) has authorizer %q: platforms cannot sign with IAM", id, name, Route, authorizer)
				}
			}
		}
	}
	if !found["events"] || !found["GET webhooks"] || !found["POST webhooks"] {
		t.Errorf("template.yaml routes found: %v; want GET and POST %s and %s", found, Route, EventsRoute)
	}
}
