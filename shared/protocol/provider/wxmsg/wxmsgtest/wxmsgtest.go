package wxmsgtest

import (
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/base/webhook/webhooktest"
	"github.com/hookwall/hookwall/shared/protocol/provider/wxcrypto"
)

// Case holds the fields every case of shared/vectors/wecom.json and
// wechat.json has (see the README there). A provider's case type embeds it
// and adds its own configuration fields.
type Case struct {
	Name                 string            `json:"name"`
	Token                string            `json:"token"`
	Method               string            `json:"method"`
	Query                map[string]string `json:"query"`
	RawQuery             string            `json:"rawQuery"`
	Body                 string            `json:"body"`
	Valid                bool              `json:"valid"`
	LenientOK            bool              `json:"lenientOk"`
	FailureReason        string            `json:"failureReason"`
	ExpectedEcho         *string           `json:"expectedEcho"`
	ExpectedPlaintextXML *string           `json:"expectedPlaintextXML"`
	Dedup                *Dedup            `json:"dedup"`
}

// Dedup is the dedup expectation of a valid POST case: cases of one Group
// must share a key, cases of different groups must not.
type Dedup struct {
	Group           string `json:"group"`
	PlaintextSHA256 string `json:"plaintextSha256"`
}

// Query is one spelling of a case's query: decoded from Case.Query or
// parsed from Case.RawQuery.
type Query struct {
	Name   string
	Values url.Values
}

// Load reads file (such as "wecom.json") from $HOOKWALL_VECTORS_DIR, by
// default the repository's sibling shared/vectors directory, and returns its
// cases, failing t if the file is missing, is not for provider or has none.
func Load[C any](t testing.TB, file, provider string) []C {
	t.Helper()
	path := filepath.Join(webhooktest.VectorsDir(t), file)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("cannot read the %s test vectors at %s (set HOOKWALL_VECTORS_DIR to the shared/vectors directory): %v", provider, path, err)
	}
	var doc struct {
		Provider string `json:"provider"`
		Cases    []C    `json:"cases"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatalf("decode %s: %v", path, err)
	}
	if doc.Provider != provider || len(doc.Cases) == 0 {
		t.Fatalf("%s: provider %q with %d cases, want %s cases", path, doc.Provider, len(doc.Cases), provider)
	}
	return doc.Cases
}

// Queries returns the case's query twice: decoded from Query and parsed
// from RawQuery; both must give the same result.
func (c *Case) Queries(t testing.TB) []Query {
	t.Helper()
	decoded := url.Values{}
	for k, v := range c.Query {
		decoded.Set(k, v)
	}
	raw, err := url.ParseQuery(c.RawQuery)
	if err != nil {
		t.Fatalf("case %s: rawQuery: %v", c.Name, err)
	}
	return []Query{{"query", decoded}, {"rawQuery", raw}}
}

// Request builds the webhook.Request of the case for provider with query q,
// its clock set to the case's own timestamp.
func (c *Case) Request(t testing.TB, provider string, q url.Values) *webhook.Request {
	t.Helper()
	ts, err := strconv.ParseInt(c.Query["timestamp"], 10, 64)
	if err != nil {
		t.Fatalf("case %s: timestamp: %v", c.Name, err)
	}
	return &webhook.Request{
		Method: c.Method, Provider: provider, Tenant: "t1",
		Query: q, Body: []byte(c.Body), Now: time.Unix(ts, 0),
	}
}

// CheckGroups checks keys (case name → dedup key) against groups (case name
// → dedup group): two cases share a key exactly when they share a group.
func CheckGroups(t testing.TB, keys, groups map[string]string) {
	t.Helper()
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

// CheckKey asserts the dedup key contract: non-empty printable ASCII without
// spaces, at most 200 bytes.
func CheckKey(t testing.TB, k string) {
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

// Decode unmarshals an event's JSON into v, failing t on error.
func Decode(t testing.TB, data []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(data, v); err != nil {
		t.Errorf("decode %T: %v", v, err)
	}
}

// Encrypt encrypts msg for receiveID with the 43-character encodingAESKey
// and a fixed random prefix, returning the base64 <Encrypt> value, as the
// provider would send it.
func Encrypt(t testing.TB, encodingAESKey, msg, receiveID string) string {
	t.Helper()
	key, err := wxcrypto.ParseKey(encodingAESKey)
	if err != nil {
		t.Fatal(err)
	}
	enc, err := wxcrypto.Encrypt(key, []byte("0123456789abcdef"), []byte(msg), receiveID)
	if err != nil {
		t.Fatal(err)
	}
	return enc
}

// Keys collects the dedup keys the valid POST cases of one vector file
// produce, to check their groups once every case has run.
type Keys struct {
	keys, groups map[string]string // case name → dedup key, dedup group
}

// NewKeys returns an empty collector.
func NewKeys() *Keys {
	return &Keys{keys: map[string]string{}, groups: map[string]string{}}
}

// CheckEvent checks the event a valid POST case c produced with the query
// spelling named query: Raw is the expected plaintext, PayloadHash its
// SHA-256, the dedup key keeps the key contract and is the same for every
// spelling of the query. It records the key for Check.
func (k *Keys) CheckEvent(t testing.TB, c *Case, query string, ev webhook.Event) {
	t.Helper()
	if c.ExpectedPlaintextXML != nil && string(ev.Raw) != *c.ExpectedPlaintextXML {
		t.Errorf("%s: Raw = %q\nwant %q", query, ev.Raw, *c.ExpectedPlaintextXML)
	}
	if c.Dedup == nil {
		t.Fatalf("valid POST case without dedup expectations")
	}
	if ev.PayloadHash != c.Dedup.PlaintextSHA256 {
		t.Errorf("%s: PayloadHash = %s, want %s", query, ev.PayloadHash, c.Dedup.PlaintextSHA256)
	}
	CheckKey(t, ev.DedupKey)
	if old, ok := k.keys[c.Name]; ok && old != ev.DedupKey {
		t.Errorf("query and rawQuery gave different keys %q and %q", old, ev.DedupKey)
	}
	k.keys[c.Name], k.groups[c.Name] = ev.DedupKey, c.Dedup.Group
}

// Check fails t unless at least min cases produced keys and two cases share
// a key exactly when they share a group (CheckGroups).
func (k *Keys) Check(t testing.TB, min int) {
	t.Helper()
	if len(k.keys) < min {
		t.Fatalf("only %d valid POST cases produced keys", len(k.keys))
	}
	CheckGroups(t, k.keys, k.groups)
}
