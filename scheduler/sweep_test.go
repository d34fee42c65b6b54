package scheduler

import (
	"context"
	"testing"
	"testing/synctest"
	"time"
)

// In a small, overloaded fleet every node already holds one of a waiting
// job's reservations: its tasks are simply queued. The sweep must neither
// fail them nor pile on more reservations.
func TestSweepNeverFailsQueuedTasks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t, 3, Config{ReservationTimeout: time.Second})
		fe := c.startFrontendRecorder(t)
		if err := c.s.SubmitJob(context.Background(), job("queued", 1, freeTasks(3)...)); err != nil {
			t.Fatal(err)
		}
		c.waitAccepted(t, "queued", 3)
		for i := 0; i < 20; i++ {
			c.s.Sweep(time.Now().Add(time.Duration(i+1) * time.Hour))
		}
		if st := c.s.Stats(); st.ActiveRequests != 1 || st.Reprobes != 0 {
			t.Fatalf("stats %+v after sweeping a fully reserved fleet: want the request kept and no re-probes", st)
		}
		if n := fe.count(); n != 0 {
			t.Fatalf("the frontend got %d messages: queued tasks were reported", n)
		}
		if got := c.accepted("queued"); got != 3 {
			t.Fatalf("%d reservations after sweeping, want the original 3", got)
		}
	})
}

// With idle nodes available, an overdue request gets extra reservations on
// nodes that do not already hold one, and keeps the old ones.
func TestSweepAddsReservationsElsewhere(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t, 6, Config{ReservationTimeout: time.Second})
		if err := c.s.SubmitJob(context.Background(), job("slow", 1, freeTasks(2)...)); err != nil {
			t.Fatal(err)
		}
		c.waitAccepted(t, "slow", 2)
		first := c.holders("slow")
		c.s.Sweep(time.Now().Add(time.Hour))
		c.waitAccepted(t, "slow", 4)
		for _, nm := range c.holders("slow") {
			if nm.acceptedFor("slow") != 1 {
				t.Errorf("%s holds %d reservations; extras must go to nodes without one", nm.name, nm.acceptedFor("slow"))
			}
		}
		// Both the old holders and the new ones can still be given the tasks.
		got := 0
		for _, nm := range append(first, c.holders("slow")...) {
			got += len(c.getTask(t, "slow", nm))
		}
		if got != 2 {
			t.Errorf("%d tasks handed out, want 2", got)
		}
	})
}

// While the fleet is saturated (a node monitor refused reservations as
// full within the reservation timeout), an overdue request's reservations
// are queued, not stuck: the sweep adds none, which would only meet full
// queues. Once no refusal is that recent, it adds them again.
func TestSweepHoldsOffWhileSaturated(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t, 6, Config{ReservationTimeout: time.Second})
		if err := c.s.SubmitJob(context.Background(), job("slow", 1, freeTasks(2)...)); err != nil {
			t.Fatal(err)
		}
		c.waitAccepted(t, "slow", 2)
		// Another job is refused as full by every node monitor.
		for _, nm := range c.nms {
			nm.refuse.Store(true)
		}
		c.s.SubmitJob(context.Background(), job("full", 1, freeTasks(1)...)) // its fate is not this test's
		c.hub.waitUntil(t, "a refusal as full", func() bool { return c.s.Stats().EnqueueFailures > 0 })
		for _, nm := range c.nms {
			nm.refuse.Store(false)
		}
		c.settled(t)
		before := c.s.Stats()
		c.s.mu.Lock()
		if c.s.gate.hold.lastFull.IsZero() {
			c.s.mu.Unlock()
			t.Fatal("a refusal as full was not recorded")
		}
		// Sweep an hour on, as if the last refusal were half a second old.
		at := time.Now().Add(time.Hour)
		c.s.gate.hold.sawFull(at.Add(-500 * time.Millisecond))
		c.s.mu.Unlock()
		c.s.Sweep(at)
		c.settled(t)
		st := c.s.Stats()
		if st.Reprobes != before.Reprobes || st.SweepsSaturated == before.SweepsSaturated || c.accepted("slow") != 2 {
			t.Fatalf("sweep of a saturated fleet: %d re-probes (was %d), %d held off, %d reservations of slow; want no new reservation, one held off",
				st.Reprobes, before.Reprobes, st.SweepsSaturated, c.accepted("slow"))
		}
		c.s.Sweep(at.Add(2 * time.Second)) // the refusal is older than the timeout now
		c.waitAccepted(t, "slow", 4)
	})
}
