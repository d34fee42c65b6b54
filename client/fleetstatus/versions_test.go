package fleetstatus

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/sparrowfleet/sparrow/internal/membership"
)

// Status groups members by the build they advertise and flags a fleet
// running more than one, as during a rolling upgrade; observers do not
// count, and a member too old to advertise a version is its own group.
func TestStatusVersions(t *testing.T) {
	nm := func(name, version string) Member {
		return Member{Name: name, Role: membership.RoleNodeMonitor, Version: version, Health: "alive"}
	}
	for _, tc := range []struct {
		name    string
		members []Member
		want    []Version
		mixed   bool
	}{
		{"one build", []Member{
			{Name: "s", Role: membership.RoleScheduler, Version: "v1.1.0"}, nm("a", "v1.1.0"), nm("b", "v1.1.0"),
		}, []Version{{"v1.1.0", []string{"s", "a", "b"}}}, false},
		{"mid-roll", []Member{
			{Name: "s", Role: membership.RoleScheduler, Version: "v1.1.0"}, nm("a", "v1.2.0"), nm("b", "v1.1.0"),
		}, []Version{{"v1.1.0", []string{"s", "b"}}, {"v1.2.0", []string{"a"}}}, true},
		{"old member without a version", []Member{nm("a", "v1.2.0"), nm("b", "")},
			[]Version{{"", []string{"b"}}, {"v1.2.0", []string{"a"}}}, true},
		{"observers do not count", []Member{
			nm("a", "v1.2.0"), {Name: "o", Role: membership.RoleObserver, Version: "v1.0.0"},
		}, []Version{{"v1.2.0", []string{"a"}}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := View{Members: tc.members}
			v.summarize()
			if fmt.Sprint(v.Versions) != fmt.Sprint(tc.want) || v.MixedVersions != tc.mixed {
				t.Fatalf("versions %v mixed %v, want %v mixed %v", v.Versions, v.MixedVersions, tc.want, tc.mixed)
			}
			var out bytes.Buffer
			Render(&out, v)
			text := out.String()
			if got := strings.Contains(text, "MIXED VERSIONS"); got != tc.mixed {
				t.Fatalf("table flags mixed versions: %v, want %v\n%s", got, tc.mixed, text)
			}
			for _, b := range tc.want {
				if !strings.Contains(text, versionName(b.Version)) {
					t.Fatalf("table lacks version %q\n%s", versionName(b.Version), text)
				}
			}
		})
	}
}
