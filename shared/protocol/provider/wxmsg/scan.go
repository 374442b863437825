package wxmsg

import (
	"bytes"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/protocol/provider/xmljson"
)

// EncryptText returns the text of the <Encrypt> child of the root element of
// an encrypted callback's envelope (`<xml>…<Encrypt>…</Encrypt>…</xml>`), the
// value msg_signature covers, as package xmljson would read it: CDATA
// unwrapped, the predefined entities and character references decoded,
// CR LF and CR turned into LF, pieces concatenated.
//
// It runs before the signature is checked, so anyone can make it work: it
// reads body once, keeps no tree, allocates only the returned text, and
// holds at most [xmljson.MaxDepth] open element names (as offsets into body).
// It still checks the whole envelope as xmljson does and returns an error
// wrapping [webhook.ErrMalformed] for a body that is not well-formed XML, is
// not valid UTF-8 made of XML characters, has a DOCTYPE or other directive, a
// non-UTF-8 encoding declaration, an undefined entity, nesting deeper than
// [xmljson.MaxDepth], a root other than `xml`, or no, several, empty or
// non-text <Encrypt> children. An element's name is matched by its local part
// (`<p:Encrypt>` is an Encrypt), as xmljson does. Element and attribute names
// are ASCII letters, digits, '_', ':', '.' and '-' (not starting with a digit,
// '.' or '-') or non-ASCII characters. Errors give a byte offset, never the
// input.
func EncryptText(body []byte) (string, error) {
	s := scanner{b: body}
	if err := s.run(); err != nil {
		return "", fmt.Errorf("envelope: %w", err)
	}
	switch {
	case s.encCount > 1:
		return "", fmt.Errorf("envelope has more than one Encrypt: %w", webhook.ErrMalformed)
	case s.encCount == 0 || s.encNotText || s.enc.Len() == 0:
		return "", fmt.Errorf("envelope has no Encrypt: %w", webhook.ErrMalformed)
	}
	return s.enc.String(), nil
}

// span is a name's position in the body.
type span struct{ start, end int }

// scanner is the state of one EncryptText pass.
type scanner struct {
	b        []byte
	i        int                    // next byte to read
	open     [xmljson.MaxDepth]span // names of the open elements
	depth    int                    // number of open elements
	rootDone bool                   // the root element has been closed

	inEncrypt  bool            // the open depth-2 element is the first <Encrypt>
	encCount   int             // <Encrypt> children of the root seen
	encNotText bool            // the first <Encrypt> has a child element
	enc        strings.Builder // the first <Encrypt>'s text so far
}

// syntaxError is a malformed-envelope error at byte offset at.
func syntaxError(reason string, at int) error {
	return fmt.Errorf("%s at byte %d: %w", reason, at, webhook.ErrMalformed)
}

func (s *scanner) eof() error { return syntaxError("unexpected end of document", len(s.b)) }

// collecting reports whether text read now belongs to the <Encrypt> value.
func (s *scanner) collecting() bool { return s.inEncrypt && s.depth == 2 }

func (s *scanner) run() error {
	for s.i < len(s.b) {
		var err error
		if s.b[s.i] == '<' {
			err = s.markup()
		} else {
			err = s.text()
		}
		if err != nil {
			return err
		}
	}
	if !s.rootDone {
		return s.eof()
	}
	return nil
}

// char checks the character at s.i (valid UTF-8 and allowed by XML) and
// returns its length.
func (s *scanner) char() (int, error) {
	if c := s.b[s.i]; c < utf8.RuneSelf {
		if c < 0x20 && c != '\t' && c != '\n' && c != '\r' {
			return 0, syntaxError("character not allowed in XML", s.i)
		}
		return 1, nil
	}
	r, n := utf8.DecodeRune(s.b[s.i:])
	if r == utf8.RuneError && n == 1 {
		return 0, syntaxError("invalid UTF-8", s.i)
	}
	if !xmljson.IsChar(r) {
		return 0, syntaxError("character not allowed in XML", s.i)
	}
	return n, nil
}

// text reads character data up to the next '<' or the end.
func (s *scanner) text() error { return s.chars(false) }

// chars reads character data from s.i: text, up to the next '<' or the end,
// or the rest of a CDATA section (cdata), up to and including its "]]>".
// Outside the root it may hold only white space.
func (s *scanner) chars(cdata bool) error {
	collect := s.collecting()
	run := s.i // start of the literal run not yet collected
	for s.i < len(s.b) {
		switch c := s.b[s.i]; {
		case c == ']' && bytes.HasPrefix(s.b[s.i:], []byte("]]>")):
			if !cdata {
				return syntaxError("unescaped ]]> outside a CDATA section", s.i)
			}
			s.flush(collect, run, s.i)
			s.i += len("]]>")
			return nil
		case c == '<' && !cdata:
			s.flush(collect, run, s.i)
			return nil
		case c == '&' && !cdata:
			s.flush(collect, run, s.i)
			r, err := s.reference()
			if err != nil {
				return err
			}
			if s.depth == 0 {
				return syntaxError("text outside the root element", s.i)
			}
			if collect {
				s.enc.WriteRune(r)
			}
			run = s.i
		case c == '\r':
			s.flush(collect, run, s.i)
			s.crlf(collect)
			run = s.i
		case s.depth == 0 && !isSpace(c):
			return syntaxError("text outside the root element", s.i)
		case ' ' <= c && c < utf8.RuneSelf:
			s.i++
		default:
			n, err := s.char()
			if err != nil {
				return err
			}
			s.i += n
		}
	}
	if cdata {
		return s.eof()
	}
	s.flush(collect, run, s.i)
	return nil
}

// flush adds the literal bytes [from, to) to the Encrypt value if collect.
func (s *scanner) flush(collect bool, from, to int) {
	if !collect || from == to {
		return
	}
	if s.enc.Len() == 0 {
		s.enc.Grow(to - from) // the usual single CDATA section: one exact allocation
	}
	s.enc.Write(s.b[from:to])
}

// crlf reads a CR (s.b[s.i] == '\r') and a following LF as one LF, as
// encoding/xml does in text and CDATA.
func (s *scanner) crlf(collect bool) {
	s.i++
	if s.i < len(s.b) && s.b[s.i] == '\n' {
		s.i++
	}
	if collect {
		s.enc.WriteByte('\n')
	}
}

// reference reads an entity or character reference (s.b[s.i] == '&') and
// returns the character it stands for. Only the five predefined entities
// are defined.
func (s *scanner) reference() (rune, error) {
	at := s.i
	s.i++
	if s.i < len(s.b) && s.b[s.i] == '#' {
		return s.charRef(at)
	}
	end := bytes.IndexByte(s.b[s.i:min(len(s.b), s.i+len("apos;"))], ';')
	if end < 0 {
		return 0, syntaxError("invalid entity reference", at)
	}
	name := s.b[s.i : s.i+end]
	s.i += end + 1
	switch string(name) {
	case "amp":
		return '&', nil
	case "lt":
		return '<', nil
	case "gt":
		return '>', nil
	case "apos":
		return '\'', nil
	case "quot":
		return '"', nil
	}
	return 0, syntaxError("undefined entity", at)
}

// charRef reads the rest of a character reference &#…; or &#x…; begun at at,
// s.i being at the '#'. Leading zeros are allowed, as in encoding/xml.
func (s *scanner) charRef(at int) (rune, error) {
	s.i++
	base := rune(10)
	if s.i < len(s.b) && s.b[s.i] == 'x' {
		base = 16
		s.i++
	}
	var v rune
	digits := 0
	for ; s.i < len(s.b); s.i++ {
		c := s.b[s.i]
		var d rune
		switch {
		case '0' <= c && c <= '9':
			d = rune(c - '0')
		case base == 16 && 'a' <= c && c <= 'f':
			d = rune(c-'a') + 10
		case base == 16 && 'A' <= c && c <= 'F':
			d = rune(c-'A') + 10
		default:
			d = -1
		}
		if d < 0 {
			break
		}
		digits++
		if v = v*base + d; v > utf8.MaxRune {
			return 0, syntaxError("invalid character reference", at)
		}
	}
	if digits == 0 || s.i >= len(s.b) || s.b[s.i] != ';' {
		return 0, syntaxError("invalid character reference", at)
	}
	s.i++
	if !xmljson.IsChar(v) {
		return 0, syntaxError("character reference to a character not allowed in XML", at)
	}
	return v, nil
}

// markup reads what starts with '<' at s.i.
func (s *scanner) markup() error {
	if s.i+1 >= len(s.b) {
		return s.eof()
	}
	switch s.b[s.i+1] {
	case '/':
		return s.endTag()
	case '?':
		return s.procInst()
	case '!':
		rest := s.b[s.i:]
		switch {
		case bytes.HasPrefix(rest, []byte("<!--")):
			return s.comment()
		case bytes.HasPrefix(rest, []byte("<![CDATA[")):
			return s.cdata()
		}
		return syntaxError("DOCTYPE and other directives are not allowed", s.i)
	default:
		return s.startTag()
	}
}

// until checks the characters from s.i up to the next delim and moves past
// it, returning the offset where delim starts.
func (s *scanner) until(delim string) (int, error) {
	for s.i < len(s.b) {
		c := s.b[s.i]
		if c == delim[0] && bytes.HasPrefix(s.b[s.i:], []byte(delim)) {
			at := s.i
			s.i += len(delim)
			return at, nil
		}
		if ' ' <= c && c < utf8.RuneSelf {
			s.i++
			continue
		}
		n, err := s.char()
		if err != nil {
			return 0, err
		}
		s.i += n
	}
	return 0, s.eof()
}

// procInst reads a processing instruction <?target …?>. An XML declaration
// must declare version 1.0 and the UTF-8 encoding, if any.
func (s *scanner) procInst() error {
	target, at, err := s.markupName("<?", "target name")
	if err != nil {
		return err
	}
	start := s.i
	end, err := s.until("?>")
	if err != nil {
		return err
	}
	if string(s.b[target.start:target.end]) == "xml" {
		content := s.b[start:end]
		if v := piParam(content, "version"); v != nil && string(v) != "1.0" {
			return syntaxError("unsupported XML version", at)
		}
		if e := piParam(content, "encoding"); e != nil && !strings.EqualFold(string(e), "utf-8") {
			return syntaxError("encoding other than UTF-8", at)
		}
	}
	return nil
}

// piParam returns the quoted value of param= in an XML declaration's content,
// or nil, as encoding/xml reads it.
func piParam(content []byte, param string) []byte {
	for {
		k := bytes.Index(content, []byte(param+"="))
		if k < 0 || k+len(param)+1 >= len(content) {
			return nil
		}
		content = content[k+len(param)+1:]
		if q := content[0]; q == '"' || q == '\'' {
			v := content[1:]
			if j := bytes.IndexByte(v, q); j >= 0 {
				return v[:j:j]
			}
			return nil
		}
	}
}

// comment reads <!-- … -->, in which "--" may only end the comment.
func (s *scanner) comment() error {
	at := s.i
	s.i += len("<!--")
	if _, err := s.until("--"); err != nil {
		return err
	}
	if s.i >= len(s.b) || s.b[s.i] != '>' {
		return syntaxError(`"--" inside a comment`, at)
	}
	s.i++
	return nil
}

// cdata reads a CDATA section, which is text: outside the root it may hold
// only white space.
func (s *scanner) cdata() error {
	s.i += len("<![CDATA[")
	return s.chars(true)
}

// endTag reads </name> and closes the innermost open element.
func (s *scanner) endTag() error {
	name, at, err := s.markupName("</", "element name")
	if err != nil {
		return err
	}
	if err := s.expect('>', "invalid characters in end element"); err != nil {
		return err
	}
	if s.depth == 0 || string(s.b[name.start:name.end]) != string(s.b[s.open[s.depth-1].start:s.open[s.depth-1].end]) {
		return syntaxError("mismatched end element", at)
	}
	s.close()
	return nil
}

// close pops the innermost open element.
func (s *scanner) close() {
	s.depth--
	switch s.depth {
	case 1:
		s.inEncrypt = false
	case 0:
		s.rootDone = true
	}
}

// startTag reads <name attr="value" …> or <name … />.
func (s *scanner) startTag() error {
	name, at, err := s.markupName("<", "element name")
	if err != nil {
		return err
	}
	local := localName(s.b[name.start:name.end])
	switch {
	case s.rootDone:
		return syntaxError("content after the root element", at)
	case s.depth == 0 && string(local) != "xml":
		return syntaxError("root element is not xml", at)
	case s.depth >= len(s.open):
		return syntaxError("elements nested too deeply", at)
	}
	for {
		s.space()
		if s.i >= len(s.b) {
			return s.eof()
		}
		if c := s.b[s.i]; c == '>' || c == '/' {
			break
		}
		if err := s.attribute(); err != nil {
			return err
		}
	}
	empty := s.b[s.i] == '/'
	if empty {
		if s.i+1 >= len(s.b) {
			return s.eof()
		}
		if s.b[s.i+1] != '>' {
			return syntaxError("expected /> in element", s.i)
		}
		s.i++
	}
	s.i++ // '>'

	switch {
	case s.depth == 1 && string(local) == "Encrypt":
		s.encCount++
		s.inEncrypt = s.encCount == 1
	case s.depth >= 2 && s.inEncrypt:
		s.encNotText = true
	}
	s.open[s.depth] = name
	s.depth++
	if empty {
		s.close()
	}
	return nil
}

// attribute reads name="value" (or 'value'): strict XML wants the = and the
// quotes. The value may not hold '<' and its references must be valid.
func (s *scanner) attribute() error {
	at := s.i
	if _, err := s.name(); err != nil {
		return syntaxError("expected attribute name in element", at)
	}
	if err := s.expect('=', "attribute name without = in element"); err != nil {
		return err
	}
	s.space()
	if s.i >= len(s.b) {
		return s.eof()
	}
	q := s.b[s.i]
	if q != '"' && q != '\'' {
		return syntaxError("unquoted or missing attribute value in element", s.i)
	}
	s.i++
	for s.i < len(s.b) {
		switch c := s.b[s.i]; c {
		case q:
			s.i++
			return nil
		case '<':
			return syntaxError("unescaped < inside quoted string", s.i)
		case '&':
			if _, err := s.reference(); err != nil {
				return err
			}
		default:
			n, err := s.char()
			if err != nil {
				return err
			}
			s.i += n
		}
	}
	return s.eof()
}

// name reads an element, attribute or target name and returns its span. It
// must not start with a digit, '.' or '-', and may hold at most one ':'.
func (s *scanner) name() (span, error) {
	start, colons := s.i, 0
	for s.i < len(s.b) {
		c := s.b[s.i]
		if c >= utf8.RuneSelf {
			n, err := s.char()
			if err != nil {
				return span{}, err
			}
			s.i += n
			continue
		}
		if !isNameByte(c) {
			break
		}
		if c == ':' {
			colons++
		}
		s.i++
	}
	if s.i == start {
		if s.i >= len(s.b) {
			return span{}, s.eof()
		}
		return span{}, syntaxError("expected a name", s.i)
	}
	if c := s.b[start]; '0' <= c && c <= '9' || c == '.' || c == '-' || colons > 1 {
		return span{}, syntaxError("invalid name", start)
	}
	return span{start, s.i}, nil
}

// localName returns the part of a name after its prefix, as encoding/xml
// splits it: "p:a" gives "a"; ":a", "p:" and "a" are their own local names.
func localName(name []byte) []byte {
	if i := bytes.IndexByte(name, ':'); i > 0 && i < len(name)-1 {
		return name[i+1:]
	}
	return name
}

// space skips XML white space.
// markupName reads the name after open, the start of a markup at s.i ("<",
// "</", "<?"), and returns it with the markup's offset; a missing name is
// the syntax error "expected <what> after <open>".
func (s *scanner) markupName(open, what string) (span, int, error) {
	at := s.i
	s.i += len(open)
	name, err := s.name()
	if err != nil {
		return span{}, at, syntaxError("expected "+what+" after "+open, at)
	}
	return name, at, nil
}

// expect skips white space and reads the byte c; another byte is the syntax
// error what.
func (s *scanner) expect(c byte, what string) error {
	s.space()
	if s.i >= len(s.b) {
		return s.eof()
	}
	if s.b[s.i] != c {
		return syntaxError(what, s.i)
	}
	s.i++
	return nil
}

func (s *scanner) space() {
	for s.i < len(s.b) && isSpace(s.b[s.i]) {
		s.i++
	}
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

func isNameByte(c byte) bool {
	return 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' ||
		c == '_' || c == ':' || c == '.' || c == '-'
}
