package skew

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strings"
)

// Release is one line of releases.tsv: a version and the commit that is it.
type Release struct {
	Version, Commit, Date, Note string
}

// Released reports whether the release has a commit (the release being
// prepared says "unreleased").
func (r Release) Released() bool { return r.Commit != "" && r.Commit != "unreleased" }

// ReadReleases reads releases.tsv at path: one release a line (version,
// commit, date, note, separated by tabs), oldest first; lines starting with
// # and blank lines are skipped.
func ReadReleases(path string) ([]Release, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("skew: releases: %w", err)
	}
	return ParseReleases(b)
}

// ParseReleases parses the contents of releases.tsv (see [ReadReleases]).
func ParseReleases(b []byte) ([]Release, error) {
	var out []Release
	sc := bufio.NewScanner(bytes.NewReader(b))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Split(line, "\t")
		if len(f) < 3 || f[0] == "" || f[1] == "" {
			return nil, fmt.Errorf("skew: releases line %d: want version, commit, date and a note separated by tabs, got %q", n, line)
		}
		r := Release{Version: f[0], Commit: f[1], Date: f[2]}
		if len(f) > 3 {
			r.Note = f[3]
		}
		out = append(out, r)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("skew: releases: %w", err)
	}
	return out, nil
}

// Previous returns the newest released release whose version is not
// current: the release the current code upgrades from.
func Previous(rels []Release, current string) (Release, error) {
	for i := len(rels) - 1; i >= 0; i-- {
		if rels[i].Released() && rels[i].Version != current {
			return rels[i], nil
		}
	}
	return Release{}, fmt.Errorf("skew: releases.tsv lists no released version before %s", current)
}
