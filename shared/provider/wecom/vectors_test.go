package wecom

import (
	"context"
	"encoding/json"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/hookwall/hookwall/shared/webhook"
)

// vectorCase is one case of shared/vectors/wecom.json (see its README).
type vectorCase struct {
	Name                 string            `json:"name"`
	Token                string            `json:"token"`
	EncodingAESKey       string            `json:"encodingAESKey"`
	CorpID               string            `json:"corpId"`
	Method               string            `json:"method"`
	Query                map[string]string `json:"query"`
	RawQuery             string            `json:"rawQuery"`
	Body                 string            `json:"body"`
	Valid                bool              `json:"valid"`
	LenientOK            bool              `json:"lenientOk"`
	FailureReason        string            `json:"failureReason"`
	ExpectedEcho         *string           `json:"expectedEcho"`
	ExpectedPlaintextXML *string           `json:"expectedPlaintextXML"`
	Dedup                *struct {
		Group           string `json:"group"`
		PlaintextSHA256 string `json:"plaintextSha256"`
	} `json:"dedup"`
}

// loadVectors reads wecom.json from $HOOKWALL_VECTORS_DIR, by default the
// repository's sibling shared/vectors directory. A missing file fails the test.
func loadVectors(t testing.TB) []vectorCase {
	t.Helper()
	dir := os.Getenv("HOOKWALL_VECTORS_DIR")
	if dir == "" {
		dir = filepath.Join("..", "..", "..", "..", "shared", "vectors")
	}
	path := filepath.Join(dir, "wecom.json")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("cannot read the WeCom test vectors at %s (set HOOKWALL_VECTORS_DIR to the shared/vectors directory): %v", path, err)
	}
	var file struct {
		Provider string       `json:"provider"`
		Cases    []vectorCase `json:"cases"`
	}
	if err := json.Unmarshal(data, &file); err != nil {
		t.Fatalf("decode %s: %v", path, err)
	}
	if file.Provider != "wecom" || len(file.Cases) == 0 {
		t.Fatalf("%s: provider %q with %d cases, want wecom cases", path, file.Provider, len(file.Cases))
	}
	return file.Cases
}

// request builds the webhook.Request of a case with query q, its clock set
// to the case's own timestamp.
func (c *vectorCase) request(t testing.TB, q url.Values) *webhook.Request {
	t.Helper()
	ts, err := strconv.ParseInt(c.Query["timestamp"], 10, 64)
	if err != nil {
		t.Fatalf("case %s: timestamp: %v", c.Name, err)
	}
	return &webhook.Request{
		Method: c.Method, Provider: webhook.WeCom, Tenant: "t1",
		Query: q, Body: []byte(c.Body), Now: time.Unix(ts, 0),
	}
}

func (c *vectorCase) parser(t testing.TB) *Parser {
	t.Helper()
	p, err := New(Config{Token: c.Token, EncodingAESKey: c.EncodingAESKey, CorpID: c.CorpID})
	if err != nil {
		t.Fatalf("case %s: New: %v", c.Name, err)
	}
	return p
}

func TestVectors(t *testing.T) {
	cases := loadVectors(t)
	keys := map[string]string{}   // case name → dedup key
	groups := map[string]string{} // case name → dedup group
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			p := c.parser(t)
			decoded := url.Values{}
			for k, v := range c.Query {
				decoded.Set(k, v)
			}
			raw, err := url.ParseQuery(c.RawQuery)
			if err != nil {
				t.Fatalf("rawQuery: %v", err)
			}
			for _, q := range []struct {
				name string
				vals url.Values
			}{{"query", decoded}, {"rawQuery", raw}} {
				d, err := p.Parse(context.Background(), c.request(t, q.vals))
				if c.LenientOK && (err == nil) != c.Valid {
					t.Logf("%s: lenient case: got err = %v", q.name, err)
					continue
				}
				if !c.Valid {
					if err == nil {
						t.Fatalf("%s: Parse accepted an invalid case (%s)", q.name, c.FailureReason)
					}
					switch c.FailureReason {
					case "bad_signature", "bad_padding", "wrong_receiveid":
						if !errors.Is(err, webhook.ErrBadSignature) {
							t.Errorf("%s: error = %v, want ErrBadSignature", q.name, err)
						}
					}
					continue
				}
				if err != nil {
					t.Fatalf("%s: Parse: %v", q.name, err)
				}
				if d.Reply.Status != 200 {
					t.Errorf("%s: reply status = %d, want 200", q.name, d.Reply.Status)
				}
				if c.ExpectedEcho != nil {
					if !d.Verification || len(d.Events) != 0 {
						t.Errorf("%s: Verification = %v with %d events, want true with none", q.name, d.Verification, len(d.Events))
					}
					if string(d.Reply.Body) != *c.ExpectedEcho {
						t.Errorf("%s: echo = %q, want %q", q.name, d.Reply.Body, *c.ExpectedEcho)
					}
					continue
				}
				if d.Verification || len(d.Events) != 1 {
					t.Fatalf("%s: Verification = %v with %d events, want false with 1", q.name, d.Verification, len(d.Events))
				}
				if len(d.Reply.Body) != 0 {
					t.Errorf("%s: reply body = %q, want empty", q.name, d.Reply.Body)
				}
				ev := d.Events[0]
				if c.ExpectedPlaintextXML != nil && string(ev.Raw) != *c.ExpectedPlaintextXML {
					t.Errorf("%s: Raw = %q\nwant %q", q.name, ev.Raw, *c.ExpectedPlaintextXML)
				}
				if c.Dedup == nil {
					t.Fatalf("valid POST case without dedup expectations")
				}
				if ev.PayloadHash != c.Dedup.PlaintextSHA256 {
					t.Errorf("%s: PayloadHash = %s, want %s", q.name, ev.PayloadHash, c.Dedup.PlaintextSHA256)
				}
				checkKey(t, ev.DedupKey)
				if old, ok := keys[c.Name]; ok && old != ev.DedupKey {
					t.Errorf("query and rawQuery gave different keys %q and %q", old, ev.DedupKey)
				}
				keys[c.Name], groups[c.Name] = ev.DedupKey, c.Dedup.Group
				checkTyped(t, ev)
			}
		})
	}
	if len(keys) < 2 {
		t.Fatalf("only %d valid POST cases produced keys", len(keys))
	}
	for a := range keys {
		for b := range keys {
			if a >= b {
				continue
			}
			same := groups[a] == groups[b]
			if (keys[a] == keys[b]) != same {
				t.Errorf("%s (group %s, key %s) and %s (group %s, key %s): same group %v but same key %v",
					a, groups[a], keys[a], b, groups[b], keys[b], same, keys[a] == keys[b])
			}
		}
	}
}

// checkKey asserts the dedup key contract: non-empty printable ASCII without
// spaces, at most 200 bytes.
func checkKey(t testing.TB, k string) {
	t.Helper()
	if k == "" || len(k) > 200 {
		t.Errorf("DedupKey %q: length %d, want 1..200", k, len(k))
	}
	for i := 0; i < len(k); i++ {
		if k[i] <= ' ' || k[i] > '~' {
			t.Errorf("DedupKey %q has a non-printable-ASCII byte at %d", k, i)
			return
		}
	}
}

// checkTyped decodes the event's JSON into the payload type of its Type.
func checkTyped(t *testing.T, ev webhook.Event) {
	t.Helper()
	switch ev.Type {
	case Text.Name:
		var m TextMessage
		decode(t, ev.JSON, &m)
		if m.MsgID == "" || m.Content == "" || m.MsgType != "text" {
			t.Errorf("TextMessage = %+v: missing fields", m)
		}
	case ApprovalChanged.Name:
		var m ApprovalChange
		decode(t, ev.JSON, &m)
		if m.ApprovalInfo.SpNo == "" || m.ApprovalInfo.StatuChangeEvent == "" || m.ApprovalInfo.Applyer.UserID == "" || m.ApprovalInfo.TemplateID == "" {
			t.Errorf("ApprovalChange = %+v: missing fields", m)
		}
	case ContactChanged.Name:
		var m ContactChange
		decode(t, ev.JSON, &m)
		if m.ChangeType == "" {
			t.Errorf("ContactChange = %+v: missing ChangeType", m)
		}
	case ExternalContactChanged.Name:
		var m ExternalContactChange
		decode(t, ev.JSON, &m)
		if m.ChangeType == "" || m.ExternalUserID == "" {
			t.Errorf("ExternalContactChange = %+v: missing fields", m)
		}
	}
}

func decode(t *testing.T, data []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(data, v); err != nil {
		t.Errorf("decode %T: %v", v, err)
	}
}
