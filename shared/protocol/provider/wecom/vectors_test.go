package wecom

import (
	"context"
	"errors"
	"testing"

	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/protocol/provider/wxmsg/wxmsgtest"
)

// vectorCase is one case of shared/vectors/wecom.json (see its README).
type vectorCase struct {
	wxmsgtest.Case
	EncodingAESKey string `json:"encodingAESKey"`
	CorpID         string `json:"corpId"`
}

// loadVectors reads shared/vectors/wecom.json; see [wxmsgtest.Load].
func loadVectors(t testing.TB) []vectorCase {
	t.Helper()
	return wxmsgtest.Load[vectorCase](t, "wecom.json", "wecom")
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
	keys := wxmsgtest.NewKeys()
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			p := c.parser(t)
			for _, q := range c.Queries(t) {
				d, err := p.Parse(context.Background(), c.Request(t, Name, q.Values))
				if c.LenientOK && (err == nil) != c.Valid {
					t.Logf("%s: lenient case: got err = %v", q.Name, err)
					continue
				}
				if !c.Valid {
					if err == nil {
						t.Fatalf("%s: Parse accepted an invalid case (%s)", q.Name, c.FailureReason)
					}
					switch c.FailureReason {
					case "bad_signature", "bad_padding", "wrong_receiveid":
						if !errors.Is(err, webhook.ErrBadSignature) {
							t.Errorf("%s: error = %v, want ErrBadSignature", q.Name, err)
						}
					}
					continue
				}
				if err != nil {
					t.Fatalf("%s: Parse: %v", q.Name, err)
				}
				if d.Reply.Status != 200 {
					t.Errorf("%s: reply status = %d, want 200", q.Name, d.Reply.Status)
				}
				if c.ExpectedEcho != nil {
					if !d.Verification || len(d.Events) != 0 {
						t.Errorf("%s: Verification = %v with %d events, want true with none", q.Name, d.Verification, len(d.Events))
					}
					if string(d.Reply.Body) != *c.ExpectedEcho {
						t.Errorf("%s: echo = %q, want %q", q.Name, d.Reply.Body, *c.ExpectedEcho)
					}
					continue
				}
				if d.Verification || len(d.Events) != 1 {
					t.Fatalf("%s: Verification = %v with %d events, want false with 1", q.Name, d.Verification, len(d.Events))
				}
				if len(d.Reply.Body) != 0 {
					t.Errorf("%s: reply body = %q, want empty", q.Name, d.Reply.Body)
				}
				ev := d.Events[0]
				keys.CheckEvent(t, &c.Case, q.Name, ev)
				checkTyped(t, ev)
			}
		})
	}
	keys.Check(t, 2)
}

// checkTyped decodes the event's JSON into the payload type of its Type.
func checkTyped(t *testing.T, ev webhook.Event) {
	t.Helper()
	switch ev.Type {
	case Text.Name:
		var m TextMessage
		wxmsgtest.Decode(t, ev.JSON, &m)
		if m.MsgID == "" || m.Content == "" || m.MsgType != "text" {
			t.Errorf("TextMessage = %+v: missing fields", m)
		}
	case ApprovalChanged.Name:
		var m ApprovalChange
		wxmsgtest.Decode(t, ev.JSON, &m)
		if m.ApprovalInfo.SpNo == "" || m.ApprovalInfo.StatuChangeEvent == "" || m.ApprovalInfo.Applyer.UserID == "" || m.ApprovalInfo.TemplateID == "" {
			t.Errorf("ApprovalChange = %+v: missing fields", m)
		}
	case ContactChanged.Name:
		var m ContactChange
		wxmsgtest.Decode(t, ev.JSON, &m)
		if m.ChangeType == "" {
			t.Errorf("ContactChange = %+v: missing ChangeType", m)
		}
	case ExternalContactChanged.Name:
		var m ExternalContactChange
		wxmsgtest.Decode(t, ev.JSON, &m)
		if m.ChangeType == "" || m.ExternalUserID == "" {
			t.Errorf("ExternalContactChange = %+v: missing fields", m)
		}
	}
}
