package integration

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/sparrowfleet/sparrow/bench/fleet"
	"github.com/sparrowfleet/sparrow/client"
	"github.com/sparrowfleet/sparrow/core/shortjobs"
	"github.com/sparrowfleet/sparrow/internal/membership"
)

// TestShortJobsSteeredFromLongWork runs the long-task-aware policy on a
// loopback fleet: long tasks run on some node monitors, which gossip
// their long work; the short jobs submitted then run only on the others,
// and every task of both launches exactly once.
func TestShortJobsSteeredFromLongWork(t *testing.T) {
	const (
		nodes     = 6
		longTasks = 3
		shortJobs = 20
		shortSize = 2
	)
	led := newLedger()
	var mu sync.Mutex
	longOn := map[int]bool{}
	var shortOnLong []string
	f := startFleet(t, fleet.Config{
		Schedulers: 1, NodeMonitors: nodes, Slots: 1, Apps: []string{"app"}, NoOffers: true,
		ShortJobs: &shortjobs.Config{Cutoff: 1, StarveLimit: shortjobs.DefaultStarveLimit},
		OnLaunch: func(node int, lt client.LaunchedTask) {
			led.launched(node, lt)
			mu.Lock()
			defer mu.Unlock()
			if lt.Ref.RequestID == "long" {
				longOn[node] = true
			} else if longOn[node] {
				shortOnLong = append(shortOnLong, fmt.Sprintf("%s/%s on node monitor %d", lt.Ref.RequestID, lt.Ref.TaskID, node))
			}
		},
	})
	fe := ledgerFrontend(t, f, led, "127.0.4.1")
	ctx := context.Background()

	// Long work: three tasks that run until the test has checked where
	// the short ones went.
	long := client.Job{RequestID: "long", TaskDuration: 30 * time.Second, ProbeRatio: 1}
	for i := range longTasks {
		long.Tasks = append(long.Tasks, client.Task{ID: fmt.Sprint(i), Message: []byte("8s")})
	}
	if _, err := fe.Submit(ctx, long); err != nil {
		t.Fatal(err)
	}
	// The scheduler hears of the long work through gossip.
	waitFor(t, "the long work's adverts to reach the scheduler", 20*time.Second, func() bool {
		busy := 0
		for _, m := range f.Schedulers[0].Cluster.Members(membership.RoleNodeMonitor) {
			if m.Meta.LongWork > 0 {
				busy++
			}
		}
		return busy == longTasks
	})

	for j := range shortJobs {
		job := client.Job{RequestID: fmt.Sprintf("short-%d", j), TaskDuration: 10 * time.Millisecond, ProbeRatio: 1.5}
		for k := range shortSize {
			job.Tasks = append(job.Tasks, client.Task{ID: fmt.Sprint(k), Message: []byte("10ms")})
		}
		if _, err := fe.Submit(ctx, job); err != nil {
			t.Fatal(err)
		}
	}
	total := longTasks + shortJobs*shortSize
	waitFor(t, "every short task's message", 30*time.Second, func() bool {
		_, m := led.counts()
		return m >= total-longTasks
	})
	mu.Lock()
	if len(shortOnLong) > 0 {
		t.Errorf("short tasks launched on node monitors running long work: %v", shortOnLong)
	}
	mu.Unlock()
	waitFor(t, "the long tasks' messages", 30*time.Second, func() bool {
		_, m := led.counts()
		return m == total
	})
	led.checkOnce(t, total)
	// Once idle, no node monitor advertises long work.
	waitFor(t, "the adverts to clear", 20*time.Second, func() bool {
		for _, m := range f.Schedulers[0].Cluster.Members(membership.RoleNodeMonitor) {
			if m.Meta.LongWork > 0 {
				return false
			}
		}
		return true
	})
}

// TestShortJobsWorkRefreshOverThrift: under the policy a scheduler sends
// a job's remaining work to the node monitors holding its reservations
// (updateRemainingWork) as its tasks launch, and they apply it; every
// task launches once.
func TestShortJobsWorkRefreshOverThrift(t *testing.T) {
	const nodes, tasks = 4, 16
	led := newLedger()
	f := startFleet(t, fleet.Config{
		Schedulers: 1, NodeMonitors: nodes, Slots: 1, Apps: []string{"app"}, NoOffers: true,
		ShortJobs: &shortjobs.Config{Cutoff: 10, StarveLimit: shortjobs.DefaultStarveLimit, WorkRefresh: true},
		OnLaunch:  led.launched,
	})
	fe := ledgerFrontend(t, f, led, "127.0.4.3")
	// Two reservations a task on four one-slot node monitors: most wait
	// queued while the job's tasks launch.
	job := client.Job{RequestID: "big", TaskDuration: 20 * time.Millisecond, ProbeRatio: 2}
	for k := range tasks {
		job.Tasks = append(job.Tasks, client.Task{ID: fmt.Sprint(k), Message: []byte("20ms")})
	}
	if _, err := fe.Submit(context.Background(), job); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "every task's message", 30*time.Second, func() bool {
		_, m := led.counts()
		return m == tasks
	})
	led.checkOnce(t, tasks)
	st := f.Schedulers[0].Stats()
	var applied uint64
	for _, nm := range f.NodeMonitors {
		applied += nm.State().WorkUpdates
	}
	if st.WorkUpdatesSent == 0 || st.WorkUpdatesFailed != 0 || applied == 0 || applied > st.WorkUpdatesSent {
		t.Fatalf("updates: %d sent in %d calls, %d failed; %d applied by the node monitors", st.WorkUpdatesSent, st.WorkUpdateCalls, st.WorkUpdatesFailed, applied)
	}
	t.Logf("updates: %d sent in %d calls, %d applied", st.WorkUpdatesSent, st.WorkUpdateCalls, applied)
}
