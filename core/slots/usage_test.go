package slots

import (
	"maps"
	"testing"

	"github.com/sparrowfleet/sparrow/core/queue"
)

// TestUsageFollowsEveryPath: per-user queued and running counts stay equal
// to the queue's and the slots' own state through enqueues, fetches,
// starts, empty fetches, finishes, cancellations and a lost executor, and
// a Choosy queue is told of every start and end.
func TestUsageFollowsEveryPath(t *testing.T) {
	q, err := queue.NewChoosy(1, nil)
	if err != nil {
		t.Fatal(err)
	}
	q.SetShares(1, map[string]float64{"alice": 0, "bob": 0})
	c, err := New(3, q)
	if err != nil {
		t.Fatal(err)
	}
	c.AddApp("spark")
	c.AddApp("mpi")
	enq := func(req, user, app string, n int) {
		t.Helper()
		if err := c.Enqueue(queue.Reservation{RequestID: req, User: user, App: app, Scheduler: "s:1"}, n); err != nil {
			t.Fatal(err)
		}
	}
	want := func(step string, w map[string]Usage) {
		t.Helper()
		if got := c.Usage(); !maps.Equal(got, w) {
			t.Fatalf("%s: usage %v, want %v", step, got, w)
		}
		queued, running := 0, 0
		for _, u := range w {
			queued += u.Queued
			running += u.Running
		}
		if queued != c.Queued() || running != c.Running() {
			t.Fatalf("%s: usage sums %d queued, %d running; core has %d, %d", step, queued, running, c.Queued(), c.Running())
		}
	}

	enq("a1", "alice", "spark", 2)
	enq("b1", "bob", "mpi", 3)
	enq("a1", "alice", "spark", 1) // a re-probe of the same request
	want("enqueued", map[string]Usage{"alice": {Queued: 3}, "bob": {Queued: 3}})

	r, _ := c.Next() // both at share 0: fair order serves alice first
	if !c.Start(TaskKey{RequestID: r.RequestID, TaskID: "t1"}, r) {
		t.Fatal("start refused")
	}
	c.Next()
	c.Released() // an empty getTask
	want("one running, one empty fetch", map[string]Usage{
		r.User: {Queued: 2, Running: 1}, otherUser(r.User): {Queued: 2},
	})
	if s, _ := q.Share(r.User); s != 1 {
		t.Fatalf("Choosy share of %s after its launch = %v, want 1", r.User, s)
	}

	c.Cancel("b1")
	want("bob cancelled", map[string]Usage{"alice": {Queued: 2, Running: 1}})

	c.Finished(TaskKey{RequestID: r.RequestID, TaskID: "t1"})
	want("finished", map[string]Usage{"alice": {Queued: 2}})
	if s, _ := q.Share("alice"); s != 0 {
		t.Fatalf("Choosy share of alice after the finish = %v, want 0", s)
	}

	r, _ = c.Next()
	c.Start(TaskKey{RequestID: r.RequestID, TaskID: "t2"}, r)
	c.FailApp("spark")
	c.RemoveApp("spark")
	want("executor lost", map[string]Usage{})
}

func otherUser(u string) string {
	if u == "alice" {
		return "bob"
	}
	return "alice"
}
