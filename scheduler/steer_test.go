package scheduler

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sparrowfleet/sparrow/core/placement"
	"github.com/sparrowfleet/sparrow/thrift/gen-go/sparrowrpc"
)

// A request whose reservations sit on a node monitor that does not serve
// its user gets, once SteerAfter has passed, one more reservation per
// unlaunched task on a node monitor that served the user lately; the old
// one stays, and whichever asks first gets the task. With steering off
// nothing moves.
func TestSteerStrandedMovesToServingNodes(t *testing.T) {
	for _, tc := range []struct {
		name        string
		steerAfter  time.Duration
		wantSteered uint64
	}{
		{"off", 0, 0},
		{"on", time.Second, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				c := newCluster(t, 4, Config{SteerAfter: tc.steerAfter, NoOffers: true, Seed: 2})
				if err := c.s.SubmitJob(context.Background(), job("served", 1, freeTasks(1)...)); err != nil {
					t.Fatal(err)
				}
				c.waitAccepted(t, "served", 1)
				server := c.holders("served")[0]
				if got := len(c.getTask(t, "served", server)); got != 1 {
					t.Fatalf("%d tasks handed to %s, want 1", got, server.name)
				}
				if err := c.s.SubmitJob(context.Background(), job("stuck", 1, freeTasks(1)...)); err != nil {
					t.Fatal(err)
				}
				c.waitAccepted(t, "stuck", 1)
				sitter := c.holders("stuck")[0]
				if sitter == server {
					t.Fatalf("the seed put the stuck job on %s, the serving node; the test needs another seed", server.name)
				}
				// Not yet due: nothing moves.
				c.s.Sweep(time.Now())
				if st := c.s.Stats(); st.Steered != 0 {
					t.Fatalf("steered %d reservations before SteerAfter", st.Steered)
				}
				c.s.Sweep(time.Now().Add(1100 * time.Millisecond))
				c.waitAccepted(t, "stuck", 1+int(tc.wantSteered))
				if got := c.s.Stats().Steered; got != tc.wantSteered {
					t.Fatalf("steered %d reservations, want %d", got, tc.wantSteered)
				}
				if got := server.acceptedFor("stuck"); got != int(tc.wantSteered) {
					t.Fatalf("%s holds %d reservations of the stuck job, want %d", server.name, got, tc.wantSteered)
				}
				got := len(c.getTask(t, "stuck", server)) + len(c.getTask(t, "stuck", sitter))
				if got != 1 {
					t.Fatalf("%d tasks handed out, want 1", got)
				}
			})
		})
	}
}

// steerBook on its own: when a request is due, and what it records.
func TestSteerBook(t *testing.T) {
	t0 := time.Unix(1000, 0)
	user := &sparrowrpc.TUserGroupInfo{User: "u"}
	nodes := []placement.Node{{Addr: "a"}, {Addr: "b"}}
	for _, tc := range []struct {
		name        string
		after       time.Duration
		relaxes     bool
		at          time.Duration // since placement
		wantDue     bool
		wantServing []string // after "a" served u at placement
	}{
		{"off", 0, false, time.Hour, false, nil},
		{"not yet", time.Second, false, time.Second / 2, false, []string{"a"}},
		{"due", time.Second, false, time.Second, true, []string{"a"}},
		{"relaxing requests are the relaxer's", time.Second, true, time.Second, false, []string{"a"}},
		{"a verdict expires", time.Second, false, 3 * time.Second, true, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := newSteerBook(tc.after)
			r := &request{Request: placement.NewRequest("r", []placement.Task{{ID: "t0"}}), user: user}
			if tc.relaxes {
				r.loc = &relaxState{}
			}
			b.placed(r, []placement.Probe{{Node: nodes[1], Count: 1}}, t0)
			b.served(r, "a", t0)
			now := t0.Add(tc.at)
			if got := b.due(r, now); got != tc.wantDue {
				t.Errorf("due = %v, want %v", got, tc.wantDue)
			}
			var serving []string
			for _, n := range b.serving("u", nodes, now) {
				serving = append(serving, n.Addr)
			}
			if len(serving) != len(tc.wantServing) || (len(serving) > 0 && serving[0] != tc.wantServing[0]) {
				t.Errorf("serving = %v, want %v", serving, tc.wantServing)
			}
			if tc.after <= 0 {
				if got := b.candidates(nil, "u", nodes, now); len(got) != len(nodes) {
					t.Errorf("steering off changed the candidates to %v", got)
				}
			}
		})
	}
}
