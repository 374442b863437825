package signer

import (
	"bytes"
	"crypto/rand"
	"io"
	"strconv"
	"time"
)

// Placeholders Expand replaces in a body template.
const (
	// PlaceholderNow is the time in unix seconds (WeCom/WeChat CreateTime).
	PlaceholderNow = "{{now}}"
	// PlaceholderNowMillis is the time in unix milliseconds (LINE timestamp).
	PlaceholderNowMillis = "{{now_ms}}"
	// PlaceholderNowRFC3339 is the time in RFC 3339, UTC (Standard Webhooks payloads).
	PlaceholderNowRFC3339 = "{{now_rfc3339}}"
	// PlaceholderID is a fresh random id (26 characters of A–Z and 2–7) at
	// each occurrence: a new event id, so the event is not a duplicate.
	PlaceholderID = "{{id}}"
)

// Expand returns body with its placeholders replaced: the times by now,
// each {{id}} by a new id read from random (crypto/rand when nil). A body
// without placeholders is returned as it is.
func Expand(body []byte, now time.Time, random io.Reader) ([]byte, error) {
	if !bytes.Contains(body, []byte("{{")) {
		return body, nil
	}
	if random == nil {
		random = rand.Reader
	}
	out := bytes.ReplaceAll(body, []byte(PlaceholderNowMillis), strconv.AppendInt(nil, now.UnixMilli(), 10))
	out = bytes.ReplaceAll(out, []byte(PlaceholderNowRFC3339), []byte(now.UTC().Format(time.RFC3339)))
	out = bytes.ReplaceAll(out, []byte(PlaceholderNow), strconv.AppendInt(nil, now.Unix(), 10))
	id := []byte(PlaceholderID)
	for {
		i := bytes.Index(out, id)
		if i < 0 {
			return out, nil
		}
		rid, err := randomID(random)
		if err != nil {
			return nil, err
		}
		out = append(out[:i:i], append([]byte(rid), out[i+len(id):]...)...)
	}
}
