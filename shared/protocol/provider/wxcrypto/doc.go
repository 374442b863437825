// Package wxcrypto implements the WXBizMsgCrypt message scheme shared by WeCom
// (企业微信) callbacks and WeChat Official Account safe/compatible mode:
// SHA1 request signatures over sorted strings and AES-256-CBC with PKCS#7
// padding to 32 bytes over random(16) || uint32_be(len(msg)) || msg || receiveid.
//
// References:
//   - https://developer.work.weixin.qq.com/document/path/91144 (加解密方案说明)
//   - https://developer.work.weixin.qq.com/document/path/90930 (回调配置)
//   - https://developers.weixin.qq.com/doc/oplatform/Third-party_Platforms/2.0/api/Before_Develop/Message_encryption_and_decryption.html
//
// Unlike the official samples, [Decrypt] checks every length and padding byte
// before slicing, accepts pad values 1..32 (the official sample message has
// pad 30), compares the trailing receiveid in constant time, and never panics.
// Error messages never contain ciphertext, plaintext or keys.
package wxcrypto
