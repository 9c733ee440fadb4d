// Package version tells which rolloutlint this binary is: the release
// version, the commit it was built from and when.
//
// A release build sets the three variables with the linker
// (-X github.com/rolloutlint/rolloutlint/internal/version.Version=v0.1.0, and
// Commit, Date; see the Makefile and scripts/release.sh). Without them, the
// values come from the build information the go command embeds: the module
// version for `go install github.com/rolloutlint/rolloutlint/cmd/rolloutlint@v0.1.0`,
// and the VCS revision and commit time for a `go build` in a git checkout,
// which reports the version "dev".
package version

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
)

// Set at link time by release builds; empty otherwise.
var (
	// Version is the semantic version with a leading "v", e.g. v0.1.0.
	Version = ""
	// Commit is the full git commit hash the binary was built from.
	Commit = ""
	// Date is the commit or build time, RFC 3339 in UTC.
	Date = ""
)

// Dev is the version of a build that is not a release.
const Dev = "dev"

// Info describes one build of rolloutlint.
type Info struct {
	Version   string `json:"version"`
	Commit    string `json:"commit"`
	Date      string `json:"date"`
	Modified  bool   `json:"modified,omitempty"`
	GoVersion string `json:"goVersion"`
	Platform  string `json:"platform"`
}

// Get returns the version information of the running binary.
func Get() Info {
	bi, _ := debug.ReadBuildInfo()
	return resolve(Version, Commit, Date, bi)
}

// resolve merges the link-time values with the embedded build information;
// a link-time value wins over the build information.
func resolve(version, commit, date string, bi *debug.BuildInfo) Info {
	info := Info{Version: version, Commit: commit, Date: date, GoVersion: runtime.Version(),
		Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if bi != nil {
		if info.Version == "" && bi.Main.Version != "" && bi.Main.Version != "(devel)" && !checkoutVersion(bi) {
			// go install …@vX.Y.Z: the module proxy's version. The proxy's zip has
			// no VCS metadata, so commit and date stay unknown.
			info.Version = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				if info.Commit == "" {
					info.Commit = s.Value
				}
			case "vcs.time":
				if info.Date == "" {
					info.Date = s.Value
				}
			case "vcs.modified":
				info.Modified = s.Value == "true" && commit == ""
			}
		}
		if bi.GoVersion != "" {
			info.GoVersion = bi.GoVersion
		}
	}
	if info.Version == "" {
		info.Version = Dev
	}
	if info.Commit == "" {
		info.Commit = "unknown"
	}
	if info.Date == "" {
		info.Date = "unknown"
	}
	return info
}

// checkoutVersion reports whether the main module's version is one the go
// command (1.24 and later) derived from a git checkout that is not a clean
// release tag: a pseudo-version or a +dirty one. Such a build reports "dev"
// with its commit, as make build's does; a `go install …@v` build has no VCS
// settings, so its version stays.
func checkoutVersion(bi *debug.BuildInfo) bool {
	for _, s := range bi.Settings {
		if s.Key == "vcs.revision" {
			v := bi.Main.Version
			return strings.Contains(v, "+") || isPseudo(v)
		}
	}
	return false
}

// isPseudo reports whether v ends as a Go pseudo-version does: a 14-digit
// UTC time stamp, a dash and a 12-digit commit prefix
// (v0.0.0-20261204231510-a04be9f05fbb).
func isPseudo(v string) bool {
	const n = 14 + 1 + 12
	if len(v) < n+1 || (v[len(v)-n-1] != '-' && v[len(v)-n-1] != '.') {
		return false
	}
	for i, c := range v[len(v)-n:] {
		switch {
		case i < 14 && c >= '0' && c <= '9':
		case i == 14 && c == '-':
		case i > 14 && (c >= '0' && c <= '9' || c >= 'a' && c <= 'f'):
		default:
			return false
		}
	}
	return true
}

// String is the one-line form `rolloutlint version` prints.
func (i Info) String() string {
	commit := i.Commit
	if i.Modified {
		commit += "-dirty"
	}
	return fmt.Sprintf("rolloutlint %s (commit %s, built %s, %s, %s)", i.Version, commit, i.Date, i.GoVersion, i.Platform)
}

// Short is the version alone, for SARIF's tool.driver.version and the
// companion's version check (--version prints String).
func (i Info) Short() string { return i.Version }
