package settings

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"
)

// The README and the pages under docs/ link to each other and into the
// repository. This test fails on a link to a file that does not exist or to
// an #anchor that no heading of the target page makes, as GitHub makes
// anchors (see anchor).

const repoRoot = "../../.."

// TestDocsLinksResolve checks every relative link of README.md and
// docs/*.md.
func TestDocsLinksResolve(t *testing.T) {
	pages, err := filepath.Glob(filepath.Join(repoRoot, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	pages = append([]string{filepath.Join(repoRoot, "README.md")}, pages...)
	for _, problem := range checkLinks(t, pages) {
		t.Error(problem)
	}
}

// TestLinkCheckCatchesBrokenLinks holds the checker itself to what it must
// catch: a missing file, a missing anchor in another page and in the same
// page, while it accepts good links, external ones and links in code.
func TestLinkCheckCatchesBrokenLinks(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write("docs/OTHER.md", "# Other\n\n## What a 2xx promises\n\n## Run `make run` (locally)\n\n## Twice\n\n## Twice\n\n```\n## not a heading\n```\n")
	write("main.go", "package main\n")
	readme := write("README.md", strings.Join([]string{
		"# Title",
		"## Quick start",
		"[ok](#quick-start) [ok](docs/OTHER.md) [ok](docs/OTHER.md#what-a-2xx-promises)",
		"[ok](docs/OTHER.md#run-make-run-locally) [ok](docs/OTHER.md#twice-1) [ok](main.go) [ok](docs/)",
		"[ok](https://example.com/x#y) ![ok](docs/OTHER.md \"title\")",
		"`[in code](missing.md)`",
		"```",
		"[in a block](missing.md)",
		"```",
		"[bad file](docs/MISSING.md)",
		"[bad anchor](docs/OTHER.md#no-such-heading)",
		"[bad local anchor](#no-such-section)",
		"[heading in a code block](docs/OTHER.md#not-a-heading)",
		"[third twin](docs/OTHER.md#twice-2)",
	}, "\n"))
	got := checkLinks(t, []string{readme})
	want := []string{"docs/MISSING.md", "docs/OTHER.md#no-such-heading", "#no-such-section",
		"docs/OTHER.md#not-a-heading", "docs/OTHER.md#twice-2"}
	if len(got) != len(want) {
		t.Errorf("got %d problems, want %d:\n%s", len(got), len(want), strings.Join(got, "\n"))
	}
	for _, w := range want {
		if !slices.ContainsFunc(got, func(p string) bool { return strings.Contains(p, "("+w+")") }) {
			t.Errorf("no problem reported for (%s); got:\n%s", w, strings.Join(got, "\n"))
		}
	}
}

func TestAnchorFollowsGitHub(t *testing.T) {
	for heading, want := range map[string]string{
		"Add a handler (business teams)":       "add-a-handler-business-teams",
		"Environment (hookwall CLI)":           "environment-hookwall-cli",
		"sam local (Docker)":                   "sam-local-docker",
		"What a 2xx promises":                  "what-a-2xx-promises",
		"Sending events: `hookwall-run send`":  "sending-events-hookwall-run-send",
		"The local stack's settings":           "the-local-stacks-settings",
		"Results (spin 6.5.2, 2 cores)":        "results-spin-652-2-cores",
		"[Linked](other.md) heading":           "linked-heading",
		"receiver → processor":                 "receiver--processor",
		"snake_case stays":                     "snake_case-stays",
		"The storm with the hand-off cache on": "the-storm-with-the-hand-off-cache-on",
	} {
		if got := anchor(heading); got != want {
			t.Errorf("anchor(%q) = %q, want %q", heading, got, want)
		}
	}
}

var (
	// link is an inline link or image: [text](target) or [text](target "title").
	link = regexp.MustCompile(`\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)
	// codeSpan is inline code, whose text is no link.
	codeSpan = regexp.MustCompile("`[^`]*`")
	// inlineLink is a link in a heading, of which the anchor keeps the text.
	inlineLink = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)
)

// checkLinks returns one line per broken relative link of pages, naming
// the page, the line and the target.
func checkLinks(t *testing.T, pages []string) []string {
	t.Helper()
	anchors := map[string]map[string]bool{} // by cleaned path
	anchorsOf := func(path string) map[string]bool {
		if a, ok := anchors[path]; ok {
			return a
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		a := headingAnchors(string(b))
		anchors[path] = a
		return a
	}
	var problems []string
	for _, page := range pages {
		b, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		name, _ := filepath.Rel(repoRoot, page)
		if strings.HasPrefix(name, "..") {
			name = filepath.Base(page)
		}
		for _, l := range proseLines(string(b)) {
			for _, m := range link.FindAllStringSubmatch(codeSpan.ReplaceAllString(l.text, ""), -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				path, frag, _ := strings.Cut(target, "#")
				file := filepath.Clean(page)
				if path != "" {
					file = filepath.Join(filepath.Dir(page), path)
					if _, err := os.Stat(file); err != nil {
						problems = append(problems, fmt.Sprintf("%s:%d: (%s): no such file", name, l.n, target))
						continue
					}
				}
				if frag != "" && strings.HasSuffix(file, ".md") && !anchorsOf(file)[frag] {
					problems = append(problems, fmt.Sprintf("%s:%d: (%s): no heading makes the anchor #%s", name, l.n, target, frag))
				}
			}
		}
	}
	return problems
}

// proseLine is a line of a markdown text outside fenced code blocks.
type proseLine struct {
	n    int // from 1
	text string
}

// proseLines returns the lines of a markdown text outside fenced code
// blocks, in order.
func proseLines(text string) []proseLine {
	var lines []proseLine
	fence := ""
	for i, line := range strings.Split(text, "\n") {
		trimmed := strings.TrimSpace(line)
		switch {
		case fence != "":
			if strings.HasPrefix(trimmed, fence) {
				fence = ""
			}
		case strings.HasPrefix(trimmed, "```"):
			fence = "```"
		case strings.HasPrefix(trimmed, "~~~"):
			fence = "~~~"
		default:
			lines = append(lines, proseLine{i + 1, line})
		}
	}
	return lines
}

// headingAnchors returns the anchors the ATX headings of a markdown text
// make; a repeated heading gets -1, -2, … as on GitHub.
func headingAnchors(text string) map[string]bool {
	anchors := map[string]bool{}
	seen := map[string]int{}
	for _, l := range proseLines(text) {
		line := l.text
		level := len(line) - len(strings.TrimLeft(line, "#"))
		if level == 0 || level > 6 || !strings.HasPrefix(line[level:], " ") {
			continue
		}
		a := anchor(strings.TrimSpace(strings.TrimRight(strings.TrimSpace(line[level:]), "#")))
		if n := seen[a]; n > 0 {
			anchors[fmt.Sprintf("%s-%d", a, n)] = true
		} else {
			anchors[a] = true
		}
		seen[a]++
	}
	return anchors
}

// anchor is GitHub's anchor for a heading's text: links reduced to their
// text, lower-cased, every character but letters, digits, '_', '-' and
// spaces dropped, spaces turned to '-'.
func anchor(heading string) string {
	heading = inlineLink.ReplaceAllString(heading, "$1")
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r) || r == '_' || r == '-':
			b.WriteRune(r)
		case r == ' ':
			b.WriteRune('-')
		}
	}
	return b.String()
}
