package wecom

import (
	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/protocol/provider/wxmsg"
)

// Event types. Processor handlers register on them; the payload is the
// event's normalised JSON decoded into the Go type.
var (
	// Text is a text message (MsgType "text").
	Text = webhook.NewType[TextMessage](Name, "text")
	// ApprovalChanged is an approval state transition (Event "sys_approval_change").
	ApprovalChanged = webhook.NewType[ApprovalChange](Name, "sys_approval_change")
	// ContactChanged is a member, department or tag change (Event "change_contact").
	ContactChanged = webhook.NewType[ContactChange](Name, "change_contact")
	// ExternalContactChanged is an external-contact change (Event "change_external_contact").
	ExternalContactChanged = webhook.NewType[ExternalContactChange](Name, "change_external_contact")
)

// TextMessage is a text message sent by a member to an app
// (https://developer.work.weixin.qq.com/document/path/90239). All values are
// strings as in the XML; MsgID is a 64-bit decimal.
type TextMessage struct {
	wxmsg.Header
	Content string `json:"Content"`
	MsgID   string `json:"MsgId"`
	AgentID string `json:"AgentID"`
}

// ApprovalChange is the sys_approval_change event, sent once per state
// transition of an approval (https://developer.work.weixin.qq.com/document/path/90376).
type ApprovalChange struct {
	wxmsg.EventHeader
	AgentID      string       `json:"AgentID"`
	ApprovalInfo ApprovalInfo `json:"ApprovalInfo"`
}

// ApprovalInfo is the ApprovalInfo element of an [ApprovalChange]. Repeated
// elements (SpRecord, Notifyer, Comments) are left in the event's JSON.
type ApprovalInfo struct {
	SpNo             string  `json:"SpNo"`
	SpName           string  `json:"SpName"`
	SpStatus         string  `json:"SpStatus"`
	TemplateID       string  `json:"TemplateId"`
	ApplyTime        string  `json:"ApplyTime"`
	Applyer          Applyer `json:"Applyer"`
	StatuChangeEvent string  `json:"StatuChangeEvent"`
}

// Applyer is the applicant of an approval.
type Applyer struct {
	UserID string `json:"UserId"`
	Party  string `json:"Party"`
}

// ContactChange is the change_contact event: ChangeType is create_user,
// update_user, delete_user, create_party, update_party, delete_party or
// update_tag (https://developer.work.weixin.qq.com/document/path/90970).
type ContactChange struct {
	wxmsg.EventHeader
	ChangeType string `json:"ChangeType"`
	// UserID and NewUserID identify a member (user changes).
	UserID    string `json:"UserID"`
	NewUserID string `json:"NewUserID"`
	Name      string `json:"Name"`
	// Department is a comma-separated list of department ids.
	Department string `json:"Department"`
	Mobile     string `json:"Mobile"`
	Email      string `json:"Email"`
	Status     string `json:"Status"`
	// ID identifies a department (party changes); ParentID is its parent.
	ID       string `json:"Id"`
	ParentID string `json:"ParentId"`
	// TagID identifies a tag (update_tag); the Add/Del lists are comma-separated.
	TagID         string `json:"TagId"`
	AddUserItems  string `json:"AddUserItems"`
	DelUserItems  string `json:"DelUserItems"`
	AddPartyItems string `json:"AddPartyItems"`
	DelPartyItems string `json:"DelPartyItems"`
}

// ExternalContactChange is the change_external_contact event: ChangeType is
// add_external_contact, edit_external_contact, add_half_external_contact,
// del_external_contact, del_follow_user or transfer_fail
// (https://developer.work.weixin.qq.com/document/path/92130).
type ExternalContactChange struct {
	wxmsg.EventHeader
	ChangeType     string `json:"ChangeType"`
	UserID         string `json:"UserID"`
	ExternalUserID string `json:"ExternalUserID"`
	State          string `json:"State"`
	WelcomeCode    string `json:"WelcomeCode"`
	Source         string `json:"Source"`
	FailReason     string `json:"FailReason"`
}
