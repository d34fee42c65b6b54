package httpapi

import (
	"testing"

	"github.com/sparrowfleet/sparrow/internal/membership"
)

// fakeView is a gossip view under the test's control.
type fakeView struct {
	name, addr string
	members    []membership.Member
}

func (v *fakeView) Name() string { return v.name }
func (v *fakeView) Addr() string { return v.addr }
func (v *fakeView) Members(role membership.Role) []membership.Member {
	var out []membership.Member
	for _, m := range v.members {
		if role == "" || m.Meta.Role == role {
			out = append(out, m)
		}
	}
	return out
}

func member(name string, role membership.Role) membership.Member {
	return membership.Member{Name: name, Meta: membership.Meta{Role: role}}
}

// TestJoined covers the joined rule: a member with seeds other than
// itself needs another daemon in view; a seed alone is joined; observers
// do not count.
func TestJoined(t *testing.T) {
	self := member("me", membership.RoleNodeMonitor)
	for _, tc := range []struct {
		name    string
		seeds   []string
		members []membership.Member
		ready   bool
	}{
		{"first member, no seeds", nil, []membership.Member{self}, true},
		{"seeded only with itself", []string{"10.0.0.1:7946"}, []membership.Member{self}, true},
		{"seeded, alone", []string{"10.0.0.2:7946"}, []membership.Member{self}, false},
		{"seeded, only an observer", []string{"10.0.0.2:7946"}, []membership.Member{self, member("status-x", membership.RoleObserver)}, false},
		{"seeded, with a scheduler", []string{"10.0.0.1:7946", "10.0.0.2:7946"}, []membership.Member{self, member("s", membership.RoleScheduler)}, true},
	} {
		v := &fakeView{name: "me", addr: "10.0.0.1:7946", members: tc.members}
		reason := Joined(v, tc.seeds)()
		if (reason == "") != tc.ready {
			t.Errorf("%s: reason %q, want ready=%v", tc.name, reason, tc.ready)
		}
	}
}

// TestAllGivesTheFirstReason checks that checks run in order and the
// first failure names the reason.
func TestAllGivesTheFirstReason(t *testing.T) {
	v := &fakeView{name: "s", members: []membership.Member{member("s", membership.RoleScheduler)}}
	serving := true
	c := All(Serving(func() bool { return serving }), HasMember(v, membership.RoleNodeMonitor, "no live node monitor"))
	if r := c(); r != "no live node monitor" {
		t.Errorf("reason %q", r)
	}
	v.members = append(v.members, member("nm", membership.RoleNodeMonitor))
	if r := c(); r != "" {
		t.Errorf("reason %q, want ready", r)
	}
	serving = false
	if r := c(); r != "Thrift services stopped" {
		t.Errorf("reason %q", r)
	}
}
