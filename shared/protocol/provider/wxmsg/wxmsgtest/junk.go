package wxmsgtest

import (
	"net/url"
	"runtime"
	"strconv"
	"strings"
)

// Junk is one worst-case envelope body: what an unauthenticated sender can
// post to make a receiver work before it checks the signature.
type Junk struct {
	Name string
	Body []byte
}

// JunkEnvelopes returns envelope bodies of about size bytes each whose cost
// lies before the signature check: a huge <Encrypt>, an <Encrypt> made of
// character references, many small elements, many deeply nested elements,
// many attributes, and many comments. Each has an <Encrypt> as the root's last
// child, so a parser that stops at the <Encrypt> still walks the junk.
func JunkEnvelopes(size int) []Junk {
	const tail = "<Encrypt><![CDATA[AAAA]]></Encrypt></xml>"
	fill := func(head, unit, end string) []byte {
		var b strings.Builder
		b.Grow(size + len(unit) + len(end))
		b.WriteString(head)
		for b.Len()+len(unit)+len(end) <= size {
			b.WriteString(unit)
		}
		b.WriteString(end)
		return []byte(b.String())
	}
	nest := strings.Repeat("<a>", 31) + "x" + strings.Repeat("</a>", 31)
	return []Junk{
		{"huge_encrypt", fill("<xml><ToUserName><![CDATA[x]]></ToUserName><Encrypt><![CDATA[", "AAAAAAAAAAAAAAAA", "]]></Encrypt></xml>")},
		{"charref_encrypt", fill("<xml><Encrypt>", "&#65;&#x41;", "</Encrypt></xml>")},
		{"many_elements", fill("<xml>", "<a>1</a>", tail)},
		{"nested_elements", fill("<xml>", nest, tail)},
		{"many_attributes", fill("<xml><a", ` b="1"`, "/>"+tail)},
		{"many_comments", fill("<xml>", "<!---->", tail)},
	}
}

// UnsignedQuery returns the query of an encrypted POST signed with a wrong
// msg_signature (and signature) at unix time ts.
func UnsignedQuery(ts int64) url.Values {
	zero := strings.Repeat("0", 40)
	return url.Values{
		"msg_signature": {zero}, "signature": {zero}, "timestamp": {strconv.FormatInt(ts, 10)},
		"nonce": {"1"}, "encrypt_type": {"aes"},
	}
}

// Allocated returns the bytes the heap allocated while f ran (every
// allocation, live or not). Run it from a test that is not parallel.
func Allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// MaxUnsignedCost is what an unauthenticated request of n bytes may make a
// parser allocate: about one copy of the body (the <Encrypt> text it must
// hash) plus a little.
func MaxUnsignedCost(n int) uint64 { return uint64(n) + uint64(n)/2 + 64<<10 }
