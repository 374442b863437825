// Package xmljson converts the flat callback XML of WeCom and WeChat Official
// Account (`<xml>…</xml>`) into a normalised JSON object that processor
// handlers decode into typed payloads.
//
// Rules: the root element must be `xml`; each child element becomes a key
// named by its local name; a leaf element's character data (CDATA unwrapped,
// pieces concatenated) becomes a JSON string, always, so 19-digit MsgIds stay
// exact; an element with child elements becomes a nested object; repeated
// sibling names become an array of their values in document order. Attributes,
// comments and processing instructions are ignored, whitespace-only text
// around child elements is dropped, and other text mixed with child elements
// is kept under the key "#text". DOCTYPE declarations, non-standard entities,
// non-UTF-8 encodings and nesting deeper than [MaxDepth] are rejected, and so
// is any input that is not valid UTF-8 or holds a character XML 1.0 does not
// allow ([IsChar]: C0 controls other than tab, CR and LF, surrogates,
// U+FFFE, U+FFFF), wherever it appears (comments and processing instructions
// too) and also when written as a character reference (&#xD800;): such bytes
// would otherwise reach the stored raw XML.
//
// Message formats: https://developer.work.weixin.qq.com/document/path/90239
// and https://developers.weixin.qq.com/doc/offiaccount/Message_Management/Receiving_standard_messages.html
package xmljson
