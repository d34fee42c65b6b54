package buildinfo

import (
	"runtime/debug"
	"strings"
	"testing"
)

func TestFromBuildInfo(t *testing.T) {
	vcs := func(rev, modified string) []debug.BuildSetting {
		return []debug.BuildSetting{
			{Key: "-compiler", Value: "gc"},
			{Key: "vcs", Value: "git"},
			{Key: "vcs.revision", Value: rev},
			{Key: "vcs.time", Value: "2026-01-02T03:04:05Z"},
			{Key: "vcs.modified", Value: modified},
		}
	}
	bi := func(version string, settings []debug.BuildSetting) *debug.BuildInfo {
		return &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/sparrowfleet/sparrow", Version: version}, Settings: settings}
	}
	const rev = "0123456789abcdef0123456789abcdef01234567"
	for _, tc := range []struct {
		name     string
		bi       *debug.BuildInfo
		override string
		want     Info
		short    string
	}{
		{"tagged", bi("v1.2.3", vcs(rev, "false")), "",
			Info{Module: "github.com/sparrowfleet/sparrow", Version: "v1.2.3", Revision: rev, Time: "2026-01-02T03:04:05Z", Go: "go1.26.8"}, "v1.2.3"},
		{"pseudo-version of a modified tree", bi("v0.0.0-20260102030405-0123456789ab+dirty", vcs(rev, "true")), "",
			Info{Module: "github.com/sparrowfleet/sparrow", Version: "v0.0.0-20260102030405-0123456789ab+dirty", Revision: rev, Time: "2026-01-02T03:04:05Z", Modified: true, Go: "go1.26.8"},
			"v0.0.0-20260102030405-0123456789ab+dirty"},
		{"devel with VCS", bi("(devel)", vcs(rev, "true")), "",
			Info{Module: "github.com/sparrowfleet/sparrow", Version: "(devel)", Revision: rev, Time: "2026-01-02T03:04:05Z", Modified: true, Go: "go1.26.8"},
			"devel+0123456789ab-dirty"},
		{"no VCS information", bi("(devel)", nil), "",
			Info{Module: "github.com/sparrowfleet/sparrow", Version: "(devel)", Go: "go1.26.8"}, "devel"},
		{"link-time override", bi("(devel)", nil), "v2.0.0",
			Info{Module: "github.com/sparrowfleet/sparrow", Version: "v2.0.0", Go: "go1.26.8"}, "v2.0.0"},
		{"no build information", nil, "", Info{Version: "(devel)"}, "devel"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := FromBuildInfo(tc.bi, tc.override)
			if got != tc.want {
				t.Fatalf("FromBuildInfo = %+v, want %+v", got, tc.want)
			}
			if s := got.Short(); s != tc.short {
				t.Fatalf("Short() = %q, want %q", s, tc.short)
			}
			s := got.String()
			if !strings.HasPrefix(s, "sparrow "+tc.want.Version+"\n") {
				t.Fatalf("String() = %q, want it to start with the version", s)
			}
			if tc.want.Revision != "" && !strings.Contains(s, tc.want.Revision) {
				t.Fatalf("String() = %q lacks the revision", s)
			}
			if tc.want.Revision == "" && !strings.Contains(s, "revision unknown") {
				t.Fatalf("String() = %q does not say the revision is unknown", s)
			}
		})
	}
}

// A test binary carries build information too; Read returns it, with a
// version that is never empty.
func TestReadRunningBinary(t *testing.T) {
	got := Read()
	if got.Version == "" || got.Short() == "" || got.Go == "" {
		t.Fatalf("Read() = %+v; want a version and a toolchain", got)
	}
}
