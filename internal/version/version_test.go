package version

import (
	"runtime/debug"
	"strings"
	"testing"
)

func TestResolve(t *testing.T) {
	vcs := []debug.BuildSetting{
		{Key: "vcs.revision", Value: "0123456789abcdef0123456789abcdef01234567"},
		{Key: "vcs.time", Value: "2026-11-30T10:00:00Z"},
		{Key: "vcs.modified", Value: "true"},
	}
	cases := []struct {
		name                  string
		version, commit, date string
		bi                    *debug.BuildInfo
		want                  Info
	}{
		{
			name:    "release build: link-time values win",
			version: "v0.1.0", commit: "feedface", date: "2026-12-01T00:00:00Z",
			bi:   &debug.BuildInfo{GoVersion: "go1.27.3", Main: debug.Module{Version: "(devel)"}, Settings: vcs},
			want: Info{Version: "v0.1.0", Commit: "feedface", Date: "2026-12-01T00:00:00Z", GoVersion: "go1.27.3"},
		},
		{
			name: "go install @v0.1.0: the module version, no VCS data",
			bi:   &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v0.1.0"}},
			want: Info{Version: "v0.1.0", Commit: "unknown", Date: "unknown", GoVersion: "go1.26.8"},
		},
		{
			name: "go build in a dirty checkout: dev with the revision",
			bi:   &debug.BuildInfo{GoVersion: "go1.27.3", Main: debug.Module{Version: "(devel)"}, Settings: vcs},
			want: Info{Version: "dev", Commit: "0123456789abcdef0123456789abcdef01234567", Date: "2026-11-30T10:00:00Z", Modified: true, GoVersion: "go1.27.3"},
		},
		{
			name: "go build in a checkout, go 1.24+: the pseudo-version is dev",
			bi:   &debug.BuildInfo{GoVersion: "go1.27.3", Main: debug.Module{Version: "v0.0.0-20261130100000-0123456789ab+dirty"}, Settings: vcs},
			want: Info{Version: "dev", Commit: "0123456789abcdef0123456789abcdef01234567", Date: "2026-11-30T10:00:00Z", Modified: true, GoVersion: "go1.27.3"},
		},
		{
			name: "go build in a clean checkout after a tag: the pseudo-version is dev",
			bi:   &debug.BuildInfo{GoVersion: "go1.27.3", Main: debug.Module{Version: "v0.1.1-0.20261130100000-0123456789ab"}, Settings: vcs[:2]},
			want: Info{Version: "dev", Commit: "0123456789abcdef0123456789abcdef01234567", Date: "2026-11-30T10:00:00Z", GoVersion: "go1.27.3"},
		},
		{
			name: "go build in a clean checkout at a release tag: that release",
			bi:   &debug.BuildInfo{GoVersion: "go1.27.3", Main: debug.Module{Version: "v0.1.0"}, Settings: vcs[:2]},
			want: Info{Version: "v0.1.0", Commit: "0123456789abcdef0123456789abcdef01234567", Date: "2026-11-30T10:00:00Z", GoVersion: "go1.27.3"},
		},
		{
			name: "go install @commit: the proxy's pseudo-version, no VCS data",
			bi:   &debug.BuildInfo{GoVersion: "go1.27.3", Main: debug.Module{Version: "v0.1.1-0.20261130100000-0123456789ab"}},
			want: Info{Version: "v0.1.1-0.20261130100000-0123456789ab", Commit: "unknown", Date: "unknown", GoVersion: "go1.27.3"},
		},
		{
			name: "no build info at all",
			want: Info{Version: "dev", Commit: "unknown", Date: "unknown"},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := resolve(c.version, c.commit, c.date, c.bi)
			got.Platform = ""
			if c.bi == nil {
				got.GoVersion = ""
			}
			if got != c.want {
				t.Errorf("resolve = %+v\nwant       %+v", got, c.want)
			}
		})
	}
}

func TestString(t *testing.T) {
	i := Info{Version: "dev", Commit: "abc", Date: "2026-11-30T10:00:00Z", Modified: true, GoVersion: "go1.27.3", Platform: "linux/amd64"}
	want := "rolloutlint dev (commit abc-dirty, built 2026-11-30T10:00:00Z, go1.27.3, linux/amd64)"
	if got := i.String(); got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	if !strings.HasPrefix(Get().String(), "rolloutlint ") {
		t.Errorf("Get().String() = %q", Get().String())
	}
}
