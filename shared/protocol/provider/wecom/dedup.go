package wecom

import (
	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/protocol/provider/wxmsg"
	"github.com/hookwall/hookwall/shared/protocol/provider/xmljson"
)

// field is one name of a fingerprint and its path in the document.
type field struct {
	name string
	path []string
}

func fld(name string, path ...string) field {
	if len(path) == 0 {
		path = []string{name}
	}
	return field{name, path}
}

// Fingerprint field lists, fixed per event kind (see the package doc).
var (
	approvalFields = []field{fld("ToUserName"), fld("AgentID"), fld("ApprovalInfo.SpNo", "ApprovalInfo", "SpNo"),
		fld("ApprovalInfo.StatuChangeEvent", "ApprovalInfo", "StatuChangeEvent"),
		fld("ApprovalInfo.SpStatus", "ApprovalInfo", "SpStatus"), fld("CreateTime")}
	contactFields         = []field{fld("ToUserName"), fld("ChangeType"), fld("UserID"), fld("Id"), fld("TagId"), fld("CreateTime")}
	externalContactFields = []field{fld("ToUserName"), fld("ChangeType"), fld("UserID"), fld("ExternalUserID"), fld("ChatId"), fld("State"), fld("CreateTime")}
	genericFields         = []field{fld("ToUserName"), fld("Event"), fld("ChangeType"), fld("CreateTime")}
)

func dedupKey(doc *xmljson.Doc, ev *webhook.Event) string {
	typ, xmlHash := ev.Type, ev.PayloadHash
	if msgID := doc.Get("MsgId"); msgID != "" {
		agent := doc.Get("AgentID")
		if wxmsg.IsToken(msgID, 64) && (agent == "" || wxmsg.IsToken(agent, 32)) {
			return "msg:" + agent + ":" + msgID
		}
		return "msgh:" + wxmsg.Fingerprint(
			wxmsg.Field{Name: "AgentID", Value: agent},
			wxmsg.Field{Name: "MsgId", Value: msgID})
	}
	fields, generic := genericFields, true
	switch typ {
	case "sys_approval_change":
		fields, generic = approvalFields, false
	case "change_contact":
		fields, generic = contactFields, false
	case "change_external_contact":
		fields, generic = externalContactFields, false
	}
	kv := make([]wxmsg.Field, 0, len(fields)+1)
	for _, fl := range fields {
		kv = append(kv, wxmsg.Field{Name: fl.name, Value: doc.Get(fl.path...)})
	}
	if generic {
		kv = append(kv, wxmsg.Field{Name: "XMLSHA256", Value: xmlHash})
	}
	name := typ
	if !wxmsg.IsToken(name, 64) {
		name = "_"
	}
	return "evt:" + name + ":" + wxmsg.Fingerprint(kv...)
}
