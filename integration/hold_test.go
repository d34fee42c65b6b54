package integration

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sparrowfleet/sparrow/bench/fleet"
	"github.com/sparrowfleet/sparrow/client"
	"github.com/sparrowfleet/sparrow/core/queue"
	"github.com/sparrowfleet/sparrow/nodemonitor"
	"github.com/sparrowfleet/sparrow/scheduler"
)

// holdFleet is one scheduler that holds submitJob calls and two one-slot
// node monitors with tiny queues, every member on loopback over real
// Thrift, so that a handful of jobs saturates it.
type holdFleet struct {
	sched *scheduler.Daemon
	nms   []*nodemonitor.Daemon

	mu       sync.Mutex
	launches map[string]int // "request/task" -> launches
	msgs     map[string]int // request -> frontend messages
	ok       int            // StatusOK messages
}

const holdApp = "held"

// startHoldFleet starts the fleet: node monitors queue at most maxQueued
// reservations; the scheduler holds at most maxHeld calls for at most
// maxHold; run runs the tasks.
func startHoldFleet(t *testing.T, maxQueued, maxHeld int, maxHold time.Duration, run client.TaskFunc) *holdFleet {
	t.Helper()
	return startHoldFleetConfig(t, scheduler.Config{MaxHeldJobs: maxHeld, MaxHold: maxHold},
		nodemonitor.DaemonConfig{MaxQueued: maxQueued}, run)
}

// startHoldFleetConfig starts the fleet with the scheduler configured by
// cfg (its seed fixed) and each one-slot node monitor by nm's MaxQueued
// and Coordination; run runs the tasks.
func startHoldFleetConfig(t *testing.T, cfg scheduler.Config, nm nodemonitor.DaemonConfig, run client.TaskFunc) *holdFleet {
	t.Helper()
	if testing.Short() {
		t.Skip("integration test; skipped with -short")
	}
	log := testLogger(t)
	f := &holdFleet{launches: map[string]int{}, msgs: map[string]int{}}
	cfg.Seed = 7
	var err error
	f.sched, err = scheduler.StartDaemon(scheduler.DaemonConfig{
		Listen: "127.0.0.1:0", GetTaskListen: "127.0.0.1:0", Gossip: "127.0.0.1:0",
		GossipProfile: "local", Name: "scheduler", Scheduler: cfg, Log: log,
	})
	if err != nil {
		t.Fatalf("start scheduler: %v", err)
	}
	t.Cleanup(func() { f.sched.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for i := range 2 {
		q, err := queue.New("fifo", 1, nil)
		if err != nil {
			t.Fatal(err)
		}
		d, err := nodemonitor.StartDaemon(nodemonitor.DaemonConfig{
			Listen: "127.0.0.1:0", InternalListen: "127.0.0.1:0", Gossip: "127.0.0.1:0",
			Join: []string{f.sched.Cluster.Addr()}, GossipProfile: "local", Name: fmt.Sprintf("nodemonitor-%d", i),
			Slots: 1, Queue: q, MaxQueued: nm.MaxQueued, Coordination: nm.Coordination, Log: log,
		})
		if err != nil {
			t.Fatalf("start node monitor %d: %v", i, err)
		}
		t.Cleanup(func() { d.Close() })
		f.nms = append(f.nms, d)
		b, err := client.NewBackend(ctx, client.BackendConfig{
			App: holdApp, NodeMonitor: d.ServiceAddr(), Listen: "127.0.0.1:0", Run: run,
			OnLaunch: func(lt client.LaunchedTask) {
				f.mu.Lock()
				f.launches[lt.Ref.RequestID+"/"+lt.Ref.TaskID]++
				f.mu.Unlock()
			},
			Log: log,
		})
		if err != nil {
			t.Fatalf("start executor %d: %v", i, err)
		}
		t.Cleanup(func() { b.Close() })
	}
	view := scheduler.NewMembershipView(f.sched.Cluster)
	waitFor(t, "the scheduler to see both node monitors host the app", 20*time.Second, func() bool {
		return len(view.Candidates(holdApp)) == 2
	})
	return f
}

// frontend connects a frontend with call timeout timeout; failovers
// counts its failovers.
func (f *holdFleet) frontend(t *testing.T, timeout time.Duration, failovers *atomic.Int32) *client.Frontend {
	t.Helper()
	fe, err := client.NewFrontend(context.Background(), client.FrontendConfig{
		App: holdApp, Schedulers: []string{f.sched.ServiceAddr()}, Listen: "127.0.0.1:0",
		Timeout: timeout, Log: testLogger(t),
		OnMessage: func(m client.Message) {
			f.mu.Lock()
			f.msgs[m.Task.RequestID]++
			if m.Status == client.StatusOK {
				f.ok++
			}
			f.mu.Unlock()
		},
		OnFailover: func(client.Failover) { failovers.Add(1) },
	})
	if err != nil {
		t.Fatalf("frontend: %v", err)
	}
	t.Cleanup(func() { fe.Close() })
	return fe
}

func (f *holdFleet) okCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.ok
}

// checkExactlyOnce fails the test unless every launched task launched
// once.
func (f *holdFleet) checkExactlyOnce(t *testing.T, want int) {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.launches) != want {
		t.Errorf("%d distinct tasks launched, want %d", len(f.launches), want)
	}
	for k, n := range f.launches {
		if n != 1 {
			t.Errorf("task %s launched %d times", k, n)
		}
	}
}

func tasks(n int, msg string) []client.Task {
	out := make([]client.Task, n)
	for i := range out {
		out[i] = client.Task{ID: fmt.Sprint(i), Message: []byte(msg)}
	}
	return out
}

// TestHoldClosedLoopNeverRefused: a frontend with at most 8 calls in
// flight, the original Java client's pool, offers far more than two
// one-slot node monitors with 4-reservation queues can take. The
// scheduler holds its calls, so it submits at the fleet's pace: no
// refusal, no failover, every task run once.
func TestHoldClosedLoopNeverRefused(t *testing.T) {
	f := startHoldFleet(t, 4, 64, 30*time.Second, fleet.SleepTask)
	var failovers atomic.Int32
	fe := f.frontend(t, time.Second, &failovers)
	const jobs, perJob, inFlight = 40, 2, 8
	var next atomic.Int32
	var refusals atomic.Int32
	var wg sync.WaitGroup
	var longest atomic.Int64
	for range inFlight {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= jobs {
				start := time.Now()
				if _, err := fe.Submit(context.Background(), client.Job{Tasks: tasks(perJob, "20ms")}); err != nil {
					refusals.Add(1)
					t.Errorf("submit: %v", err)
				}
				d := int64(time.Since(start))
				for {
					old := longest.Load()
					if d <= old || longest.CompareAndSwap(old, d) {
						break
					}
				}
			}
		}()
	}
	wg.Wait()
	waitFor(t, "every task to report done", 60*time.Second, func() bool { return f.okCount() == jobs*perJob })
	st := f.sched.Stats()
	t.Logf("holds %d, rounds %d, refused %d, enqueue refusals %d, longest submit %v",
		st.Hold.Holds, st.Hold.Rounds, st.Hold.Refused, st.EnqueueFailures, time.Duration(longest.Load()))
	if st.Hold.Holds == 0 {
		t.Fatalf("no call was held: the fleet never saturated (stats %+v)", st)
	}
	if st.Hold.Refused != 0 || refusals.Load() != 0 || failovers.Load() != 0 {
		t.Fatalf("refused %d at the scheduler, %d submit errors, %d failovers; want none", st.Hold.Refused, refusals.Load(), failovers.Load())
	}
	f.checkExactlyOnce(t, jobs*perJob)
}

// gatedRun is a TaskFunc whose tasks run until gate is closed.
func gatedRun(gate <-chan struct{}) client.TaskFunc {
	return func(ctx context.Context, _ client.LaunchedTask) ([]byte, error) {
		select {
		case <-gate:
		case <-ctx.Done():
		}
		return nil, nil
	}
}

// fill submits one-task jobs until the scheduler holds a call, and
// returns that call's answer channel and how many jobs were accepted
// before it.
func (f *holdFleet) fill(t *testing.T, fe *client.Frontend) (<-chan error, int) {
	t.Helper()
	for accepted := 0; accepted < 20; accepted++ {
		call := make(chan error, 1)
		go func() {
			_, err := fe.Submit(context.Background(), client.Job{Tasks: tasks(1, "")})
			call <- err
		}()
		var err error
		held := false
		waitFor(t, "the job to be accepted or held", 20*time.Second, func() bool {
			select {
			case err = <-call:
				return true
			default:
			}
			held = f.sched.Stats().Hold.Held > 0
			return held
		})
		if held {
			return call, accepted
		}
		if err != nil && strings.Contains(err.Error(), "saturated") {
			// Held and already refused between two looks.
			done := make(chan error, 1)
			done <- err
			return done, accepted
		}
		if err != nil {
			t.Fatalf("submit %d before saturation: %v", accepted, err)
		}
	}
	t.Fatalf("20 jobs accepted and none held: the fleet does not saturate")
	return nil, 0
}

// TestHoldLongerThanCallTimeoutIsNotAFailover: a held call lasts longer
// than the frontend's failure-detection timeout; it is answered once
// capacity frees, with no failover.
func TestHoldLongerThanCallTimeoutIsNotAFailover(t *testing.T) {
	gate, release := taskGate(t)
	f := startHoldFleet(t, 2, 64, 30*time.Second, gatedRun(gate))
	var failovers atomic.Int32
	const timeout = 300 * time.Millisecond
	fe := f.frontend(t, timeout, &failovers)
	call, accepted := f.fill(t, fe)
	// Shape the scenario: keep the fleet full for three call timeouts.
	select {
	case err := <-call:
		t.Fatalf("held call answered while the fleet was full: %v", err)
	case <-time.After(3 * timeout):
	}
	release()
	select {
	case err := <-call:
		if err != nil {
			t.Fatalf("held call: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("held call not answered after capacity freed")
	}
	waitFor(t, "every task to report done", 30*time.Second, func() bool { return f.okCount() == accepted+1 })
	if n := failovers.Load(); n != 0 {
		t.Fatalf("%d failovers during a held call", n)
	}
	f.checkExactlyOnce(t, accepted+1)
}

// TestSaturatedPastMaxHoldIsRefused: with a tiny --max-hold the held call
// is refused, synchronously, with the saturation message and a retry
// delay the driver understands; the refused job never runs and its
// frontend hears nothing about it.
func TestSaturatedPastMaxHoldIsRefused(t *testing.T) {
	gate, release := taskGate(t)
	f := startHoldFleet(t, 2, 64, 100*time.Millisecond, gatedRun(gate))
	var failovers atomic.Int32
	fe := f.frontend(t, 5*time.Second, &failovers)
	call, accepted := f.fill(t, fe)
	var err error
	select {
	case err = <-call:
	case <-time.After(30 * time.Second):
		t.Fatal("held call neither answered nor refused")
	}
	if err == nil {
		t.Fatal("held call accepted while the fleet stayed full; want a saturation refusal")
	}
	if !strings.Contains(err.Error(), "saturated") {
		t.Fatalf("refusal %v does not say the fleet is saturated", err)
	}
	if d, ok := client.ParseRetryAfter(err.Error()); !ok || d <= 0 {
		t.Fatalf("refusal %v suggests no retry delay the driver reads (%v, %v)", err, d, ok)
	}
	if errors.Is(err, client.ErrInDoubt) {
		t.Fatalf("a refusal reported as in doubt: %v", err)
	}
	release()
	waitFor(t, "the accepted jobs' tasks to report done", 30*time.Second, func() bool { return f.okCount() == accepted })
	st := f.sched.Stats()
	if st.Hold.Refused != 1 || st.ActiveRequests != 0 || failovers.Load() != 0 {
		t.Fatalf("refused %d, active %d, failovers %d; stats %+v", st.Hold.Refused, st.ActiveRequests, failovers.Load(), st)
	}
	// The only messages are the accepted jobs' one each: none for the
	// refused job, whose request the scheduler forgot when refusing it.
	f.mu.Lock()
	total := 0
	for _, n := range f.msgs {
		total += n
	}
	f.mu.Unlock()
	if total != accepted {
		t.Fatalf("%d frontend messages for %d accepted one-task jobs", total, accepted)
	}
	f.checkExactlyOnce(t, accepted)
}
