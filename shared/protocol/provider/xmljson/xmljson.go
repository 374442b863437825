package xmljson

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/hookwall/hookwall/shared/base/webhook"
)

// MaxDepth is the deepest element nesting accepted, counting the root as 1.
const MaxDepth = 32

// TextKey is the key under which non-whitespace text mixed with child
// elements is kept.
const TextKey = "#text"

// Doc is a converted document: the normalised JSON and the same data as a
// tree for field look-ups. Values in Fields are string, map[string]any or
// []any (of string or map[string]any).
type Doc struct {
	// JSON is the normalised JSON object (keys sorted, HTML not escaped).
	JSON []byte
	// Fields is the decoded tree of the root element's children.
	Fields map[string]any
}

// Get returns the string value at path (element names from the root's
// children down), or "" if the path is absent or not a single leaf.
func (d *Doc) Get(path ...string) string {
	if d == nil || len(path) == 0 {
		return ""
	}
	cur := d.Fields
	for i, name := range path {
		v, ok := cur[name]
		if !ok {
			return ""
		}
		if i == len(path)-1 {
			s, _ := v.(string)
			return s
		}
		if cur, ok = v.(map[string]any); !ok {
			return ""
		}
	}
	return ""
}

// Has reports whether the root has a child element called name.
func (d *Doc) Has(name string) bool {
	if d == nil {
		return false
	}
	_, ok := d.Fields[name]
	return ok
}

func malformed(reason string) error {
	return fmt.Errorf("xmljson: %s: %w", reason, webhook.ErrMalformed)
}

// frame is one open element during conversion.
type frame struct {
	name     xml.Name
	text     strings.Builder
	children map[string]any
}

// Convert parses data, which must be a single `xml` root element, into a
// [Doc]. Data that is not valid UTF-8, holds a character XML does not allow
// anywhere (comments and processing instructions included, see
// [CheckChars]) or a character reference to one (&#xD800;) is rejected.
// Errors wrap [webhook.ErrMalformed] and never quote the input. Convert never
// panics.
func Convert(data []byte) (*Doc, error) {
	if err := CheckChars(data); err != nil {
		return nil, err
	}
	dec := xml.NewDecoder(bytes.NewReader(data))
	dec.Strict = true
	dec.Entity = nil // only the five predefined entities and character references
	dec.CharsetReader = nil

	var (
		stack  []*frame
		root   map[string]any
		closed bool
	)
	for {
		start := dec.InputOffset()
		tok, err := dec.RawToken()
		if err == io.EOF {
			break
		}
		if err != nil {
			var se *xml.SyntaxError
			if errors.As(err, &se) {
				return nil, malformed(fmt.Sprintf("syntax error on line %d", se.Line))
			}
			return nil, malformed("not well-formed XML")
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if closed {
				return nil, malformed("content after the root element")
			}
			if len(stack) == 0 && t.Name.Local != "xml" {
				return nil, malformed("root element is not xml")
			}
			if len(stack) >= MaxDepth {
				return nil, malformed("elements nested too deeply")
			}
			for _, a := range t.Attr {
				if strings.Contains(a.Value, "\uFFFD") {
					if surrogateRef(data[start:dec.InputOffset()]) {
						return nil, malformed("character reference to a surrogate")
					}
					break // the whole tag is checked
				}
			}
			stack = append(stack, &frame{name: t.Name})
		case xml.EndElement:
			if len(stack) == 0 || stack[len(stack)-1].name != t.Name {
				return nil, malformed("mismatched end element")
			}
			top := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			v := top.value()
			if len(stack) == 0 {
				m, ok := v.(map[string]any)
				if !ok {
					m = map[string]any{}
					if s := v.(string); strings.TrimSpace(s) != "" {
						m[TextKey] = s
					}
				}
				root, closed = m, true
				continue
			}
			stack[len(stack)-1].add(top.name.Local, v)
		case xml.CharData:
			if raw := data[start:dec.InputOffset()]; bytes.Contains(t, replacement) &&
				!bytes.HasPrefix(raw, []byte("<![CDATA[")) && surrogateRef(raw) {
				return nil, malformed("character reference to a surrogate")
			}
			if len(stack) == 0 {
				if len(bytes.TrimSpace(t)) != 0 {
					return nil, malformed("text outside the root element")
				}
				continue
			}
			stack[len(stack)-1].text.Write(t)
		case xml.Directive:
			return nil, malformed("DOCTYPE and other directives are not allowed")
		case xml.ProcInst, xml.Comment:
			// Ignored. encoding/xml itself rejects a non-UTF-8 encoding
			// declaration, as CharsetReader is nil.
		}
	}
	if !closed || len(stack) != 0 {
		return nil, malformed("unexpected end of document")
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(root); err != nil {
		return nil, malformed("cannot encode JSON")
	}
	return &Doc{JSON: bytes.TrimSuffix(buf.Bytes(), []byte("\n")), Fields: root}, nil
}

// value returns f's JSON value: its text if it has no children, else the
// children (plus significant mixed text under TextKey).
func (f *frame) value() any {
	if f.children == nil {
		return f.text.String()
	}
	if s := f.text.String(); strings.TrimSpace(s) != "" {
		f.add(TextKey, s)
	}
	return f.children
}

// add records a child value, turning repeated names into arrays.
func (f *frame) add(name string, v any) {
	if f.children == nil {
		f.children = make(map[string]any)
	}
	switch old := f.children[name].(type) {
	case nil:
		f.children[name] = v
	case []any:
		f.children[name] = append(old, v)
	default:
		f.children[name] = []any{old, v}
	}
}
