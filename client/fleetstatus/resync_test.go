package fleetstatus

import (
	"testing"
	"time"

	"github.com/sparrowfleet/sparrow/internal/membership"
)

func TestResyncDue(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name            string
		synced          time.Time
		wait            time.Duration
		before, members int
		behind          bool
		after           time.Duration
		want            bool
	}{
		{"never synced", time.Time{}, 0, 0, 1, false, 0, true},
		{"wait not passed, view steady", t0, 4 * time.Second, 5, 5, false, 3 * time.Second, false},
		{"wait passed", t0, 4 * time.Second, 5, 5, false, 4 * time.Second, true},
		{"view grew, a second passed", t0, 16 * time.Second, 2, 3, false, time.Second, true},
		{"view shrank, a second passed", t0, 16 * time.Second, 3, 2, false, 2 * time.Second, true},
		{"view grew, under a second", t0, 16 * time.Second, 2, 3, false, 500 * time.Millisecond, false},
		{"steady fleet, long wait", t0, resyncEvery, 1000, 1000, false, 29 * time.Second, false},
		{"behind a member's view, half a second passed", t0, 16 * time.Second, 3, 3, true, resyncBehind, true},
		{"behind a member's view, sooner", t0, 16 * time.Second, 3, 3, true, 200 * time.Millisecond, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := resyncDue(tc.synced, tc.wait, tc.before, tc.members, tc.behind, t0.Add(tc.after)); got != tc.want {
				t.Errorf("resyncDue = %v, want %v", got, tc.want)
			}
		})
	}
}

// An observer is behind when some member's own view holds more daemons
// than the observer lists; observers do not count as daemons.
func TestBehindFleet(t *testing.T) {
	daemon := func(n int) Member { return Member{Role: membership.RoleNodeMonitor, ViewSize: n} }
	for _, tc := range []struct {
		name string
		v    View
		want bool
	}{
		{"every view equal", View{Members: []Member{daemon(2), daemon(2)}}, false},
		{"a member knows more", View{Members: []Member{daemon(2), daemon(3)}}, true},
		{"another observer listed", View{Members: []Member{daemon(2), daemon(2), {Role: membership.RoleObserver}}}, false},
		{"no status read", View{Members: []Member{daemon(0), daemon(0)}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := behindFleet(tc.v); got != tc.want {
				t.Errorf("behindFleet = %v, want %v", got, tc.want)
			}
		})
	}
}
