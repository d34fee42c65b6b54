package integration

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/sparrowfleet/sparrow/bench/fleet"
	"github.com/sparrowfleet/sparrow/client"
	"github.com/sparrowfleet/sparrow/coordinator"
	"github.com/sparrowfleet/sparrow/nodemonitor"
)

// TestCoordinatorTakeoverAndFallback runs a fleet of Choosy node monitors
// with two coordinators. The lower-named one publishes and the other
// stands by; when the first is killed the second takes over; when both
// are gone every node monitor falls back to local decisions after the
// staleness bound. Work keeps flowing throughout and no task launches
// twice.
func TestCoordinatorTakeoverAndFallback(t *testing.T) {
	const period = 200 * time.Millisecond
	// Each user submits a one-task job every pace, each task running
	// taskRun, twice pace: each user always has a task running, so every
	// node monitor report the coordinator takes, at whatever phase, can
	// see both users. (Four-task jobs every 100 ms of 50 ms tasks left
	// each user idle half of every 100 ms; reports every 200 ms then fell
	// at the same phase each time, and whether they saw a user depended on
	// how fast its tasks launched: the test failed now and then, more
	// often with offers, which launch sooner.) Two slots' worth per user,
	// half the fleet's high-memory slots and a quarter of the rest, so no
	// queue grows.
	const pace, taskRun = 50 * time.Millisecond, 100 * time.Millisecond
	led := newLedger()
	f := startFleet(t, fleet.Config{
		Schedulers: 1, NodeMonitors: 4, Slots: 2, Apps: []string{"app"}, Queue: "choosy",
		NodeAttrs: func(i int) map[string]string {
			if i < 2 {
				return map[string]string{"mem": "high"}
			}
			return map[string]string{"mem": "std"}
		},
		Coordination: nodemonitor.CoordinationConfig{ReportEvery: period, Stale: 5 * period},
		Run:          echoTask(taskRun), OnLaunch: led.launched,
	})
	seed := f.Schedulers[0].Cluster.Addr()
	a := startCoordinator(t, "coord-a", "127.0.5.1", seed, period)
	b := startCoordinator(t, "coord-b", "127.0.5.2", seed, period)
	closed := map[*coordinator.Daemon]bool{}
	t.Cleanup(func() {
		for _, d := range []*coordinator.Daemon{a, b} {
			if !closed[d] {
				d.Close()
			}
		}
	})

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	fe, err := client.NewFrontend(ctx, client.FrontendConfig{
		App: "app", Schedulers: f.SchedulerAddrs(), Listen: "127.0.3.20:0", AdvertiseHost: "127.0.3.20",
		OnMessage: led.message, Log: testLogger(t), Timeout: 5 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fe.Close() })
	// Two users keep work on the fleet until stop is closed (at most
	// maxJobs each, one every pace): spark only on high-memory nodes,
	// hadoop anywhere. Work must still be there when each coordinator's
	// users are checked, however long the machine takes to get there.
	const maxJobs = 2000
	sub := newSubmitter(t, ctx, fe, pace)
	userJob := func(user string, constrained bool) func(j int) client.Job {
		return func(j int) client.Job {
			job := newJob(fmt.Sprintf("%s-%d", user, j), 1)
			job.User = client.User{Name: user}
			if constrained {
				job.Constraints = []client.Constraint{{Key: "mem", Op: "=", Values: []string{"high"}}}
			}
			return job
		}
	}
	guided := func(want bool) func() bool {
		return func() bool {
			for _, nm := range f.NodeMonitors {
				if _, ok := nm.GuidanceVersion(); ok != want {
					return false
				}
			}
			return true
		}
	}
	sub.run(maxJobs, userJob("spark", true))
	sub.run(maxJobs, userJob("hadoop", false))

	waitFor(t, "every node monitor to follow coordinator-a", 20*time.Second, guided(true))
	if !waitUntil(20*time.Second, func() bool { return a.Stats().Users == 2 }) {
		// Say what each side saw, so that a failure on a loaded CI
		// machine explains itself.
		t.Logf("coordinator-a: %+v", a.Stats())
		for i, nm := range f.NodeMonitors {
			t.Logf("node monitor %d: usage %+v, state %+v", i, nm.Usage(), nm.State())
		}
		st := f.Schedulers[0].Scheduler.Stats()
		t.Logf("scheduler: jobs %d, tasks launched %d of %d, active requests %d, hold %+v", st.JobsSubmitted, st.TasksLaunched, st.TasksSubmitted, st.ActiveRequests, st.Hold)
		t.Logf("submitted %d tasks", sub.total())
		t.Fatal("timed out after 20s waiting for coordinator-a to see both users' work")
	}
	if !a.Stats().Active || b.Stats().Active {
		t.Fatalf("active: a %v, b %v; want a only", a.Stats().Active, b.Stats().Active)
	}
	versionA, _ := f.NodeMonitors[0].GuidanceVersion()

	a.Kill()
	closed[a] = true
	waitFor(t, "coordinator-b to take over with both users' work", 20*time.Second, func() bool {
		st := b.Stats()
		return st.Active && st.Published > 0 && st.Users == 2
	})
	waitFor(t, "node monitors to follow coordinator-b", 20*time.Second, func() bool {
		for _, nm := range f.NodeMonitors {
			if v, ok := nm.GuidanceVersion(); !ok || v <= versionA {
				return false
			}
		}
		return true
	})
	t.Logf("coordinator-b: %+v", b.Stats())
	sub.stop()

	b.Close()
	closed[b] = true
	waitFor(t, "node monitors to fall back to local decisions", 20*time.Second, guided(false))

	want := sub.wait()
	waitFor(t, "every task's message", 60*time.Second, func() bool {
		_, m := led.counts()
		return m == want
	})
	led.mu.Lock()
	defer led.mu.Unlock()
	for id, ls := range led.launches {
		if len(ls) != 1 {
			t.Errorf("task %s launched %d times", id, len(ls))
		}
		if len(id) > 5 && id[:5] == "spark" && ls[0].node >= 2 {
			t.Errorf("constrained task %s ran on node monitor %d (mem=std)", id, ls[0].node)
		}
	}
}
