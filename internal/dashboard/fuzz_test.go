package dashboard

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/sparrowfleet/sparrow/internal/httpapi"
	"github.com/sparrowfleet/sparrow/internal/membership"
)

// oneAnswer is a fleet of one member whose /status is whatever the fuzzer
// made of its body.
type oneAnswer struct {
	role membership.Role
	st   httpapi.Status
	err  error
}

func (o oneAnswer) Members(membership.Role) []membership.Member {
	return []membership.Member{{Name: "m", Meta: membership.Meta{Role: o.role, HTTP: "m:1"}}}
}

func (o oneAnswer) Status(context.Context, string) (httpapi.Status, error) { return o.st, o.err }

// FuzzStatusAnswer feeds arbitrary /status bodies through decoding,
// polling and every page: none may panic, and what is kept stays within
// its bounds.
func FuzzStatusAnswer(f *testing.F) {
	f.Add(uint8(0), []byte(`{"name":"nm","role":"nodemonitor","ready":true,"nodemonitor":{"slots":4,"running":9,"users":{"a":{"queued":1}}}}`))
	f.Add(uint8(1), []byte(`{"scheduler":{"tasks_launched":18446744073709551615,"launch_delays":1,"launch_delay_seconds":1e308}}`))
	f.Add(uint8(2), []byte(`{"coordinator":{"active":true,"users":{"":{"target":-1}},"locality":{"racks":{"r":1}}}}`))
	f.Add(uint8(0), []byte(`not json`))
	roles := []membership.Role{membership.RoleNodeMonitor, membership.RoleScheduler, membership.RoleCoordinator}
	f.Fuzz(func(t *testing.T, which uint8, body []byte) {
		st, err := decodeStatus(body)
		role := roles[int(which)%len(roles)]
		fleet := oneAnswer{role, st, err}
		d := New(Config{Source: fleet, Fetcher: fleet, History: 4})
		for i := range 3 {
			d.Poll(context.Background(), time.Unix(int64(1000+i), 0))
		}
		if ms := d.members["m"]; ms != nil && ms.NodeMonitor != nil && len(ms.NodeMonitor.Users) > maxUsersPerNode {
			t.Fatalf("kept %d users of one node", len(ms.NodeMonitor.Users))
		}
		h := d.Handler("/ui/")
		// Charts are drawn from the same series; TestPages draws them.
		for _, path := range []string{"/ui/", "/ui/node?name=m"} {
			w := httptest.NewRecorder()
			h.ServeHTTP(w, httptest.NewRequest("GET", path, nil))
			if w.Code != 200 {
				t.Fatalf("%s answered %d: %s", path, w.Code, w.Body.String())
			}
		}
	})
}
