// Package wechat verifies, decrypts and parses WeChat Official Account
// (微信公众号) message pushes for one tenant, in plaintext, compatible and
// safe mode, and answers the GET server-verification handshake.
//
// Provider documentation:
//   - https://developers.weixin.qq.com/doc/offiaccount/Getting_Started/message-push.html (server config, modes)
//   - https://developers.weixin.qq.com/doc/channels/API/basics/message_push.html (GET verification)
//   - https://developers.weixin.qq.com/doc/oplatform/Third-party_Platforms/2.0/api/Before_Develop/Message_encryption_and_decryption.html (encryption)
//   - https://developers.weixin.qq.com/doc/offiaccount/Message_Management/Receiving_standard_messages.html (message formats, dedup advice)
//
// # Verification
//
//   - GET (all modes): signature = SHA1(sort([Token, timestamp, nonce])); the
//     reply is echostr verbatim (it is not encrypted).
//   - POST with encrypt_type=aes (safe and compatible mode): msg_signature =
//     SHA1(sort([Token, timestamp, nonce, Encrypt])) is required, with no
//     fallback to signature, which covers no body. The envelope's <Encrypt>
//     is decrypted with receiveid = [Config.AppID]; in compatible mode the
//     plaintext fields beside it are ignored: only the decrypted copy is
//     trusted.
//   - POST without encrypt_type (or raw): signature over [Token, timestamp,
//     nonce]. That signature covers no part of the body, so anyone who has
//     seen one signed URL can post a forged body with it. A tenant with an
//     [Config.EncodingAESKey] has enabled encryption, so its unencrypted
//     POSTs are rejected with [webhook.ErrBadSignature]; only tenants without
//     a key (plaintext mode) accept them.
//
// A missing or wrong signature, an undecryptable body or another receiveid
// is [webhook.ErrBadSignature]; a query timestamp outside [Config.Tolerance]
// of [webhook.Request.Now] is [webhook.ErrStaleTimestamp]; a body that is not
// callback XML is [webhook.ErrMalformed], and so is a message that is not
// valid UTF-8 or holds a character XML does not allow (anywhere, comments
// included, see package xmljson): it is answered 400 and never stored.
//
// Anyone can post, so the signature is checked before anything that grows
// with the body: in plaintext mode before the body is read at all; in
// encrypted mode after one pass over the envelope ([wxmsg.EncryptText]),
// which builds no tree and allocates only the <Encrypt> text, so an unsigned
// body costs about its own size in memory. Only an authentic ciphertext is
// decrypted and only then is the message XML parsed.
//
// # Replies
//
// POST answers 200 text/plain "success": WeChat then neither retries nor
// shows the user an error, and no passive reply is sent.
//
// # Events
//
// Each POST yields one [webhook.Event]: Raw is the (decrypted or plain) XML,
// JSON its normalisation by package xmljson (every leaf a string),
// PayloadHash the hex SHA-256 of that XML, OccurredAt the CreateTime and Type
// the Event value when MsgType is "event", else MsgType.
//
// # Dedup key contract
//
// The DedupKey is scoped by provider and tenant (one Official Account) and is
// printable ASCII without spaces, at most 200 bytes (well under the
// [wxmsg.MaxKeyLen] of 256 that [wxmsg.ValidKey] enforces as a last guard).
// XML values are never copied into a key unless they are short
// [A-Za-z0-9_.-] tokens: a value that is longer, or holds control
// characters, non-ASCII or anything else, is hashed instead (never rejected),
// so no XML field can make a key long or put a control character or invalid
// UTF-8 in it:
//
//   - A message with a MsgId: "msg:" + MsgId ("msgh:" + hex32 over
//     "MsgId=…\n" if MsgId is not a short [A-Za-z0-9_.-] token).
//   - An event: "evt:" + hex32 over the lines "ToUserName=…\n",
//     "FromUserName=…\n", "CreateTime=…\n", "Event=…\n", "EventKey=…\n",
//     "MsgID=…\n" (a missing element is an empty value), where hex32 is the
//     first 32 hex characters of SHA-256.
//
// The official event rule, FromUserName + CreateTime, collides when one user
// triggers two events in the same second (subscribe + LOCATION), so Event and
// EventKey are added; MsgID (upper-case D, carried by TEMPLATESENDJOBFINISH
// and MASSSENDJOBFINISH) separates job reports for one user in one second.
package wechat
