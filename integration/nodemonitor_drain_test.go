package integration

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/sparrowfleet/sparrow/bench/fleet"
	"github.com/sparrowfleet/sparrow/client"
)

// TestNodeMonitorDrain drains a node monitor over loopback Thrift and
// gossip while it runs tasks and holds queued reservations: its running
// tasks finish, its queued reservations are placed elsewhere while it is
// still a gossip member (well before the scheduler's 30 s reservation
// timeout could give them company), every task completes once, and none
// is reported lost.
func TestNodeMonitorDrain(t *testing.T) {
	led := newLedger()
	f := startFleet(t, fleet.Config{
		Schedulers: 1, NodeMonitors: 3, Slots: 2, Apps: []string{"app"},
		// One reservation per task: none of those on the drained node
		// monitor has a spare elsewhere.
		ProbeRatio: 1,
		Run:        echoTask(400 * time.Millisecond), OnLaunch: led.launched,
	})
	fe := ledgerFrontend(t, f, led, "127.0.3.77")
	ctx := context.Background()
	const jobs, tasks = 6, 4 // 24 tasks on 6 slots: every node has a queue
	for j := range jobs {
		if _, err := fe.Submit(ctx, newJob(fmt.Sprintf("j%d", j), tasks)); err != nil {
			t.Fatal(err)
		}
	}
	victim := f.NodeMonitors[0]
	waitFor(t, "node monitor 0 to run tasks with reservations queued", 10*time.Second, func() bool {
		st := victim.State()
		return st.Running == 2 && st.Queued > 0
	})
	res := victim.Drain(10 * time.Second)
	if !victim.Draining() || res.Handed == 0 || res.Unfinished != 0 {
		t.Fatalf("drain %+v (draining %v): want reservations handed back and every task finished", res, victim.Draining())
	}
	if st := victim.State(); st.Running != 0 || st.Queued != 0 || len(st.Apps) != 0 {
		t.Fatalf("drained node monitor's state %+v", st)
	}
	total := jobs * tasks
	waitFor(t, "every task to finish while the drained node monitor is still a member", 15*time.Second, func() bool {
		_, m := led.counts()
		return m == total
	})
	led.checkOnce(t, total)
	led.mu.Lock()
	defer led.mu.Unlock()
	for id, ms := range led.messages {
		if len(ms) != 1 || ms[0].Status != client.StatusOK {
			t.Errorf("task %s got messages %+v, want one, done", id, ms)
		}
	}
	t.Logf("drained a node monitor: %d reservations handed back, waited %v for its running tasks", res.Handed, res.Waited.Round(time.Millisecond))
}
