package integration

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sparrowfleet/sparrow/bench/fleet"
	"github.com/sparrowfleet/sparrow/client"
	"github.com/sparrowfleet/sparrow/nodemonitor"
	"github.com/sparrowfleet/sparrow/scheduler"
)

// startAdmissionFleet starts holdFleet's shape (one scheduler, two
// one-slot node monitors, over real Thrift and gossip on loopback) with
// the scheduler configured by cfg, node monitors whose queues never fill
// (so any hold is admission's, not a refusal's) and that report their
// load every 100 ms. Tasks whose message is "block" run until gate is
// closed; the others sleep for the duration their message names.
func startAdmissionFleet(t *testing.T, cfg scheduler.Config, gate <-chan struct{}) *holdFleet {
	t.Helper()
	run := func(ctx context.Context, lt client.LaunchedTask) ([]byte, error) {
		if string(lt.Message) == "block" {
			select {
			case <-gate:
			case <-ctx.Done():
			}
			return nil, nil
		}
		return fleet.SleepTask(ctx, lt)
	}
	return startHoldFleetConfig(t, cfg, nodemonitor.DaemonConfig{
		MaxQueued: 1000, Coordination: nodemonitor.CoordinationConfig{ReportEvery: 100 * time.Millisecond},
	}, run)
}

// warm runs a job of 100 ms tasks on both node monitors and, if reports
// is set, waits until their reports, sent after the tasks finished, have
// reached the scheduler: from then on it knows their mean task time.
func (f *holdFleet) warm(t *testing.T, fe *client.Frontend, reports bool) {
	t.Helper()
	if _, err := fe.Submit(context.Background(), client.Job{Tasks: tasks(2, "100ms")}); err != nil {
		t.Fatalf("warm-up job: %v", err)
	}
	waitFor(t, "the warm-up tasks to report done", 20*time.Second, func() bool { return f.okCount() == 2 })
	if !reports {
		return
	}
	n0 := f.sched.Stats().Hold.LoadReports
	waitFor(t, "fresh load reports from both node monitors", 20*time.Second, func() bool {
		return f.sched.Stats().Hold.LoadReports >= n0+4
	})
}

// submitUntilHeld submits one-task blocking jobs until the scheduler
// holds one (at most 40), and returns the held call's answer channel and
// how many jobs were accepted before it. A saturation refusal between two
// looks counts as held (a short --max-hold); any other error fails.
func (f *holdFleet) submitUntilHeld(t *testing.T, fe *client.Frontend) (<-chan error, int) {
	t.Helper()
	for accepted := 0; accepted < 40; accepted++ {
		call := make(chan error, 1)
		go func() {
			_, err := fe.Submit(context.Background(), client.Job{Tasks: tasks(1, "block")})
			call <- err
		}()
		var err error
		answered := false
		waitFor(t, "the job to be accepted or held", 20*time.Second, func() bool {
			select {
			case err = <-call:
				answered = true
				return true
			default:
			}
			return f.sched.Stats().Hold.Held > 0
		})
		if !answered {
			return call, accepted
		}
		if err != nil && strings.Contains(err.Error(), "saturated") {
			done := make(chan error, 1)
			done <- err
			return done, accepted
		}
		if err != nil {
			t.Fatalf("job %d: %v", accepted, err)
		}
		// Until the fleet settles, a queue may still shrink (a launched
		// job's spare reservation cancelled, a getTask on its way), and
		// a job held on it would rightly be admitted moments later.
		waitFor(t, "the accepted jobs' reservations to settle", 20*time.Second, func() bool { return f.settled(accepted + 1) })
	}
	t.Fatal("40 jobs accepted and none held by admission")
	return nil, 0
}

// settled reports whether the fleet holds k accepted one-task blocking
// jobs as it will until the gate opens: one running on each one-slot node
// monitor (fewer if k is smaller), and each of the others queued once on
// every node monitor, the launched jobs' spare reservations cancelled.
func (f *holdFleet) settled(k int) bool {
	running := 0
	for _, nm := range f.nms {
		queued := 0
		for _, u := range nm.Usage() {
			queued += u.Queued
			running += u.Running
		}
		if queued != max(0, k-len(f.nms)) {
			return false
		}
	}
	return running == min(k, len(f.nms))
}

// TestAdmissionHoldsThenAdmits: with --max-queue-wait, once the node
// monitors' queues are longer than the limit a job is held with no
// reservation placed, stays held while fresh reports show the queues
// still long, and is admitted once they drain; every task runs once.
func TestAdmissionHoldsThenAdmits(t *testing.T) {
	gate, release := taskGate(t)
	f := startAdmissionFleet(t, scheduler.Config{MaxHeldJobs: 64, MaxHold: 30 * time.Second, MaxQueueWait: 300 * time.Millisecond}, gate)
	var failovers atomic.Int32
	fe := f.frontend(t, 5*time.Second, &failovers)
	f.warm(t, fe, true)
	call, accepted := f.submitUntilHeld(t, fe)
	st := f.sched.Stats()
	t.Logf("held after %d accepted jobs; hold stats %+v", accepted, st.Hold)
	if st.Hold.AdmissionHolds != 1 || st.EnqueueFailures != 0 {
		t.Fatalf("held, but not by admission: hold stats %+v, enqueue refusals %d", st.Hold, st.EnqueueFailures)
	}
	// Fresh reports arrive (and wake the held call) while the queues stay
	// long: the job stays held and places nothing.
	n0, res0 := st.Hold.LoadReports, st.Reservations
	waitFor(t, "more load reports while the job is held", 20*time.Second, func() bool {
		return f.sched.Stats().Hold.LoadReports >= n0+4
	})
	select {
	case err := <-call:
		t.Fatalf("held call answered while the queues stayed long: %v", err)
	default:
	}
	if st := f.sched.Stats(); st.Hold.Held != 1 || st.Reservations != res0 {
		t.Fatalf("while held: %d held, reservations %d then %d; want 1 held and none placed", st.Hold.Held, res0, st.Reservations)
	}
	release()
	select {
	case err := <-call:
		if err != nil {
			t.Fatalf("held call after the queues drained: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("held call not admitted after the queues drained")
	}
	want := 2 + accepted + 1
	waitFor(t, "every task to report done", 30*time.Second, func() bool { return f.okCount() == want })
	st = f.sched.Stats()
	if st.Hold.Refused != 0 || failovers.Load() != 0 {
		t.Fatalf("refused %d, failovers %d; want none", st.Hold.Refused, failovers.Load())
	}
	f.checkExactlyOnce(t, want)
}

// TestAdmissionRefusedPastMaxHold: a job held by admission past
// --max-hold is refused synchronously with the saturation message and a
// retry delay the driver reads; it never runs and its frontend hears
// nothing about it.
func TestAdmissionRefusedPastMaxHold(t *testing.T) {
	gate, release := taskGate(t)
	f := startAdmissionFleet(t, scheduler.Config{MaxHeldJobs: 64, MaxHold: 200 * time.Millisecond, MaxQueueWait: 300 * time.Millisecond}, gate)
	var failovers atomic.Int32
	fe := f.frontend(t, 5*time.Second, &failovers)
	f.warm(t, fe, true)
	call, accepted := f.submitUntilHeld(t, fe)
	var err error
	select {
	case err = <-call:
	case <-time.After(30 * time.Second):
		t.Fatal("held call neither admitted nor refused")
	}
	if err == nil {
		t.Fatal("held call admitted while the queues stayed long; want a saturation refusal")
	}
	for _, s := range []string{"saturated", "--max-queue-wait", "--max-hold"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("refusal %v does not say %q", err, s)
		}
	}
	if d, ok := client.ParseRetryAfter(err.Error()); !ok || d <= 0 {
		t.Errorf("refusal %v suggests no retry delay the driver reads (%v, %v)", err, d, ok)
	}
	release()
	waitFor(t, "the accepted jobs' tasks to report done", 30*time.Second, func() bool { return f.okCount() == 2+accepted })
	st := f.sched.Stats()
	if st.Hold.AdmissionRefused != 1 || st.Hold.Refused != 1 || st.ActiveRequests != 0 || failovers.Load() != 0 {
		t.Fatalf("hold stats %+v, active %d, failovers %d", st.Hold, st.ActiveRequests, failovers.Load())
	}
	f.checkExactlyOnce(t, 2+accepted)
	f.mu.Lock()
	total := 0
	for _, n := range f.msgs {
		total += n
	}
	f.mu.Unlock()
	if total != 2+accepted {
		t.Fatalf("%d frontend messages, want %d: one per accepted task, none for the refused job", total, 2+accepted)
	}
}

// TestAdmissionOffChangesNothing: without --max-queue-wait the same
// long queues hold no job: every submission is answered at once.
func TestAdmissionOffChangesNothing(t *testing.T) {
	gate, release := taskGate(t)
	f := startAdmissionFleet(t, scheduler.Config{MaxHeldJobs: 64, MaxHold: 30 * time.Second}, gate)
	var failovers atomic.Int32
	fe := f.frontend(t, 5*time.Second, &failovers)
	f.warm(t, fe, false)
	const jobs = 30
	for i := range jobs {
		if _, err := fe.Submit(context.Background(), client.Job{Tasks: tasks(1, "block")}); err != nil {
			t.Fatalf("job %d: %v", i, err)
		}
	}
	st := f.sched.Stats()
	if st.Hold.Holds != 0 || st.Hold.AdmissionHolds != 0 || st.Hold.LoadReports != 0 {
		t.Fatalf("hold stats %+v without --max-queue-wait; want no hold and no report taken", st.Hold)
	}
	release()
	waitFor(t, "every task to report done", 30*time.Second, func() bool { return f.okCount() == 2+jobs })
	f.checkExactlyOnce(t, 2+jobs)
}

// taskGate returns a gate for tasks that block until it is closed, and
// the function that closes it once; the test's cleanup closes it too.
func taskGate(t *testing.T) (<-chan struct{}, func()) {
	gate := make(chan struct{})
	var once sync.Once
	release := func() { once.Do(func() { close(gate) }) }
	t.Cleanup(release)
	return gate, release
}
