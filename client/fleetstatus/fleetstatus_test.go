package fleetstatus

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"github.com/sparrowfleet/sparrow/internal/httpapi"
	"github.com/sparrowfleet/sparrow/internal/membership"
)

// TestSummarize sums apps and slots over every node monitor in gossip,
// and live counts and users over the reporting ones alone.
func TestSummarize(t *testing.T) {
	nm := func(name string, slots int, apps []string, st *httpapi.NodeMonitorStatus) Member {
		return Member{Name: name, Role: membership.RoleNodeMonitor, Slots: slots, Apps: apps, NodeMonitor: st}
	}
	for _, tc := range []struct {
		name    string
		members []Member
		totals  Totals
		apps    []App
		users   []User
	}{
		{name: "empty"},
		{
			name: "one reporting, one not, a scheduler and an observer",
			members: []Member{
				{Name: "s", Role: membership.RoleScheduler},
				{Name: "o", Role: membership.RoleObserver},
				nm("a", 2, []string{"x"}, &httpapi.NodeMonitorStatus{Free: 1, Running: 1, Queued: 3,
					Users: map[string]httpapi.UserCounts{"bob": {Queued: 3}, "al": {Running: 1}}}),
				nm("b", 4, []string{"x", "y"}, nil),
			},
			totals: Totals{Schedulers: 1, Observers: 1, NodeMonitors: 2, Slots: 6, Reporting: 1, Free: 1, Running: 1, Queued: 3},
			apps:   []App{{App: "x", NodeMonitors: 2, Slots: 6}, {App: "y", NodeMonitors: 1, Slots: 4}},
			users:  []User{{User: "al", Running: 1}, {User: "bob", Queued: 3}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := View{Members: tc.members}
			v.summarize()
			if v.Totals != tc.totals || !reflect.DeepEqual(v.Apps, tc.apps) || !reflect.DeepEqual(v.Users, tc.users) {
				t.Errorf("got %+v %+v %+v, want %+v %+v %+v", v.Totals, v.Apps, v.Users, tc.totals, tc.apps, tc.users)
			}
			var out bytes.Buffer
			Render(&out, v)
			for _, want := range []string{"SCHEDULERS", "NODE MONITORS", "APPS", "USERS"} {
				if !strings.Contains(out.String(), want) {
					t.Errorf("rendered view lacks %s:\n%s", want, out.String())
				}
			}
		})
	}
}
