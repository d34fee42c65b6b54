// Package buildinfo says which build of sparrowfleet is running: the module
// version and VCS revision Go records in the binary (runtime/debug), which
// `sparrow version` prints and every member advertises to the fleet.
package buildinfo

import (
	"fmt"
	"runtime/debug"
	"strings"
	"sync"
)

// version, when set at link time, overrides the module version Go records:
// a binary built from a source tree without VCS metadata (a container
// build that does not copy .git) records none. Set it with
//
//	go build -ldflags "-X github.com/sparrowfleet/sparrow/internal/buildinfo.version=v1.2.3" ./cmd/sparrow
var version string

// Info describes a build.
type Info struct {
	// Module is the main module's path.
	Module string `json:"module"`
	// Version is the module version: a tag such as v1.2.3, a pseudo-version
	// naming the commit, or "(devel)" for a build from a work tree Go could
	// not version.
	Version string `json:"version"`
	// Revision is the VCS commit, Time its commit time and Modified whether
	// the work tree had uncommitted changes; all empty when the build
	// recorded no VCS metadata (go build -buildvcs=false, or no .git).
	Revision string `json:"revision,omitempty"`
	Time     string `json:"time,omitempty"`
	Modified bool   `json:"modified,omitempty"`
	// Go is the toolchain that built the binary.
	Go string `json:"go"`
}

// Read returns the running binary's build.
var Read = sync.OnceValue(func() Info {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		bi = nil
	}
	return FromBuildInfo(bi, version)
})

// FromBuildInfo extracts Info from Go's build information (nil when the
// binary carries none); a non-empty override replaces the module version.
func FromBuildInfo(bi *debug.BuildInfo, override string) Info {
	info := Info{Version: "(devel)"}
	if bi != nil {
		info.Module, info.Go = bi.Main.Path, bi.GoVersion
		if bi.Main.Version != "" {
			info.Version = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				info.Revision = s.Value
			case "vcs.time":
				info.Time = s.Value
			case "vcs.modified":
				info.Modified = s.Value == "true"
			}
		}
	}
	if override != "" {
		info.Version = override
	}
	return info
}

// Short is the build in one word, as members advertise it: the version,
// and for an untagged build the first 12 characters of its revision and
// "-dirty" if its tree was modified, so two different development builds
// are told apart. A pseudo-version already names its commit.
func (i Info) Short() string {
	v := i.Version
	if v != "(devel)" {
		return v
	}
	v = "devel"
	if i.Revision != "" {
		v += "+" + i.Revision[:min(12, len(i.Revision))]
	}
	if i.Modified {
		v += "-dirty"
	}
	return v
}

// String is the build for people: what `sparrow version` prints.
func (i Info) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "sparrow %s", i.Version)
	var details []string
	if i.Revision != "" {
		r := "revision " + i.Revision
		if i.Modified {
			r += " (modified)"
		}
		details = append(details, r)
	} else {
		details = append(details, "revision unknown (built without VCS information)")
	}
	if i.Time != "" {
		details = append(details, "committed "+i.Time)
	}
	if i.Module != "" {
		details = append(details, "module "+i.Module)
	}
	if i.Go != "" {
		details = append(details, "built with "+i.Go)
	}
	fmt.Fprintf(&b, "\n  %s", strings.Join(details, "\n  "))
	return b.String()
}
