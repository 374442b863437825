package localrun

import (
	"bytes"
	"encoding/json"
	"os"
	"sync"
)

// appendJSONLines appends values, one JSON line each (HTML characters as
// they are), to the file at path (created if absent) in one write, under mu:
// the writers of one file share it.
func appendJSONLines[T any](mu *sync.Mutex, path string, values ...T) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	for _, v := range values {
		if err := enc.Encode(v); err != nil {
			return err
		}
	}
	mu.Lock()
	defer mu.Unlock()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(b.Bytes())
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// rawJSON returns b when it is valid JSON, else b as a JSON string, so that
// a line always holds what was received.
func rawJSON(b []byte) json.RawMessage {
	if json.Valid(b) {
		return b
	}
	s, _ := json.Marshal(string(b)) // a string always encodes
	return s
}
