package intaketest

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/protocol/providers"
)

// VectorsFile is a provider's test vectors file (testdata/vectors.json in
// the provider's package): requests as the platform sends them, with the
// tenant settings that sign them and what the receiver must answer.
type VectorsFile struct {
	// Provider is the route name of the provider.
	Provider string `json:"provider"`
	// Sources are the documentation pages the vectors were built from.
	Sources []string `json:"sources"`
	// Cases are the vectors.
	Cases []VectorCase `json:"cases"`
}

// VectorCase is one scenario: a tenant's settings and the requests sent, in
// order, to one receiver (one store).
type VectorCase struct {
	Name string `json:"name"`
	// Settings is the tenant's section of the tenants document.
	Settings json.RawMessage `json:"settings"`
	// Requests are sent in order; after each, the processor takes what
	// it enqueued (see [Receiver.Process]).
	Requests []VectorRequest `json:"requests"`
}

// VectorRequest is one request of a case and the answer it must get.
type VectorRequest struct {
	// Method defaults to POST.
	Method string `json:"method"`
	// Query is the raw query string, without "?".
	Query   string            `json:"query"`
	Headers map[string]string `json:"headers"`
	Body    string            `json:"body"`
	// Now is the receiver's clock, unix seconds (0: the previous request's,
	// or for the first, the real time). The clock never goes back: a time
	// before the previous request's is ignored.
	Now  int64 `json:"now"`
	Want Want  `json:"want"`
}

// Want is the answer a request must get.
type Want struct {
	// Status is the HTTP status.
	Status int `json:"status"`
	// Body, when set, is the exact reply body.
	Body *string `json:"body"`
	// Events are the dedup keys of the events this request enqueues, in
	// order (none for a duplicate, a handshake or a refused request).
	Events []string `json:"events"`
}

// LoadVectors reads the vectors file at path. It fails t if the file does
// not hold a provider that is registered and at least one case.
func LoadVectors(t testing.TB, path string) *VectorsFile {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("vectors: %v", err)
	}
	var f VectorsFile
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		t.Fatalf("vectors %s: %v", path, err)
	}
	if _, ok := providers.Lookup(f.Provider); !ok || len(f.Cases) == 0 {
		t.Fatalf("vectors %s: provider %q registered: %v; %d cases", path, f.Provider, ok, len(f.Cases))
	}
	return &f
}

// RunVectors runs every case of the vectors file at path through the real
// receiver, one subtest per case.
func RunVectors(t *testing.T, path string) {
	t.Helper()
	f := LoadVectors(t, path)
	for _, c := range f.Cases {
		t.Run(c.Name, func(t *testing.T) { c.run(t, f.Provider) })
	}
}

const vectorTenant = "t1"

func (c *VectorCase) run(t *testing.T, name string) {
	if len(c.Requests) == 0 {
		t.Fatal("no requests")
	}
	now := time.Now()
	if c.Requests[0].Now != 0 {
		now = time.Unix(c.Requests[0].Now, 0)
	}
	r := NewReceiver(t, tenantsDoc(t, vectorTenant, name, c.Settings), now)
	for i, vr := range c.Requests {
		if vr.Now != 0 {
			r.Clock.AdvanceTo(time.Unix(vr.Now, 0))
		}
		method := vr.Method
		if method == "" {
			method = http.MethodPost
		}
		target := r.URL + "/webhooks/" + name + "/" + vectorTenant
		if vr.Query != "" {
			target += "?" + vr.Query
		}
		req, err := http.NewRequest(method, target, strings.NewReader(vr.Body))
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range vr.Headers {
			req.Header.Set(k, v)
		}
		records := r.Records()
		got := r.Do(t, req)
		if got.Status != vr.Want.Status {
			t.Fatalf("request %d: status %d (%s), want %d", i, got.Status, bytes.TrimSpace(got.Body), vr.Want.Status)
		}
		if vr.Want.Body != nil && string(got.Body) != *vr.Want.Body {
			t.Errorf("request %d: body %q, want %q", i, got.Body, *vr.Want.Body)
		}
		var sent []string
		for _, env := range got.Sent {
			p, tn, id, ok := webhook.SplitKey(env.Key)
			if !ok || p != name || tn != vectorTenant {
				t.Errorf("request %d: key %s is not %s#%s#…", i, env.Key, name, vectorTenant)
			}
			sent = append(sent, id)
		}
		if !slices.Equal(sent, vr.Want.Events) && (len(sent) > 0 || len(vr.Want.Events) > 0) {
			t.Errorf("request %d: enqueued %q, want %q", i, sent, vr.Want.Events)
		}
		if got.Status/100 != 2 && r.Records() != records {
			t.Errorf("request %d: refused with %d but stored %d records", i, got.Status, r.Records()-records)
		}
		r.Process(t)
	}
}
