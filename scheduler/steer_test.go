package scheduler

import (
	"context"
	"testing"
	"time"
)

// A request whose reservations sit on a node monitor that does not serve
// its user gets, once SteerAfter has passed, one more reservation per
// unlaunched task on a node monitor that served the user lately; the old
// one stays, and whichever asks first gets the task.
func TestSteerStrandedMovesToServingNodes(t *testing.T) {
	c := newCluster(t, 4, Config{SteerAfter: time.Second, NoOffers: true, Seed: 2})
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
	c.waitAccepted(t, "stuck", 2)
	if server.acceptedFor("stuck") != 1 || c.s.Stats().Steered != 1 {
		t.Fatalf("%s holds %d reservations of the stuck job (steered %d); want 1 on the node serving its user", server.name, server.acceptedFor("stuck"), c.s.Stats().Steered)
	}
	got := len(c.getTask(t, "stuck", server)) + len(c.getTask(t, "stuck", sitter))
	if got != 1 {
		t.Fatalf("%d tasks handed out, want 1", got)
	}
}
