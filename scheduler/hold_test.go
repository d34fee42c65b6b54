package scheduler

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sparrowfleet/sparrow/thrift/gen-go/sparrowrpc"
)

// retryAfterRE is the suggestion format bench/driver's ParseRetryAfter
// reads (a Go duration after "retry after ").
var retryAfterRE = regexp.MustCompile(`retry after [0-9.]+(ms|s|m)`)

// submitAsync runs SubmitJob on its own goroutine; the result arrives on
// the returned channel.
func submitAsync(c *cluster, req *sparrowrpc.TSchedulingRequest) <-chan error {
	out := make(chan error, 1)
	go func() { out <- c.s.SubmitJob(context.Background(), req) }()
	return out
}

// answered reports whether a held call has returned, without waiting.
func answered(ch <-chan error) bool { return len(ch) > 0 }

// waitAnswer waits for a held call's answer.
func waitAnswer(t *testing.T, ch <-chan error) error {
	t.Helper()
	select {
	case err := <-ch:
		return err
	case <-time.After(waitTimeout):
		t.Fatalf("submitJob not answered after %v", waitTimeout)
		return nil
	}
}

func (c *cluster) attempts(req string) int {
	total := 0
	for _, nm := range c.nms {
		total += nm.attemptsFor(req)
	}
	return total
}

// settled waits until every enqueue the node monitors saw has been
// answered back to the scheduler and counted, so that nothing a
// reservation's answer could trigger is still under way.
func (c *cluster) settled(t *testing.T) {
	t.Helper()
	c.hub.waitUntil(t, "every enqueue answer to be counted", func() bool {
		total := 0
		for _, nm := range c.nms {
			nm.mu.Lock()
			for _, m := range nm.msgs {
				total += int(m.NumTasks)
			}
			nm.mu.Unlock()
		}
		return c.s.Stats().Reservations == uint64(total)
	})
}

func saturationRefusal(t *testing.T, err error, bound string) {
	t.Helper()
	var ire *sparrowrpc.IncompleteRequestException
	if !errors.As(err, &ire) {
		t.Fatalf("submitJob = %v, want an IncompleteRequestException", err)
	}
	for _, want := range []string{"saturated", bound} {
		if !strings.Contains(ire.Message, want) {
			t.Errorf("refusal %q does not mention %q", ire.Message, want)
		}
	}
	if !retryAfterRE.MatchString(ire.Message) {
		t.Errorf("refusal %q suggests no retry delay", ire.Message)
	}
}

func TestHeldCallAnswersOncePlaced(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t, 3, Config{MaxHeldJobs: 4, MaxHold: time.Minute})
		fe := c.startFrontendRecorder(t)
		for _, nm := range c.nms {
			nm.refuse.Store(true)
		}
		call := submitAsync(c, job("job", 1, freeTasks(2)...))
		// Held: refused, then placed again in rounds, not failed.
		c.hub.waitUntil(t, "the call to be held and re-placed twice", func() bool {
			st := c.s.Stats()
			return st.Hold.Held == 1 && st.Hold.Rounds >= 2
		})
		if answered(call) {
			t.Fatalf("held call answered while every node monitor refuses: %v", <-call)
		}
		for _, nm := range c.nms {
			nm.refuse.Store(false)
		}
		if err := waitAnswer(t, call); err != nil {
			t.Fatalf("held call: %v", err)
		}
		st := c.s.Stats()
		if st.Hold.Held != 0 || st.Hold.Holds != 1 || st.Hold.Refused != 0 || st.Hold.Seconds.Count != 1 {
			t.Fatalf("hold stats %+v", st.Hold)
		}
		if got := c.accepted("job"); got != 2 {
			t.Fatalf("%d reservations accepted once placed, want 2", got)
		}
		launched := 0
		for _, nm := range c.holders("job") {
			for len(c.getTask(t, "job", nm)) == 1 {
				launched++
			}
		}
		if launched != 2 {
			t.Fatalf("%d of 2 tasks launched", launched)
		}
		if n := fe.count(); n != 0 {
			t.Fatalf("%d frontend messages for a job that was held and placed", n)
		}
	})
}

func TestHeldCallPastMaxHoldIsRefusedAndWithdrawn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t, 2, Config{MaxHeldJobs: 4, MaxHold: 200 * time.Millisecond})
		fe := c.startFrontendRecorder(t)
		good, full := c.nms[0], c.nms[1]
		full.refuse.Store(true)
		// d=1, two tasks, two nodes: one reservation each; the good node's
		// is placed, the full one's never is.
		err := c.s.SubmitJob(context.Background(), job("job", 1, freeTasks(2)...))
		saturationRefusal(t, err, "--max-hold")
		c.hub.waitUntil(t, "the placed reservation to be withdrawn", func() bool { return good.cancelsFor("job") >= 1 })
		if good.acceptedFor("job") != 1 {
			t.Fatalf("good node accepted %d reservations, want 1", good.acceptedFor("job"))
		}
		if got := c.getTask(t, "job", good); len(got) != 0 {
			t.Fatalf("a refused job's reservation launched %v", got)
		}
		c.settled(t)
		st := c.s.Stats()
		if st.Hold.Refused != 1 || st.Hold.Held != 0 || st.ActiveRequests != 0 || st.TasksLaunched != 0 {
			t.Fatalf("stats %+v", st)
		}
		if n := fe.count(); n != 0 {
			t.Fatalf("%d frontend messages for a refused job, want none", n)
		}
	})
}

func TestMaxHeldJobsRefusesAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t, 2, Config{MaxHeldJobs: 1, MaxHold: time.Minute})
		fe := c.startFrontendRecorder(t)
		for _, nm := range c.nms {
			nm.refuse.Store(true)
		}
		first := submitAsync(c, job("first", 1, freeTasks(1)...))
		c.hub.waitUntil(t, "the first call to be held", func() bool { return c.s.Stats().Hold.Held == 1 })
		err := c.s.SubmitJob(context.Background(), job("second", 1, freeTasks(1)...))
		saturationRefusal(t, err, "--max-held-jobs")
		if answered(first) {
			t.Fatalf("the held call was answered by another's refusal: %v", <-first)
		}
		for _, nm := range c.nms {
			nm.refuse.Store(false)
		}
		if err := waitAnswer(t, first); err != nil {
			t.Fatalf("held call: %v", err)
		}
		c.settled(t)
		if st := c.s.Stats(); st.Hold.Refused != 1 || st.Hold.Holds != 1 || st.ActiveRequests != 1 {
			t.Fatalf("stats %+v", st)
		}
		if n := fe.count(); n != 0 {
			t.Fatalf("%d frontend messages, want none", n)
		}
	})
}

// TestHeldJobWithLaunchedTaskIsNotRefused: a task launches while its
// job's call is held; at the bound the call is answered as accepted, not
// refused, and the unplaced task follows the unheld path: re-placed, and
// reported failed once no node monitor takes it. Each task launches or
// fails exactly once.
func TestHeldJobWithLaunchedTaskIsNotRefused(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t, 2, Config{MaxHeldJobs: 4, MaxHold: 300 * time.Millisecond})
		fe := c.startFrontendRecorder(t)
		good, full := c.nms[0], c.nms[1]
		full.refuse.Store(true)
		// One task per node, so that the placed and the refused
		// reservations are known.
		call := submitAsync(c, job("job", 1, onNodes("t0", good.name), onNodes("t1", full.name)))
		c.hub.waitUntil(t, "the good node's reservation", func() bool { return good.acceptedFor("job") == 1 })
		got := c.getTask(t, "job", good)
		if len(got) != 1 || got[0].TaskId != "t0" {
			t.Fatalf("the held job's placed reservation launched %v, want t0", got)
		}
		if err := waitAnswer(t, call); err != nil {
			t.Fatalf("a partly launched held job was refused: %v", err)
		}
		if st := c.s.Stats(); st.Hold.Released != 1 || st.Hold.Refused != 0 {
			t.Fatalf("hold stats %+v", st.Hold)
		}
		c.hub.waitUntil(t, "t1 to be reported failed", func() bool { return fe.count() >= 1 })
		c.settled(t)
		fe.mu.Lock()
		defer fe.mu.Unlock()
		if len(fe.msgs) != 1 || fe.msgs[0].TaskId != "t1" || fe.stat[0] != sparrowrpc.STATUS_TASK_FAILED {
			t.Fatalf("frontend messages %+v %v, want only t1 failed", fe.msgs, fe.stat)
		}
		if got := c.getTask(t, "job", good); len(got) != 0 {
			t.Fatalf("good node got %v after t0 launched", got)
		}
	})
}

// TestHoldBoundRacesLaunch: node monitors ask for work while held calls
// reach their bound. Whatever the interleaving, a job is either refused
// with none of its tasks launched, or answered with each launched at
// most once, and a refused job's reservations never launch later.
func TestHoldBoundRacesLaunch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t, 2, Config{MaxHeldJobs: 64, MaxHold: 20 * time.Millisecond})
		good, full := c.nms[0], c.nms[1]
		full.refuse.Store(true)
		const jobs = 20
		var wg sync.WaitGroup
		type outcome struct {
			err      error
			launched []string
		}
		results := make([]outcome, jobs)
		for i := range jobs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				id := fmt.Sprintf("job%d", i)
				call := submitAsync(c, job(id, 1, freeTasks(2)...))
				c.hub.waitUntil(t, "the good node's reservation for "+id, func() bool { return good.acceptedFor(id) >= 1 })
				var got []string
				for _, s := range c.getTask(t, id, good) {
					got = append(got, s.TaskId)
				}
				results[i] = outcome{err: waitAnswer(t, call), launched: got}
				// Asking again after the answer launches nothing new
				// for a refused job.
				if results[i].err != nil {
					if more := c.getTask(t, id, good); len(more) != 0 {
						t.Errorf("%s: refused job launched %v afterwards", id, more)
					}
				}
			}()
		}
		wg.Wait()
		refused := 0
		for i, o := range results {
			switch {
			case o.err != nil && len(o.launched) > 0:
				t.Errorf("job%d refused (%v) after launching %v", i, o.err, o.launched)
			case o.err != nil:
				refused++
				saturationRefusal(t, o.err, "--max-hold")
			case len(o.launched) != 1:
				t.Errorf("job%d answered with launches %v", i, o.launched)
			}
		}
		st := c.s.Stats()
		t.Logf("%d of %d jobs refused, %d released", refused, jobs, st.Hold.Released)
		if int(st.Hold.Refused) != refused || int(st.Hold.Released)+refused > jobs {
			t.Fatalf("%d refused; stats %+v", refused, st.Hold)
		}
	})
}

func TestHeldJobOnUnreachableFleetIsRefusedWithCause(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t, 2, Config{MaxHeldJobs: 4, MaxHold: time.Minute})
		fe := c.startFrontendRecorder(t)
		for _, nm := range c.nms {
			nm.stop()
		}
		err := c.s.SubmitJob(context.Background(), job("job", 1, freeTasks(2)...))
		var ire *sparrowrpc.IncompleteRequestException
		if !errors.As(err, &ire) || !strings.Contains(ire.Message, "no live node monitor") {
			t.Fatalf("submitJob = %v, want a refusal naming the cause", err)
		}
		if st := c.s.Stats(); st.ActiveRequests != 0 || st.Hold.Refused != 0 {
			t.Fatalf("stats %+v", st)
		}
		if n := fe.count(); n != 0 {
			t.Fatalf("%d frontend messages, want none", n)
		}
	})
}

// TestHoldDisabledKeepsTheOldPath: with MaxHeldJobs 0 the call returns at
// once and refused tasks are reported failed later.
func TestHoldDisabledKeepsTheOldPath(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t, 2, Config{})
		fe := c.startFrontendRecorder(t)
		for _, nm := range c.nms {
			nm.refuse.Store(true)
		}
		if err := c.s.SubmitJob(context.Background(), job("job", 1, freeTasks(1)...)); err != nil {
			t.Fatal(err)
		}
		c.hub.waitUntil(t, "the failure report", func() bool { return fe.count() == 1 })
		if st := c.s.Stats(); st.Hold.Holds != 0 {
			t.Fatalf("hold stats %+v with holding disabled", st.Hold)
		}
	})
}

// Held jobs are placed in the order they were held: as queue positions
// free one at a time, the oldest held call takes each, rather than
// whichever call's retry timer comes first (holdorder.go).
func TestHeldJobsArePlacedInArrivalOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t, 1, Config{MaxHeldJobs: 8, MaxHold: time.Minute})
		c.startFrontendRecorder(t)
		nm := c.nms[0]
		nm.refuse.Store(true)
		names := []string{"first", "second", "third", "fourth"}
		calls := map[string]<-chan error{}
		for i, name := range names {
			calls[name] = submitAsync(c, job(name, 1, freeTasks(1)...))
			c.hub.waitUntil(t, fmt.Sprintf("%d calls held", i+1), func() bool { return c.s.Stats().Hold.Held == i+1 })
		}
		// From now on the node monitor has room for one reservation at a
		// time, given after the previous call was answered.
		nm.mu.Lock()
		nm.capped, nm.room = true, 0
		nm.mu.Unlock()
		nm.refuse.Store(false)
		for i, name := range names {
			nm.mu.Lock()
			nm.room = 1
			nm.mu.Unlock()
			if err := waitAnswer(t, calls[name]); err != nil {
				t.Fatalf("call %d (%s): %v", i+1, name, err)
			}
			for _, other := range names[i+1:] {
				if answered(calls[other]) {
					t.Fatalf("%s answered before %s, held before it", other, name)
				}
			}
		}
		if st := c.s.Stats().Hold; st.Refused != 0 || st.Held != 0 {
			t.Fatalf("hold stats %+v", st)
		}
	})
}
