package integration

import (
	"context"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/sparrowfleet/sparrow/bench/driver"
	"github.com/sparrowfleet/sparrow/bench/fleet"
	"github.com/sparrowfleet/sparrow/client"
	"github.com/sparrowfleet/sparrow/coordinator"
	"github.com/sparrowfleet/sparrow/core/shortjobs"
	"github.com/sparrowfleet/sparrow/internal/membership"
)

// mixedTrace is a workload of short jobs (3 tasks of 40-80 ms) with every
// fifth job long (3 tasks of 1.2 s), arriving every 60 ms: about 1.5 times
// what eight slots run, so queues build. Long jobs' mean is above the
// 0.5 s cutoff of TestShortJobsFaults, short jobs' below.
func mixedTrace(jobs int) *driver.Trace {
	tr := &driver.Trace{Name: "mixed", Scale: 1, Cutoff: 0.5, Estimates: true}
	for i := range jobs {
		j := driver.TraceJob{Line: i + 1, At: time.Duration(i) * 60 * time.Millisecond}
		for k := range 3 {
			d := time.Duration(40+20*((i+k)%3)) * time.Millisecond
			if i%5 == 2 {
				d = 1200 * time.Millisecond
			}
			j.Durations = append(j.Durations, d)
			j.MeanS += d.Seconds() / 3
			tr.WorkS += d.Seconds()
		}
		tr.Tasks += len(j.Durations)
		tr.Jobs = append(tr.Jobs, j)
	}
	return tr
}

// TestShortJobsFaults runs the long-task-aware policy (--short-jobs on
// every scheduler and node monitor) through the fault suite's two
// crashes, with and without a fairness coordinator in the fleet: a mixed
// trace with duration estimates is replayed by the fault suite's driver
// (bench/driver, which resubmits what is reported lost, failed or in
// flight at a failover), a node monitor running tasks with reservations
// queued is killed, and once its running tasks are reported lost the
// driver's scheduler is stopped. Every job must complete, no (request,
// task) may be launched twice, both losses must reach the driver, and the
// policy's long-work adverts must reach a scheduler.
func TestShortJobsFaults(t *testing.T) {
	cases := []struct {
		name        string
		coordinator bool
		host        string // the driver's and coordinator's loopback host
	}{
		{"no coordinator", false, "127.0.3.81"},
		{"with coordinator", true, "127.0.3.82"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			launches := map[string]int{}
			longAt := map[int]time.Time{} // each node monitor's last long task's launch
			f := startFleet(t, fleet.Config{
				Schedulers: 2, NodeMonitors: 4, Slots: 2, Apps: []string{"app"},
				ShortJobs: &shortjobs.Config{Cutoff: 0.5, StarveLimit: shortjobs.DefaultStarveLimit},
				OnLaunch: func(node int, lt client.LaunchedTask) {
					mu.Lock()
					launches[key(lt.Ref.RequestID, lt.Ref.TaskID)]++
					if d, err := time.ParseDuration(string(lt.Message)); err == nil && d >= time.Second {
						longAt[node] = time.Now()
					}
					mu.Unlock()
				},
			})
			launched := func() int {
				mu.Lock()
				defer mu.Unlock()
				return len(launches)
			}
			if tc.coordinator {
				c, err := coordinator.Start(coordinator.Config{
					Name: "coord", Gossip: tc.host + ":0", Join: []string{f.Schedulers[0].Cluster.Addr()},
					GossipProfile: "local", Period: 200 * time.Millisecond, Log: testLogger(t),
				})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { c.Close() })
				waitFor(t, "every node monitor to follow the coordinator's guidance", 20*time.Second, func() bool {
					for _, nm := range f.NodeMonitors {
						if _, ok := nm.GuidanceVersion(); !ok {
							return false
						}
					}
					return true
				})
			}

			// Whether any scheduler heard a long-work advert during the run.
			var adverts sync.WaitGroup
			stopAdverts := make(chan struct{})
			sawLongWork := false
			adverts.Add(1)
			go func() {
				defer adverts.Done()
				tick := time.NewTicker(10 * time.Millisecond)
				defer tick.Stop()
				for {
					for _, m := range f.Schedulers[1].Cluster.Members(membership.RoleNodeMonitor) {
						if m.Meta.LongWork > 0 {
							sawLongWork = true
						}
					}
					select {
					case <-stopAdverts:
						return
					case <-tick.C:
					}
				}
			}()

			tr := mixedTrace(60)
			done := make(chan driver.Summary, 1)
			go func() {
				s, err := driver.Run(context.Background(), driver.Config{
					App: "app", Schedulers: f.SchedulerAddrs(), Listen: tc.host + ":0", AdvertiseHost: tc.host,
					Trace: tr, Slots: f.TotalSlots(), RunID: "sj", Deadline: 60 * time.Second,
					Timeout: 5 * time.Second, Heartbeat: 100 * time.Millisecond,
					Log: testLogger(t), Progress: io.Discard,
				})
				if err != nil {
					t.Errorf("driver: %v", err)
				}
				done <- s
			}()

			// A node monitor that launched a long task less than half of
			// it ago, with reservations queued, is killed: the scheduler
			// re-places the reservations and reports the running task lost.
			victim := -1
			waitFor(t, "a node monitor running a long task with reservations queued", 20*time.Second, func() bool {
				mu.Lock()
				recent := map[int]bool{}
				for i, at := range longAt {
					recent[i] = time.Since(at) < 600*time.Millisecond
				}
				mu.Unlock()
				for i, nm := range f.NodeMonitors {
					if recent[i] && nm.State().Queued > 0 {
						victim = i
						return true
					}
				}
				return false
			})
			f.KillNodeMonitor(victim)
			// Once the driver's scheduler has reported the tasks that ran
			// there lost, it stops: its frontend fails over and the driver
			// resubmits the jobs reported in flight.
			waitFor(t, "the killed node monitor's running tasks to be reported lost", 20*time.Second, func() bool {
				return f.Schedulers[0].Stats().TasksLost > 0
			})
			if err := f.StopScheduler(0); err != nil {
				t.Fatalf("stop scheduler 0: %v", err)
			}

			var s driver.Summary
			select {
			case s = <-done:
			case <-time.After(90 * time.Second):
				t.Fatal("the driver did not return")
			}
			close(stopAdverts)
			adverts.Wait()

			if !s.OK || s.JobsCompleted != s.JobsSubmitted {
				t.Errorf("%d of %d jobs completed (%s)", s.JobsCompleted, s.JobsSubmitted, s.Error)
			}
			mu.Lock()
			for id, n := range launches {
				if n != 1 {
					t.Errorf("task %s launched %d times, want at most once", id, n)
				}
			}
			mu.Unlock()
			if s.LostReports == 0 {
				t.Error("the driver heard of no task lost with the killed node monitor")
			}
			if len(s.Failovers) == 0 {
				t.Error("the driver reported no failover from the stopped scheduler")
			}
			if !sawLongWork {
				t.Error("no scheduler heard a long-work advert while long tasks ran")
			}
			var sticky uint64
			for _, sc := range f.Schedulers {
				sticky += sc.Stats().StickyFetches
			}
			t.Logf("%s: killed node monitor %d, stopped scheduler 0; %d/%d jobs completed, %d launches, %d lost reports, %d resubmitted tasks, %d failovers, %d sticky fetches",
				tc.name, victim, s.JobsCompleted, s.JobsSubmitted, launched(), s.LostReports, s.ResubmittedTasks, len(s.Failovers), sticky)
		})
	}
}
