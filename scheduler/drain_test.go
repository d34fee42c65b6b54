package scheduler

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sparrowfleet/sparrow/client"
	"github.com/sparrowfleet/sparrow/thrift/gen-go/sparrowrpc"
)

// drainAsync starts a drain of c's scheduler and returns its result.
func drainAsync(c *cluster, timeout time.Duration) <-chan DrainResult {
	out := make(chan DrainResult, 1)
	go func() { out <- c.s.Drain(timeout) }()
	return out
}

// drainRefused checks that err is a drain's refusal, typed by the client
// library as a retryable saturation with a suggested delay.
func drainRefused(t *testing.T, err error) {
	t.Helper()
	saturationRefusal(t, err, "shutting down")
	var ire *sparrowrpc.IncompleteRequestException
	errors.As(err, &ire)
	// The client library types a refusal saying "fleet saturated" as a
	// SaturatedError, which its retry policies submit again.
	if !strings.Contains(ire.Message, "fleet saturated") {
		t.Errorf("refusal %q is not typed as saturation by the client library", ire.Message)
	}
	if d, ok := client.ParseRetryAfter(ire.Message); !ok || d <= 0 {
		t.Errorf("refusal %q: client reads no retry delay", ire.Message)
	}
}

// launchAll launches every task of req from the node monitors holding its
// reservations, and returns their ids as finished reports, by node.
func (c *cluster) launchAll(t *testing.T, req string) map[*fakeNM][]*sparrowrpc.TFullTaskId {
	t.Helper()
	out := make(map[*fakeNM][]*sparrowrpc.TFullTaskId)
	for _, nm := range c.holders(req) {
		for {
			specs := c.getTask(t, req, nm)
			if len(specs) == 0 {
				break
			}
			out[nm] = append(out[nm], &sparrowrpc.TFullTaskId{AppId: app, RequestId: req, TaskId: specs[0].TaskId})
		}
	}
	return out
}

// TestDrainRefusesNewJobsAndWaitsForAccepted: after Drain begins, a job is
// refused with a retryable saturation refusal; Drain returns only once the
// job accepted before it has launched every task and every task has been
// reported finished.
func TestDrainRefusesNewJobsAndWaitsForAccepted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t, 3, Config{NoOffers: true})
		if err := c.s.SubmitJob(context.Background(), job("before", 1, freeTasks(3)...)); err != nil {
			t.Fatal(err)
		}
		c.waitAccepted(t, "before", 3)
		done := drainAsync(c, time.Hour)
		synctest.Wait()
		if !c.s.Draining() {
			t.Fatal("Draining() false after Drain began")
		}
		drainRefused(t, c.s.SubmitJob(context.Background(), job("after", 1, freeTasks(1)...)))
		if len(done) > 0 {
			t.Fatalf("drain returned with 3 tasks unlaunched: %+v", <-done)
		}
		finished := c.launchAll(t, "before")
		time.Sleep(time.Second)
		if len(done) > 0 {
			t.Fatalf("drain returned with 3 tasks running: %+v", <-done)
		}
		n := 0
		for nm, ids := range finished {
			n += len(ids)
			if err := c.s.TasksFinished(context.Background(), nm.hp, ids); err != nil {
				t.Fatal(err)
			}
		}
		if n != 3 {
			t.Fatalf("%d tasks launched during the drain, want 3", n)
		}
		res := <-done
		if res.Unlaunched != 0 || res.Running != 0 || res.Waited > time.Second+drainPoll {
			t.Fatalf("drain result %+v, want nothing left, within a poll of the last report", res)
		}
		if c.accepted("after") != 0 {
			t.Fatal("a job refused by the drain placed reservations")
		}
	})
}

// TestDrainTimeout: a drain whose accepted work does not finish returns
// at its timeout, saying what is left.
func TestDrainTimeout(t *testing.T) {
	for _, tc := range []struct {
		name                string
		launch              bool
		unlaunched, running int
	}{
		{"unlaunched", false, 2, 0},
		{"running", true, 0, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				c := newCluster(t, 2, Config{NoOffers: true})
				if err := c.s.SubmitJob(context.Background(), job("j", 1, freeTasks(2)...)); err != nil {
					t.Fatal(err)
				}
				c.waitAccepted(t, "j", 2)
				if tc.launch {
					c.launchAll(t, "j")
				}
				start := time.Now()
				res := c.s.Drain(5 * time.Second)
				if res.Unlaunched != tc.unlaunched || res.Running != tc.running {
					t.Fatalf("drain result %+v, want %d unlaunched and %d running", res, tc.unlaunched, tc.running)
				}
				if got := time.Since(start); got < 5*time.Second || got > 5*time.Second+drainPoll {
					t.Fatalf("drain returned after %v, want its 5s timeout", got)
				}
			})
		})
	}
}

// TestDrainAnswersHeldCalls: a submitJob call held on a saturated fleet
// is refused at once when a drain begins, with the retryable refusal, and
// its reservations are withdrawn; one whose task launched is accepted.
func TestDrainAnswersHeldCalls(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t, 2, Config{NoOffers: true, MaxHeldJobs: 4, MaxHold: time.Hour})
		for _, nm := range c.nms {
			nm.refuse.Store(true)
		}
		call := submitAsync(c, job("held", 1, freeTasks(2)...))
		c.hub.waitUntil(t, "the call to be held", func() bool { return c.s.Stats().Hold.Held == 1 })
		start := time.Now()
		done := drainAsync(c, time.Hour)
		drainRefused(t, waitAnswer(t, call))
		if waited := time.Since(start); waited > holdRetryMax {
			t.Fatalf("held call answered %v after the drain began", waited)
		}
		res := <-done
		if res.Unlaunched != 0 || res.Running != 0 {
			t.Fatalf("drain result %+v after refusing its only job", res)
		}
		if st := c.s.Stats(); st.Hold.Held != 0 || st.Hold.Refused != 1 || st.ActiveRequests != 0 {
			t.Fatalf("hold stats %+v, active %d", st.Hold, st.ActiveRequests)
		}
	})
}

// TestDrainAdmissionHoldIsRefused: a call held by admission (expected
// queue wait) is refused when a drain begins, having placed nothing.
func TestDrainAdmissionHoldIsRefused(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t, 2, Config{NoOffers: true, MaxHeldJobs: 4, MaxHold: time.Hour, MaxQueueWait: time.Second})
		full := LoadReport{Queued: 40, Running: 1, Slots: 1, TaskTime: 100 * time.Millisecond}
		for _, nm := range c.nms {
			c.s.ObserveLoad(nm.addr, full, time.Now())
		}
		call := submitAsync(c, job("held", 1, freeTasks(1)...))
		c.hub.waitUntil(t, "the call to be held by admission", func() bool { return c.s.Stats().Hold.Held == 1 })
		done := drainAsync(c, time.Hour)
		drainRefused(t, waitAnswer(t, call))
		<-done
		if n := c.nms[0].attemptsFor("held") + c.nms[1].attemptsFor("held"); n != 0 {
			t.Fatalf("%d reservations offered for a job refused by the drain", n)
		}
	})
}
