package version

import (
	"runtime/debug"
	"strings"
	"testing"
)

func TestFromBuildInfo(t *testing.T) {
	for _, tc := range []struct {
		name string
		bi   *debug.BuildInfo
		want string
	}{
		{"no build info", nil, "mdpress devel (commit unknown) "},
		{"checkout", &debug.BuildInfo{GoVersion: "go1.99.0", Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "0123456789abcdef0123"}, {Key: "vcs.modified", Value: "true"}, {Key: "vcs.time", Value: "2026-11-24T18:00:00Z"},
		}}, "mdpress devel (commit 0123456789ab+dirty, 2026-11-24T18:00:00Z) go1.99.0 "},
		{"tagged install", &debug.BuildInfo{GoVersion: "go1.99.0", Main: debug.Module{Version: "v1.2.0"}}, "mdpress v1.2.0 (commit unknown) go1.99.0 "},
	} {
		got := fromBuildInfo(tc.bi, tc.bi != nil).String()
		if !strings.HasPrefix(got, tc.want) {
			t.Errorf("%s: %q, want prefix %q", tc.name, got, tc.want)
		}
	}
}

// TestLinkedRevision: the Makefile's stamp wins over Go's, dirty or not.
func TestLinkedRevision(t *testing.T) {
	base := fromBuildInfo(nil, false)
	got := withLinked(base, "0123456789abcdef0123-dirty", "2026-11-24T18:00:00+00:00")
	if got.Revision != "0123456789abcdef0123" || !got.Modified || got.Short() != "0123456789ab+dirty" || got.Time == "" {
		t.Errorf("dirty: %+v", got)
	}
	if got := withLinked(base, "abc", ""); got.Revision != "abc" || got.Modified {
		t.Errorf("clean: %+v", got)
	}
	if got := withLinked(base, "", ""); got != base {
		t.Errorf("none: %+v", got)
	}
}
