package membership

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/sparrowfleet/sparrow/internal/buildinfo"
)

// Every member advertises its build, and keeps advertising it when a
// daemon rewrites its metadata from its own copy, which has none.
func TestVersionIsAdvertisedAndSurvivesSetMeta(t *testing.T) {
	a, b := startPair(t, "127.0.6.31", "127.0.6.32", RoleScheduler)
	if err := b.SetMeta(Meta{Role: RoleNodeMonitor, Slots: 2, Apps: []string{"app"}}); err != nil {
		t.Fatal(err)
	}
	want := buildinfo.Read().Short()
	deadline := time.Now().Add(10 * time.Second)
	for {
		var seen Meta
		for _, m := range a.Members(RoleNodeMonitor) {
			seen = m.Meta
		}
		if seen.Version == want && len(seen.Apps) == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a sees b as %+v; want version %q and its app", seen, want)
		}
		time.Sleep(10 * time.Millisecond) // polling interval of a condition wait
	}
	for _, m := range b.Members(RoleScheduler) {
		if m.Meta.Version != want {
			t.Fatalf("b sees a's version as %q, want %q", m.Meta.Version, want)
		}
	}
}

// The version is an additive field: metadata from a member built before
// it decodes with no version, and a new member's metadata decodes in an
// old member, which ignores what it does not know.
func TestVersionIsAdditive(t *testing.T) {
	type oldMeta struct {
		Role    Role   `json:"r"`
		Service string `json:"s,omitempty"`
		Slots   int    `json:"n,omitempty"`
	}
	for _, tc := range []struct {
		name string
		wire string
		want Meta
	}{
		{"old member", `{"r":"nodemonitor","s":"10.0.0.1:20502","n":4}`, Meta{Role: RoleNodeMonitor, Service: "10.0.0.1:20502", Slots: 4}},
		{"new member", `{"r":"nodemonitor","s":"10.0.0.1:20502","n":4,"v":"v1.2.3"}`, Meta{Role: RoleNodeMonitor, Service: "10.0.0.1:20502", Slots: 4, Version: "v1.2.3"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := DecodeMeta([]byte(tc.wire))
			if err != nil {
				t.Fatal(err)
			}
			if got.Role != tc.want.Role || got.Service != tc.want.Service || got.Slots != tc.want.Slots || got.Version != tc.want.Version {
				t.Fatalf("DecodeMeta = %+v, want %+v", got, tc.want)
			}
			var old oldMeta
			if err := json.Unmarshal([]byte(tc.wire), &old); err != nil {
				t.Fatalf("an old member cannot decode %s: %v", tc.wire, err)
			}
			if old.Role != tc.want.Role || old.Slots != tc.want.Slots {
				t.Fatalf("an old member decodes %s as %+v", tc.wire, old)
			}
		})
	}
}
