package webhook

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestTruncate(t *testing.T) {
	for _, tt := range []struct {
		s    string
		max  int
		want string
	}{
		{"", 0, ""},
		{"", 5, ""},
		{"abc", 3, "abc"},
		{"abc", 2, "ab"},
		{"abc", 0, ""},
		{"abc", -1, ""},
		{"héllo", 1, "h"},
		{"héllo", 2, "h"}, // é is 2 bytes: cut before it
		{"héllo", 3, "hé"},
		{"中文", 1, ""},
		{"中文", 2, ""},
		{"中文", 3, "中"},
		{"中文", 5, "中"},
		{"中文", 6, "中文"},
		{"a🙂", 1, "a"},
		{"a🙂", 2, "a"},
		{"a🙂", 3, "a"},
		{"a🙂", 4, "a"},
		{"a🙂", 5, "a🙂"},
		{"a🙂b", 5, "a🙂"},
		{"\uFFFD\uFFFD", 4, "\uFFFD"}, // a valid U+FFFD is not split
		// Invalid UTF-8: each invalid byte is its own rune.
		{"\xff\xfe\xfd", 2, "\xff\xfe"},
		{"a\x80\x80\x80b", 3, "a\x80\x80"},
		{"ab\xe4\xb8", 3, "ab\xe4"},              // an incomplete sequence is invalid: kept byte by byte
		{"\xe4\xe4\xb8\xad", 2, "\xe4"},          // but 中 after a stray lead byte is whole
		{"\xed\xa0\x80x", 2, "\xed\xa0"},         // an encoded surrogate is invalid
		{"\xf4\x90\x80\x80x", 3, "\xf4\x90\x80"}, // beyond U+10FFFF is invalid
		{"é\x80", 2, "é"},
		{"é\x80", 3, "é\x80"},
	} {
		if got := Truncate(tt.s, tt.max); got != tt.want {
			t.Errorf("Truncate(%q, %d) = %q, want %q", tt.s, tt.max, got, tt.want)
		}
	}
	long := strings.Repeat("错", 400) // 1200 bytes
	if got := Truncate(long, 1024); len(got) != 1023 || !utf8.ValidString(got) {
		t.Errorf("Truncate(1200 bytes of 3-byte runes, 1024) = %d bytes, valid %v; want 1023, valid", len(got), utf8.ValidString(got))
	}
	if n := testing.AllocsPerRun(10, func() { _ = Truncate(long, 1024) }); n != 0 {
		t.Errorf("Truncate allocates %v times, want 0", n)
	}
}

// FuzzTruncate checks Truncate against its definition: the longest prefix of
// at most max bytes that ends where a range loop over s starts a rune.
func FuzzTruncate(f *testing.F) {
	f.Add("héllo 中文 🙂", 7)
	f.Add("a\x80\xe4\xb8\xad\xff", 3)
	f.Fuzz(func(t *testing.T, s string, max int) {
		got := Truncate(s, max)
		want := ""
		if len(s) <= max {
			want = s
		} else {
			for i := range s {
				if i > max {
					break
				}
				want = s[:i]
			}
		}
		if got != want {
			t.Fatalf("Truncate(%q, %d) = %q, want %q", s, max, got, want)
		}
		if utf8.ValidString(s) && !utf8.ValidString(got) {
			t.Fatalf("Truncate(%q, %d) = %q: not valid UTF-8", s, max, got)
		}
	})
}

func TestCleanText(t *testing.T) {
	cases := []struct{ in, want string }{
		{"plain text", "plain text"},
		{"tab\tnewline\ncr\r", "tab\tnewline\ncr\r"},
		{"bad \xff byte", "bad \uFFFD byte"},
		{"nul \x00 bell \x07 del \x7f", "nul \uFFFD bell \uFFFD del \uFFFD"},
		{"non \uFFFE \uFFFF", "non \uFFFD \uFFFD"},
		{"消息", "消息"},
	}
	for _, c := range cases {
		if got := CleanText(c.in, 100); got != c.want {
			t.Errorf("CleanText(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	if got := CleanText("ab消", 4); got != "ab" {
		t.Errorf("CleanText cut = %q, want %q", got, "ab")
	}
}
