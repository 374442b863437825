// Package release names the Hookwall release this code is. The version is
// stamped on what the functions write and log, so that two releases running at
// once (a gradual deployment, a rollback) can be told apart in the data.
package release

// Version is this code's release, a semantic version without the leading "v".
// It changes only when a release is cut (CHANGELOG.md lists each release and
// its commit; the commit is tagged v<Version>).
const Version = "0.2.0"
