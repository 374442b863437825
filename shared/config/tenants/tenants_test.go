package tenants

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hookwall/hookwall/shared/protocol/provider/line"
	"github.com/hookwall/hookwall/shared/protocol/provider/standard"
	"github.com/hookwall/hookwall/shared/protocol/provider/wechat"
	"github.com/hookwall/hookwall/shared/protocol/provider/wecom"
)

const goodDoc = `{"tenants":{
 "acme":{"line":{"channelSecret":"s3cr3t-line"},
         "wecom":{"token":"tok","encodingAESKey":"jWmYm7qr5nMoAUwZRjGtBxmz3KA1tkAj3ykkR6q2B2C","corpId":"wx5823bf96d3bd56c7"},
         "wechat":{"token":"tok2","appId":"wx1eb8434985c577d2"},
         "standard":{"secrets":["whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"]},
         "forward":{"url":"https://example.test/hook"}},
 "beta":{"line":{"channelSecret":"other"}}}}`

func TestParseValidDocument(t *testing.T) {
	ts, err := Parse([]byte(goodDoc))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(ts.Names(), ","); got != "acme,beta" {
		t.Fatalf("names = %s", got)
	}
	acme, ok := ts.Tenant("acme")
	if !ok {
		t.Fatal("no tenant acme")
	}
	ln, _ := acme.Settings(line.Name)
	wc, _ := acme.Settings(wecom.Name)
	wx, _ := acme.Settings(wechat.Name)
	sw, _ := acme.Settings(standard.Name)
	if ln.(*line.Settings).ChannelSecret.Reveal() != "s3cr3t-line" || wc.(*wecom.Settings).CorpID != "wx5823bf96d3bd56c7" ||
		wx.(*wechat.Settings).EncodingAESKey != "" || len(sw.(*standard.Settings).Secrets) != 1 || acme.Forward.URL != "https://example.test/hook" {
		t.Fatalf("acme = %+v", acme)
	}
	if got := strings.Join(acme.Providers(), ","); got != "line,standard,wechat,wecom" {
		t.Fatalf("acme's providers = %s", got)
	}
	beta, _ := ts.Tenant("beta")
	if _, ok := beta.Settings(wecom.Name); ok || strings.Join(beta.Providers(), ",") != "line" {
		t.Fatalf("beta's providers = %v", beta.Providers())
	}
	if _, ok := ts.Tenant("nobody"); ok {
		t.Fatal("unknown tenant found")
	}
}

func TestParseErrorsNameTheFieldAndHideSecrets(t *testing.T) {
	cases := []struct{ doc, want string }{
		{`{}`, `missing "tenants"`},
		{`{"tenants":{"a":{}}}`, `tenant "a": providers: none configured`},
		{`{"tenants":{"a#b":{"line":{"channelSecret":"x"}}}}`, `tenant "a#b": name must match`},
		{`{"tenants":{"a":{"line":{"channelSecret":""}}}}`, `line.channelSecret: required`},
		{`{"tenants":{"a":{"line":{"chanelSecret":"TOPSECRET"}}}}`, `unknown field "chanelSecret"`},
		{`{"tenants":{"a":{"wecom":{"token":"t","encodingAESKey":"short","corpId":"c"}}}}`, `wecom.encodingAESKey`},
		{`{"tenants":{"a":{"wecom":{"token":"t","encodingAESKey":"jWmYm7qr5nMoAUwZRjGtBxmz3KA1tkAj3ykkR6q2B2C"}}}}`, `wecom.corpId: required`},
		{`{"tenants":{"a":{"wechat":{"token":"t"}}}}`, `wechat.appId: required`},
		{`{"tenants":{"a":{"standard":{"secrets":["TOPSECRET"]}}}}`, `standard.secrets[0]`},
		{`{"tenants":{"a":{"line":{"channelSecret":"x"},"forward":{"url":"ftp://x"}}}}`, `forward.url`},
		{`{"tenants":{"a":{"line":{"channelSecret":TOPSECRET}}}}`, `invalid JSON at byte`},
	}
	for _, c := range cases {
		_, err := Parse([]byte(c.doc))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Parse(%s) error = %v, want it to mention %q", c.doc, err, c.want)
			continue
		}
		if strings.Contains(err.Error(), "TOPSECRET") {
			t.Errorf("error leaks a secret: %v", err)
		}
	}
}

func TestSecretNeverPrints(t *testing.T) {
	s := Secret("hunter2")
	var buf bytes.Buffer
	slog.New(slog.NewJSONHandler(&buf, nil)).Info("x", "secret", s, "line", line.Settings{ChannelSecret: s})
	out := buf.String() + fmt.Sprint(s) + fmt.Sprintf("%v %+v %#v %s", s, line.Settings{ChannelSecret: s}, line.Settings{ChannelSecret: s}, s)
	if strings.Contains(out, "hunter2") {
		t.Fatalf("secret printed: %s", out)
	}
	if s.Reveal() != "hunter2" {
		t.Fatal("Reveal lost the secret")
	}
}

type fakeSecrets map[string]string

func (f fakeSecrets) GetSecretString(_ context.Context, arn string) (string, error) {
	if v, ok := f[arn]; ok {
		return v, nil
	}
	return "", errors.New("not found")
}

func TestLoadSources(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tenants.json")
	if err := os.WriteFile(path, []byte(goodDoc), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(context.Background(), Source{File: path}); err != nil {
		t.Errorf("file: %v", err)
	}
	arn := "arn:aws:secretsmanager:us-east-1:000000000000:secret:tenants"
	if _, err := Load(context.Background(), Source{SecretARN: arn, Secrets: fakeSecrets{arn: goodDoc}}); err != nil {
		t.Errorf("secret: %v", err)
	}
	if _, err := Load(context.Background(), Source{}); err == nil {
		t.Error("no source: want an error")
	}
	if _, err := Load(context.Background(), Source{File: path, SecretARN: arn}); err == nil {
		t.Error("both sources: want an error")
	}
	if _, err := Load(context.Background(), Source{File: path + ".missing"}); err == nil {
		t.Error("missing file: want an error")
	}
}
