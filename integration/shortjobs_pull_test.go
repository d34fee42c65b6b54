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
	"github.com/sparrowfleet/sparrow/core/shortjobs"
	"github.com/sparrowfleet/sparrow/internal/membership"
)

// TestShortJobsPull runs pulls on a loopback fleet: long tasks fill every
// node monitor, a short job's reservations wait behind them, and the one
// node monitor whose long task ends, holding none of the short job's
// reservations, pulls its tasks from the scheduler's backlog. They all
// finish while the other long tasks still run; every task launches
// exactly once and none is lost.
func TestShortJobsPull(t *testing.T) {
	const (
		nodes     = 4
		shortSize = 2
	)
	led := newLedger()
	release := make(map[string]chan struct{}) // by long task id
	for i := range nodes {
		release[fmt.Sprint(i)] = make(chan struct{})
	}
	var mu sync.Mutex
	longOn := map[int]string{} // node -> long task id
	shortOn := map[int]int{}   // node -> short tasks launched there
	f := startFleet(t, fleet.Config{
		Schedulers: 1, NodeMonitors: nodes, Slots: 1, Apps: []string{"app"}, NoOffers: true, ProbeRatio: 1,
		ShortJobs: &shortjobs.Config{Cutoff: 1, StarveLimit: shortjobs.DefaultStarveLimit},
		ShortPull: 200 * time.Millisecond,
		Run: func(ctx context.Context, lt client.LaunchedTask) ([]byte, error) {
			if lt.Ref.RequestID == "long" {
				select {
				case <-release[lt.Ref.TaskID]:
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			}
			return []byte("done"), nil
		},
		OnLaunch: func(node int, lt client.LaunchedTask) {
			led.launched(node, lt)
			mu.Lock()
			defer mu.Unlock()
			if lt.Ref.RequestID == "long" {
				longOn[node] = lt.Ref.TaskID
			} else {
				shortOn[node]++
			}
		},
	})
	t.Cleanup(func() {
		for _, c := range release {
			select {
			case <-c:
			default:
				close(c)
			}
		}
	})
	fe := ledgerFrontend(t, f, led, "127.0.4.2")
	ctx := context.Background()

	long := client.Job{RequestID: "long", TaskDuration: 30 * time.Second, ProbeRatio: 1}
	for i := range nodes {
		long.Tasks = append(long.Tasks, client.Task{ID: fmt.Sprint(i), Message: []byte("long")})
	}
	if _, err := fe.Submit(ctx, long); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "a long task on every node monitor", 20*time.Second, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(longOn) == nodes
	})

	short := client.Job{RequestID: "short", TaskDuration: 10 * time.Millisecond, ProbeRatio: 1}
	for k := range shortSize {
		short.Tasks = append(short.Tasks, client.Task{ID: fmt.Sprint(k), Message: []byte("short")})
	}
	if _, err := fe.Submit(ctx, short); err != nil {
		t.Fatal(err)
	}
	// Every node monitor hears the backlog and queues a pull; the short
	// job's reservations sit on at most shortSize of them.
	waitFor(t, "every node monitor to queue a pull", 20*time.Second, func() bool {
		for _, nm := range f.NodeMonitors {
			heard := false
			for _, m := range nm.Cluster.Members(membership.RoleScheduler) {
				heard = heard || m.Meta.Backlog > 0
			}
			if !heard || nm.State().Queued == 0 {
				return false
			}
		}
		return true
	})
	free := -1
	for i, nm := range f.NodeMonitors {
		if nm.State().Queued == 1 { // the pull only
			free = i
			break
		}
	}
	if free < 0 {
		t.Fatalf("every node monitor holds a short reservation besides its pull; want one holding only the pull")
	}
	mu.Lock()
	close(release[longOn[free]])
	mu.Unlock()

	// Only node monitor free has a slot: the short tasks run there while
	// the other long tasks still run.
	waitFor(t, "the short tasks' messages", 20*time.Second, func() bool {
		_, m := led.counts()
		return m == 1+shortSize
	})
	mu.Lock()
	if shortOn[free] != shortSize {
		t.Errorf("short tasks launched by node %v, want all %d on node monitor %d", shortOn, shortSize, free)
	}
	mu.Unlock()
	if st := f.Schedulers[0].Stats(); st.PulledTasks == 0 {
		t.Errorf("scheduler stats %+v: no task was pulled", st)
	}

	mu.Lock()
	for id, c := range release {
		if id != longOn[free] {
			close(c)
		}
	}
	mu.Unlock()
	total := nodes + shortSize
	waitFor(t, "every task's message", 20*time.Second, func() bool {
		_, m := led.counts()
		return m == total
	})
	led.checkOnce(t, total)
	waitFor(t, "the backlog advert to clear", 20*time.Second, func() bool {
		for _, nm := range f.NodeMonitors {
			for _, m := range nm.Cluster.Members(membership.RoleScheduler) {
				if m.Meta.Backlog > 0 {
					return false
				}
			}
		}
		return true
	})
}

// TestShortJobsPullApps runs pulls on a loopback fleet shared by two
// apps: the scheduler's advert names the backlogged app, the node
// monitors hosting it queue pulls and one pulls the waiting task, and
// those hosting only the other app hear the advert yet never ask.
func TestShortJobsPullApps(t *testing.T) {
	const (
		appNodes   = 3 // nodes 0..2 host "app", the frontend's
		otherNodes = 2 // the rest host "other" only
	)
	led := newLedger()
	release := make(map[string]chan struct{}) // by long task id
	for i := range appNodes {
		release[fmt.Sprint(i)] = make(chan struct{})
	}
	var mu sync.Mutex
	longOn := map[int]string{} // node -> long task id
	shortOn := map[int]int{}   // node -> short tasks launched there
	f := startFleet(t, fleet.Config{
		Schedulers: 1, NodeMonitors: appNodes + otherNodes, Slots: 1, Apps: []string{"app", "other"},
		NodeApps: func(i int) []string {
			if i < appNodes {
				return []string{"app"}
			}
			return []string{"other"}
		},
		NoOffers: true, ProbeRatio: 1,
		ShortJobs: &shortjobs.Config{Cutoff: 1, StarveLimit: shortjobs.DefaultStarveLimit},
		ShortPull: 200 * time.Millisecond,
		Run: func(ctx context.Context, lt client.LaunchedTask) ([]byte, error) {
			if lt.Ref.RequestID == "long" {
				select {
				case <-release[lt.Ref.TaskID]:
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			}
			return []byte("done"), nil
		},
		OnLaunch: func(node int, lt client.LaunchedTask) {
			led.launched(node, lt)
			mu.Lock()
			defer mu.Unlock()
			if lt.Ref.RequestID == "long" {
				longOn[node] = lt.Ref.TaskID
			} else {
				shortOn[node]++
			}
		},
	})
	t.Cleanup(func() {
		for _, c := range release {
			select {
			case <-c:
			default:
				close(c)
			}
		}
	})
	fe := ledgerFrontend(t, f, led, "127.0.4.3")
	ctx := context.Background()

	long := client.Job{RequestID: "long", TaskDuration: 30 * time.Second, ProbeRatio: 1}
	for i := range appNodes {
		long.Tasks = append(long.Tasks, client.Task{ID: fmt.Sprint(i), Message: []byte("long")})
	}
	if _, err := fe.Submit(ctx, long); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "a long task on every node monitor of app", 20*time.Second, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(longOn) == appNodes
	})
	short := client.Job{RequestID: "short", TaskDuration: 10 * time.Millisecond, ProbeRatio: 1,
		Tasks: []client.Task{{ID: "0", Message: []byte("short")}}}
	if _, err := fe.Submit(ctx, short); err != nil {
		t.Fatal(err)
	}
	// Every node monitor hears the advert for app; those of app queue a
	// pull, one of them besides the short job's reservation.
	waitFor(t, "every node monitor to hear the advert for app, and those of app to queue a pull", 20*time.Second, func() bool {
		queued := 0
		for i, nm := range f.NodeMonitors {
			heard := false
			for _, m := range nm.Cluster.Members(membership.RoleScheduler) {
				heard = heard || (m.Meta.Backlog > 0 && slices.Equal(m.Meta.BacklogApps, []string{"app"}))
			}
			if !heard {
				return false
			}
			if i < appNodes {
				queued += nm.State().Queued
			}
		}
		return queued == appNodes+1
	})
	free := -1
	for i := range appNodes {
		if f.NodeMonitors[i].State().Queued == 1 { // the pull only
			free = i
			break
		}
	}
	if free < 0 {
		t.Fatal("no node monitor of app holds the pull alone")
	}
	mu.Lock()
	close(release[longOn[free]])
	mu.Unlock()
	waitFor(t, "the short task's message", 20*time.Second, func() bool {
		_, m := led.counts()
		return m == 2
	})
	mu.Lock()
	if shortOn[free] != 1 {
		t.Errorf("short task launched on node monitors %v, want on %d, by its pull", shortOn, free)
	}
	for id, c := range release {
		if id != longOn[free] {
			close(c)
		}
	}
	mu.Unlock()
	waitFor(t, "every task's message", 20*time.Second, func() bool {
		_, m := led.counts()
		return m == appNodes+1
	})
	led.checkOnce(t, appNodes+1)
	waitFor(t, "the backlog advert to clear", 20*time.Second, func() bool {
		for _, nm := range f.NodeMonitors {
			for _, m := range nm.Cluster.Members(membership.RoleScheduler) {
				if m.Meta.Backlog > 0 || len(m.Meta.BacklogApps) > 0 {
					return false
				}
			}
		}
		return true
	})
	// Every pull the scheduler answered came from a node monitor of app.
	pulls := make([]uint64, len(f.NodeMonitors))
	waitFor(t, "the scheduler's pull count to match the node monitors'", 20*time.Second, func() bool {
		var all uint64
		for i, nm := range f.NodeMonitors {
			st := nm.State()
			pulls[i] = st.PullTasks + st.PullsEmpty
			all += pulls[i]
		}
		return f.Schedulers[0].Stats().PullsAnswered == all
	})
	if st := f.Schedulers[0].Stats(); st.PulledTasks != 1 || pulls[free] == 0 {
		t.Errorf("scheduler stats %+v, pulls by node monitor %v: want 1 pulled task, by node monitor %d", st, pulls, free)
	}
	for i := appNodes; i < appNodes+otherNodes; i++ {
		if st := f.NodeMonitors[i].State(); pulls[i] != 0 || st.Launches != 0 {
			t.Errorf("node monitor %d, of other only, made %d pulls and %d launches; want none", i, pulls[i], st.Launches)
		}
	}
}
