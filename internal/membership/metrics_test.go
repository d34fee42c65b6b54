package membership

import (
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/sparrowfleet/sparrow/internal/metrics/metricstest"
)

// waitFor polls cond, a condition on live gossip, until it holds or 15 s
// pass.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond) // polling interval of a condition wait
	}
}

// TestMembershipStats starts a scheduler and two node monitors on
// loopback and checks what the scheduler counts: members by role as they
// join and go, memberlist's nodes by state once it has exchanged state,
// and a suspicion of the node monitor that stopped without leaving.
func TestMembershipStats(t *testing.T) {
	s, err := Start(Config{Name: "s", Bind: "127.0.31.1:0", Profile: "local", Meta: Meta{Role: RoleScheduler}, Log: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Leave(0) })
	var nms []*Cluster
	for _, name := range []string{"n1", "n2"} {
		n, err := Start(Config{Name: name, Bind: "127.0.31.2:0", Seeds: []string{s.Addr()}, Profile: "local",
			Meta: Meta{Role: RoleNodeMonitor, Slots: 1}, Log: zerolog.Nop()})
		if err != nil {
			t.Fatal(err)
		}
		nms = append(nms, n)
	}
	t.Cleanup(func() { nms[0].Leave(0) })
	if s.Role() != RoleScheduler {
		t.Errorf("Role() = %q, want scheduler", s.Role())
	}
	waitFor(t, "both node monitors in the scheduler's view", func() bool { return s.Stats().ByRole[RoleNodeMonitor] == 2 })
	if st := s.Stats(); st.ByRole[RoleScheduler] != 1 || len(st.ByRole) != 2 {
		t.Errorf("members by role %v, want 1 scheduler and 2 node monitors", st.ByRole)
	}
	waitFor(t, "memberlist's node states, all alive", func() bool {
		st := s.Stats()
		return st.NodesReported && st.Nodes[StateAlive] == 3 && st.Nodes[StateSuspect] == 0
	})

	nms[1].Shutdown() // as a crash: no leave message
	waitFor(t, "the stopped node monitor suspected and gone from the view", func() bool {
		st := s.Stats()
		return st.Suspicions >= 1 && st.ByRole[RoleNodeMonitor] == 1
	})

	// The collector reports the same.
	got := metricstest.Values(t, Collector(s.Stats))
	for _, tc := range []struct {
		series          string
		atLeast, atMost float64
	}{
		{"sparrow_membership_members{nodemonitor}", 1, 1},
		{"sparrow_membership_members{scheduler}", 1, 1},
		{"sparrow_membership_members{coordinator}", 0, 0},
		{"sparrow_membership_nodes{alive}", 2, 3},
		{"sparrow_membership_suspicions_total", 1, 10},
		{"sparrow_membership_log_events_total{malformed}{error}", 0, 0},
	} {
		if v, ok := got[tc.series]; !ok || v < tc.atLeast || v > tc.atMost {
			t.Errorf("%s = %v (exported: %v), want %v to %v", tc.series, v, ok, tc.atLeast, tc.atMost)
		}
	}
}
