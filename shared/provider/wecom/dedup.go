package wecom

import (
	"crypto/sha256"
	"encoding/hex"

	"github.com/hookwall/hookwall/shared/provider/xmljson"
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

func dedupKey(doc *xmljson.Doc, typ, xmlHash string) string {
	if msgID := doc.Get("MsgId"); msgID != "" {
		agent := doc.Get("AgentID")
		if isToken(msgID, 64) && (agent == "" || isToken(agent, 32)) {
			return "msg:" + agent + ":" + msgID
		}
		return "msgh:" + fingerprint([][2]string{{"AgentID", agent}, {"MsgId", msgID}})
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
	kv := make([][2]string, 0, len(fields)+1)
	for _, fl := range fields {
		kv = append(kv, [2]string{fl.name, doc.Get(fl.path...)})
	}
	if generic {
		kv = append(kv, [2]string{"XMLSHA256", xmlHash})
	}
	name := typ
	if !isToken(name, 64) {
		name = "_"
	}
	return "evt:" + name + ":" + fingerprint(kv)
}

// fingerprint returns the first 32 hex characters of SHA-256 over the
// "name=value\n" lines of kv.
func fingerprint(kv [][2]string) string {
	h := sha256.New()
	for _, p := range kv {
		h.Write([]byte(p[0]))
		h.Write([]byte{'='})
		h.Write([]byte(p[1]))
		h.Write([]byte{'\n'})
	}
	return hex.EncodeToString(h.Sum(nil))[:32]
}

// isToken reports whether s is 1..max bytes of [A-Za-z0-9_.-].
func isToken(s string, max int) bool {
	if len(s) == 0 || len(s) > max {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '.' || c == '-') {
			return false
		}
	}
	return true
}
