package main

import (
	"context"
	"fmt"
	"runtime/debug"

	"github.com/hookwall/hookwall/shared/base/release"
	"github.com/hookwall/hookwall/shared/base/repo"
)

// versionInfo is what `hookwall version` prints: the release this code is
// (release.Version, as the functions log and stamp it) beside the build
// information the Go toolchain embeds (the module version; with a VCS
// checkout, the revision, its time and whether the tree had uncommitted
// changes).
type versionInfo struct {
	Release   string `json:"release"`
	Module    string `json:"module"`
	Version   string `json:"version"`
	Revision  string `json:"revision,omitempty"`
	Time      string `json:"time,omitempty"`
	Modified  bool   `json:"modified"`
	GoVersion string `json:"goVersion"`
}

// readVersion reads info (from debug.ReadBuildInfo; ok false when the
// binary carries none).
func readVersion(info *debug.BuildInfo, ok bool) versionInfo {
	v := versionInfo{Release: release.Version, Module: repo.Module, Version: "unknown", GoVersion: "unknown"}
	if !ok || info == nil {
		return v
	}
	if info.Main.Path != "" {
		v.Module = info.Main.Path
	}
	if info.Main.Version != "" {
		v.Version = info.Main.Version
	}
	if info.GoVersion != "" {
		v.GoVersion = info.GoVersion
	}
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			v.Revision = s.Value
		case "vcs.time":
			v.Time = s.Value
		case "vcs.modified":
			v.Modified = s.Value == "true"
		}
	}
	return v
}

// String is the one line `hookwall version` prints.
func (v versionInfo) String() string {
	s := "hookwall " + v.Release + " (build " + v.Version + ")"
	if v.Revision != "" {
		s += ", revision " + v.Revision
		if v.Modified {
			s += " (modified)"
		}
		if v.Time != "" {
			s += " of " + v.Time
		}
	}
	return s + ", " + v.GoVersion
}

func (a *app) version(_ context.Context, args []string) error {
	const cmd = "version"
	fs := a.flagSet(cmd)
	pos, err := a.parse(cmd, fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef(cmd, "unexpected argument %q", pos[0])
	}
	v := readVersion(debug.ReadBuildInfo())
	if a.json {
		return a.writeJSON(v)
	}
	fmt.Fprintln(a.stdout, v)
	return nil
}
