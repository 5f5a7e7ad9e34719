// Package version says which build of mdpress is running, from what the
// Go toolchain stamped into the binary: the module version when it was
// installed from a tag, else the Git commit it was built from. An operator
// reading a bug report, a log or a scrape needs to know which code ran.
package version

import (
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
)

// Info describes the running build.
type Info struct {
	// Version is the module version ("v1.2.0"), or "devel" for a build
	// from a checkout.
	Version string `json:"version"`
	// Revision is the Git commit the binary was built from, or "unknown"
	// when the build had no VCS information (a source tree without .git,
	// as in a container build context that leaves it out).
	Revision string `json:"revision"`
	// Modified says the working tree had uncommitted changes.
	Modified bool `json:"modified"`
	// Time is the commit's time, RFC 3339, or empty.
	Time     string `json:"time,omitempty"`
	Go       string `json:"go"`
	Platform string `json:"platform"`
}

// Set by the Makefile's -ldflags -X: the output of git describe --dirty
// (a commit hash, "-dirty" when the tree had changes) and the commit's
// time. They win over Go's own VCS stamp, which the build may not have.
var revision, revisionTime string

var read = sync.OnceValue(func() Info {
	bi, ok := debug.ReadBuildInfo()
	return withLinked(fromBuildInfo(bi, ok), revision, revisionTime)
})

func withLinked(info Info, rev, at string) Info {
	if rev == "" {
		return info
	}
	info.Revision, info.Modified = strings.CutSuffix(rev, "-dirty")
	info.Time = at
	return info
}

// Get returns the running build's description.
func Get() Info { return read() }

func fromBuildInfo(bi *debug.BuildInfo, ok bool) Info {
	info := Info{Version: "devel", Revision: "unknown", Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if !ok || bi == nil {
		return info
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		info.Version = v
	}
	if bi.GoVersion != "" {
		info.Go = bi.GoVersion
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			info.Revision = s.Value
		case "vcs.modified":
			info.Modified = s.Value == "true"
		case "vcs.time":
			info.Time = s.Value
		}
	}
	return info
}

// Short is the revision cut to 12 characters, with "+dirty" when the tree
// was modified: what a log line or a label carries.
func (i Info) Short() string {
	r := i.Revision
	if len(r) > 12 {
		r = r[:12]
	}
	if i.Modified {
		r += "+dirty"
	}
	return r
}

// String is the one line `mdpress version` prints.
func (i Info) String() string {
	var b strings.Builder
	b.WriteString("mdpress ")
	b.WriteString(i.Version)
	b.WriteString(" (commit ")
	b.WriteString(i.Short())
	if i.Time != "" {
		b.WriteString(", ")
		b.WriteString(i.Time)
	}
	b.WriteString(") ")
	b.WriteString(i.Go)
	b.WriteString(" ")
	b.WriteString(i.Platform)
	return b.String()
}
