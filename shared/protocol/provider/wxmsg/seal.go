package wxmsg

import (
	"encoding/xml"
	"fmt"
	"hash/fnv"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/hookwall/hookwall/shared/protocol/provider/wxcrypto"
)

// Address is what a signer reads of a WeCom/WeChat message to address its
// envelope and query.
type Address struct {
	XMLName      xml.Name `xml:"xml"`
	ToUserName   string   `xml:"ToUserName"`
	FromUserName string   `xml:"FromUserName"`
	AgentID      string   `xml:"AgentID"`
}

// ReadAddress reads the addressing fields of the message XML body. An error
// means body is not message XML.
func ReadAddress(body []byte) (Address, error) {
	var a Address
	if err := xml.Unmarshal(body, &a); err != nil {
		return a, fmt.Errorf("message xml: %w", err)
	}
	return a, nil
}

// Stamp returns the timestamp (unix seconds of now) and nonce of a signed
// request: nonce itself, or 10 random digits read from random when empty.
func Stamp(now time.Time, nonce string, random io.Reader) (ts, n string, err error) {
	if nonce == "" {
		var b [10]byte
		if _, err := io.ReadFull(random, b[:]); err != nil {
			return "", "", fmt.Errorf("nonce: %w", err)
		}
		for i := range b {
			b[i] = '0' + b[i]%10
		}
		nonce = string(b[:])
	}
	return strconv.FormatInt(now.Unix(), 10), nonce, nil
}

// Seal encrypts msg for receiveID under encodingAESKey, with a random
// prefix read from random, and returns the Base64 ciphertext.
func Seal(encodingAESKey string, msg []byte, receiveID string, random io.Reader) (string, error) {
	key, err := wxcrypto.ParseKey(encodingAESKey)
	if err != nil {
		return "", err
	}
	var prefix [16]byte
	if _, err := io.ReadFull(random, prefix[:]); err != nil {
		return "", fmt.Errorf("random prefix: %w", err)
	}
	return wxcrypto.Encrypt(key, prefix[:], msg, receiveID)
}

// CDATA wraps s in a CDATA section (splitting any "]]>" it holds).
func CDATA(s string) string {
	return "<![CDATA[" + strings.ReplaceAll(s, "]]>", "]]]]><![CDATA[>") + "]]>"
}

// DemoMsgID returns a made-up MsgId, different for each (tag, n): 18
// digits, the tag folded into the high ones (the providers' demo ids).
func DemoMsgID(tag string, n uint64) string {
	h := fnv.New32a()
	h.Write([]byte(tag))
	return strconv.FormatUint(1e17+uint64(h.Sum32())%1e5*1e11+n%1e11, 10)
}
