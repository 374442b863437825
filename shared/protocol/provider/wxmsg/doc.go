// Package wxmsg holds what WeCom (企业微信) callbacks and WeChat Official
// Account pushes share beyond the crypto of package wxcrypto: opening an
// encrypted callback ([Account]: msg_signature, then the window on the signed
// query timestamp, then decryption for the exact receiveid), the message
// basics every callback XML carries (type, time, payload hash) and the
// helpers of their dedup fingerprints and keys.
//
// The signature is checked before any work that grows with the body beyond
// one pass: [EncryptText] reads the envelope's <Encrypt> in a single
// streaming pass that builds no tree and allocates only that text, so an
// unauthenticated request costs about its body's size in memory.
//
// The callback protocol is shared too: a GET is the URL verification, a POST
// one message acknowledged with [Ack]. Each provider states its own [Rules]
// on top, once: which fields a dedup key hashes, what a message without
// MsgType means, its acknowledgement and the provider prefix of its error
// messages; [Rules.Parse] and [Rules.Event] apply them. Other errors returned
// here carry no prefix, so callers wrap them (fmt.Errorf("wecom: %w", err)).
//
// Message formats:
//   - https://developer.work.weixin.qq.com/document/path/90239
//   - https://developers.weixin.qq.com/doc/offiaccount/Message_Management/Receiving_standard_messages.html
package wxmsg
