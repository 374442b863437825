// Package wecom verifies, decrypts and parses WeCom (企业微信) callbacks for
// one tenant: the GET URL-verification handshake and POSTed messages and
// events, encrypted with the WXBizMsgCrypt scheme of package wxcrypto.
//
// Provider documentation:
//   - https://developer.work.weixin.qq.com/document/path/90930 (回调配置: GET/POST parameters, retries)
//   - https://developer.work.weixin.qq.com/document/path/91144 (加解密方案说明)
//   - https://developer.work.weixin.qq.com/document/path/90239 (接收消息格式)
//   - https://developer.work.weixin.qq.com/document/path/90376 (事件格式: change_contact, sys_approval_change, ...)
//
// # Verification
//
// msg_signature must equal the lowercase hex SHA1 of sort([Token, timestamp,
// nonce, X]) where X is echostr (GET) or the envelope's <Encrypt> (POST); a
// missing parameter or mismatch is [webhook.ErrBadSignature]. The query
// timestamp must be within [Config.Tolerance] of [webhook.Request.Now]
// ([webhook.ErrStaleTimestamp]). The ciphertext must decrypt with the trailing
// receiveid equal to [Config.CorpID]; otherwise the message is not for this
// tenant and the error also wraps [webhook.ErrBadSignature]. The envelope's
// ToUserName and AgentID are not signed and are ignored: identity comes from
// the decrypted XML only.
//
// Anyone can post, so nothing that grows with the body happens before the
// signature is checked except one pass over the envelope
// ([wxmsg.EncryptText]): it builds no tree and allocates only the <Encrypt>
// text, so an unsigned body costs about its own size in memory. A body that
// is not a well-formed envelope with exactly one non-empty <Encrypt> is
// [webhook.ErrMalformed]. Only an authentic ciphertext is decrypted, and only
// then is the message XML parsed. A decrypted message that is not valid
// UTF-8, holds a character XML does not allow (anywhere, comments included,
// see package xmljson) or is not callback XML is [webhook.ErrMalformed]: it
// is answered 400 and never stored.
//
// # Replies
//
// GET answers 200 text/plain with exactly the decrypted echostr. POST answers
// 200 with an empty body (no passive reply).
//
// # Events
//
// Each POST yields one [webhook.Event]: Raw is the decrypted XML, JSON its
// normalisation by package xmljson (every leaf a string), PayloadHash the hex
// SHA-256 of the decrypted XML, OccurredAt the CreateTime (unix seconds) and
// Type the Event value when MsgType is "event", else MsgType (InfoType for
// suite callbacks that carry no MsgType).
//
// # Dedup key contract
//
// The DedupKey is scoped by provider and tenant (the tenant is one CorpID) and
// is printable ASCII without spaces, at most 200 bytes (well under the
// [wxmsg.MaxKeyLen] of 256 that [wxmsg.ValidKey] enforces as a last guard).
// XML values are never copied into a key unless they are short
// [A-Za-z0-9_.-] tokens: a value that is longer, or holds control
// characters, non-ASCII or anything else, is hashed instead (never rejected),
// so no XML field can make a key long or put a control character or invalid
// UTF-8 in it:
//
//   - A message with a MsgId: "msg:" + AgentID + ":" + MsgId (AgentID may be
//     empty, giving "msg::<MsgId>"). If either value is not a short
//     [A-Za-z0-9_.-] token, the key is "msgh:" + hex32 over
//     "AgentID=…\nMsgId=…\n" instead.
//   - Anything else: "evt:" + type + ":" + hex32 over a canonical list of
//     "name=value\n" lines, where type is the event type (or "_" if it is not
//     a short token) and hex32 is the first 32 hex characters of SHA-256.
//     The names, in this order, are (a missing element is an empty value; a
//     dotted name is nested under ApprovalInfo):
//   - sys_approval_change: ToUserName, AgentID, ApprovalInfo.SpNo,
//     ApprovalInfo.StatuChangeEvent, ApprovalInfo.SpStatus, CreateTime. Every
//     state transition of one approval is its own event; keying on SpNo alone
//     would drop later transitions.
//   - change_contact: ToUserName, ChangeType, UserID, Id, TagId, CreateTime
//     (UserID for users, Id for departments, TagId for tags).
//   - change_external_contact: ToUserName, ChangeType, UserID,
//     ExternalUserID, ChatId, State, CreateTime.
//   - any other event or callback: ToUserName, Event, ChangeType, CreateTime,
//     XMLSHA256 (the hex SHA-256 of the whole decrypted XML).
//
// The official "FromUserName + CreateTime" rule is not used for events:
// system callbacks come from "sys", so two different events in one second
// would collide.
package wecom
