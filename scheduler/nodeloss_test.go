package scheduler

import (
	"context"
	"testing"
	"testing/synctest"

	"github.com/sparrowfleet/sparrow/internal/membership"
	"github.com/sparrowfleet/sparrow/internal/rpc"
)

func TestSameProcessLive(t *testing.T) {
	nm := func(name, addr, boot string) membership.Member {
		return membership.Member{Name: name, Meta: membership.Meta{Role: membership.RoleNodeMonitor, Internal: addr, Boot: boot}}
	}
	dead := nm("nm1", "10.0.0.1:20502", "b1")
	for _, tc := range []struct {
		name string
		dead membership.Member
		live []membership.Member
		want bool
	}{
		{"back as the same process", dead, []membership.Member{nm("nm2", "10.0.0.2:20502", "b2"), nm("nm1", "10.0.0.1:20502", "b1")}, true},
		{"not back", dead, []membership.Member{nm("nm2", "10.0.0.2:20502", "b2")}, false},
		{"restarted: new boot", dead, []membership.Member{nm("nm1", "10.0.0.1:20502", "b9")}, false},
		{"another address", dead, []membership.Member{nm("nm1", "10.0.0.7:20502", "b1")}, false},
		{"another name", dead, []membership.Member{nm("nm7", "10.0.0.1:20502", "b1")}, false},
		{"no boot (older build)", nm("nm1", "10.0.0.1:20502", ""), []membership.Member{nm("nm1", "10.0.0.1:20502", "")}, false},
		{"nobody live", dead, nil, false},
	} {
		if got := sameProcessLive(tc.dead, tc.live); got != tc.want {
			t.Errorf("%s: sameProcessLive = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// NodeGone (gossip's verdict, before the grace) places the node's queued
// reservations elsewhere at once but keeps its running tasks: no lost
// report, still tracked. NodeLost (the node did not come back) then
// reports them.
func TestNodeGoneReplacesReservationsKeepsRunningTasks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t, 3, Config{})
		fe := c.startFrontendRecorder(t)
		ctx := context.Background()
		if err := c.s.SubmitJob(ctx, job("j", 1, freeTasks(3)...)); err != nil {
			t.Fatal(err)
		}
		c.waitAccepted(t, "j", 3)
		victim := c.holders("j")[0]
		if got := c.getTask(t, "j", victim); len(got) != 1 {
			t.Fatalf("victim got %d tasks of j, want 1", len(got))
		}
		// k has a reservation on every node, the victim's among them.
		if err := c.s.SubmitJob(ctx, job("k", 1, freeTasks(3)...)); err != nil {
			t.Fatal(err)
		}
		c.waitAccepted(t, "k", 3)

		addr := rpc.HostPortString(victim.hp)
		c.s.NodeGone(addr)
		c.waitAccepted(t, "k", 4) // the victim's reservation for k, placed again elsewhere
		if got := c.getTask(t, "k", victim); len(got) != 0 {
			t.Errorf("the gone node still got a task of k: %v", got)
		}
		if st := c.s.Stats(); st.TasksLost != 0 || st.RunningTracked != 1 {
			t.Errorf("after NodeGone: stats %+v, want nothing lost and j's task still tracked", st)
		}
		if n := fe.count(); n != 0 {
			t.Errorf("after NodeGone: %d frontend messages, want none", n)
		}

		c.s.NodeLost(addr)
		c.hub.waitUntil(t, "the lost report", func() bool { return fe.count() == 1 })
		if st := c.s.Stats(); st.TasksLost != 1 || st.RunningTracked != 0 {
			t.Errorf("after NodeLost: stats %+v, want j's task lost and nothing tracked", st)
		}
	})
}

// A node monitor gone from the membership may come back at its address
// as a newer build: NodeGone forgets which extensions it lacked (offers,
// remaining-work updates), so that they are tried again; another node
// monitor's are kept.
func TestNodeGoneForgetsLackingExtensions(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t, 2, Config{})
		gone, kept := c.nms[0].addr, c.nms[1].addr
		for _, addr := range []string{gone, kept} {
			c.s.offers.caps.MarkLacking(addr, methodOffer)
			c.s.workSend.caps.MarkLacking(addr, methodUpdateRemainingWork)
		}
		c.s.NodeGone(gone)
		if c.s.offers.caps.Lacks(gone, methodOffer) || c.s.workSend.caps.Lacks(gone, methodUpdateRemainingWork) {
			t.Error("the gone node monitor is still taken to lack the extensions")
		}
		if !c.s.offers.caps.Lacks(kept, methodOffer) || !c.s.workSend.caps.Lacks(kept, methodUpdateRemainingWork) {
			t.Error("another node monitor's missing extensions were forgotten")
		}
	})
}
