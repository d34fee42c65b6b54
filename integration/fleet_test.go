package integration

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/sparrowfleet/sparrow/bench/fleet"
	"github.com/sparrowfleet/sparrow/client"
)

// TestFleetEndToEnd runs 240 jobs of 10 tasks through 2 schedulers and 5
// node monitors, and checks the whole request path: every task launched
// exactly once, on a node monitor that hosts its app; every job completed;
// every frontend message delivered, once, with its task's own body; and all
// scheduler and node monitor state drained afterwards.
func TestFleetEndToEnd(t *testing.T) {
	const (
		jobsPerFrontend = 120
		tasksPerJob     = 10
	)
	apps := []string{"wide", "narrow"}
	// "narrow" runs only on node monitors 0 and 1, so a launch elsewhere
	// would be a placement bug.
	nodeApps := func(i int) []string {
		if i < 2 {
			return apps
		}
		return apps[:1]
	}
	led := newLedger()
	f := startFleet(t, fleet.Config{
		Schedulers: 2, NodeMonitors: 5, Slots: 4, Apps: apps, NodeApps: nodeApps,
		Run: echoTask(2 * time.Millisecond), OnLaunch: led.launched,
	})

	addrs := f.SchedulerAddrs()
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, len(apps))
	for i, app := range apps {
		// Each frontend prefers its own scheduler, so both schedulers work.
		fe, err := client.NewFrontend(ctx, client.FrontendConfig{
			App: app, Schedulers: []string{addrs[i], addrs[1-i]},
			Listen: fmt.Sprintf("127.0.3.%d:0", i+1), AdvertiseHost: fmt.Sprintf("127.0.3.%d", i+1),
			OnMessage: led.message, Log: testLogger(t),
			// This test is about the request path, not failure detection:
			// a slow race-detector run must not look like a dead scheduler.
			Timeout: 5 * time.Second,
		})
		if err != nil {
			t.Fatalf("frontend %s: %v", app, err)
		}
		t.Cleanup(func() { fe.Close() })
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < jobsPerFrontend; j++ {
				if _, err := fe.Submit(ctx, newJob(fmt.Sprintf("%s-%d", app, j), tasksPerJob)); err != nil {
					errs <- fmt.Errorf("submit %s job %d: %w", app, j, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}

	total := len(apps) * jobsPerFrontend * tasksPerJob
	waitFor(t, "every frontend message", 60*time.Second, func() bool {
		_, m := led.counts()
		return m == total
	})

	led.mu.Lock()
	defer led.mu.Unlock()
	if len(led.launches) != total {
		t.Errorf("launched %d distinct tasks, want %d", len(led.launches), total)
	}
	for _, app := range apps {
		for j := 0; j < jobsPerFrontend; j++ {
			for k := 0; k < tasksPerJob; k++ {
				id := key(fmt.Sprintf("%s-%d", app, j), fmt.Sprint(k))
				ls := led.launches[id]
				if len(ls) != 1 {
					t.Errorf("task %s launched %d times, want exactly once", id, len(ls))
					continue
				}
				if !slices.Contains(nodeApps(ls[0].node), app) || ls[0].app != app {
					t.Errorf("task %s of app %s launched on node monitor %d, which does not host it", id, app, ls[0].node)
				}
				ms := led.messages[id]
				want := fmt.Sprintf("done:%s:m%d", id, k)
				if len(ms) != 1 || string(ms[0].Body) != want || ms[0].Status != client.StatusOK {
					t.Errorf("task %s: messages %v, want one %q", id, ms, want)
				}
			}
		}
	}

	// Drained: no scheduler keeps request state, no node monitor keeps a
	// slot or a reservation.
	waitFor(t, "schedulers and node monitors to drain", 10*time.Second, func() bool {
		for _, s := range f.Schedulers {
			if s.Stats().ActiveRequests != 0 {
				return false
			}
		}
		for _, n := range f.NodeMonitors {
			st := n.State()
			if st.Free != st.Slots || st.Queued != 0 {
				return false
			}
		}
		return true
	})
	var launches uint64
	for _, n := range f.NodeMonitors {
		launches += n.State().Launches
	}
	if launches != uint64(total) {
		t.Errorf("node monitors launched %d tasks, want %d", launches, total)
	}
}

// TestFrontendFailover stops the scheduler a frontend is using while its
// jobs run, and checks that the frontend fails over to the other scheduler,
// reports exactly the jobs that were in flight, and keeps working there.
func TestFrontendFailover(t *testing.T) {
	led := newLedger()
	f := startFleet(t, fleet.Config{
		Schedulers: 2, NodeMonitors: 3, Slots: 4, Apps: []string{"app"},
		Run: echoTask(300 * time.Millisecond), OnLaunch: led.launched,
	})
	addrs := f.SchedulerAddrs()
	failovers := make(chan client.Failover, 4)
	ctx := context.Background()
	fe, err := client.NewFrontend(ctx, client.FrontendConfig{
		App: "app", Schedulers: addrs, Listen: "127.0.3.9:0", AdvertiseHost: "127.0.3.9",
		OnMessage: led.message, OnFailover: func(ev client.Failover) { failovers <- ev },
		Log: testLogger(t),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fe.Close() })
	if fe.Scheduler() != addrs[0] {
		t.Fatalf("frontend started on %s, want the first scheduler %s", fe.Scheduler(), addrs[0])
	}

	var before []string
	for i := 0; i < 3; i++ {
		id, err := fe.Submit(ctx, newJob(fmt.Sprintf("before-%d", i), 2))
		if err != nil {
			t.Fatal(err)
		}
		before = append(before, id)
	}
	waitFor(t, "the first launches", 10*time.Second, func() bool {
		l, _ := led.counts()
		return l > 0
	})

	stopped := time.Now()
	if err := f.StopScheduler(0); err != nil {
		t.Fatalf("stop scheduler 0: %v", err)
	}
	var ev client.Failover
	select {
	case ev = <-failovers:
	case <-time.After(10 * time.Second):
		t.Fatal("no failover reported within 10s of stopping the scheduler")
	}
	t.Logf("failover detected %v after the stop, reconnected %v later",
		ev.DetectedAt.Sub(stopped), ev.Reconnected.Sub(ev.DetectedAt))
	if ev.From != addrs[0] || ev.To != addrs[1] {
		t.Errorf("failover from %s to %s, want %s to %s", ev.From, ev.To, addrs[0], addrs[1])
	}
	var reported []string
	for _, j := range ev.InFlight {
		reported = append(reported, j.RequestID)
	}
	slices.Sort(reported)
	if !slices.Equal(reported, before) {
		t.Errorf("in-flight jobs reported %v, want %v", reported, before)
	}
	if fe.Scheduler() != addrs[1] {
		t.Errorf("frontend now uses %s, want %s", fe.Scheduler(), addrs[1])
	}

	// The application resubmits the lost jobs as new ones; they complete
	// through the surviving scheduler.
	for _, j := range ev.InFlight {
		j.RequestID = "retry-" + j.RequestID
		if _, err := fe.Submit(ctx, j); err != nil {
			t.Fatalf("resubmit %s: %v", j.RequestID, err)
		}
	}
	waitFor(t, "resubmitted jobs to finish", 15*time.Second, func() bool {
		led.mu.Lock()
		defer led.mu.Unlock()
		for _, id := range before {
			for k := 0; k < 2; k++ {
				if len(led.messages[key("retry-"+id, fmt.Sprint(k))]) != 1 {
					return false
				}
			}
		}
		return true
	})
	if n := len(fe.InFlight()); n != 0 {
		t.Errorf("%d jobs still in flight after all finished", n)
	}
}
