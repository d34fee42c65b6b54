package integration

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/sparrowfleet/sparrow/bench/fleet"
	"github.com/sparrowfleet/sparrow/client"
	"github.com/sparrowfleet/sparrow/core/shortjobs"
	"github.com/sparrowfleet/sparrow/internal/membership"
)

// pullRig holds each long task on a loopback fleet's node monitors until
// released, and records where long and short tasks launched; it gives
// the fleet its Run and OnLaunch. Its methods are safe for concurrent use.
type pullRig struct {
	led     *ledger
	mu      sync.Mutex
	release map[string]chan struct{} // by long task id
	longOn  map[int]string           // node -> long task id
	shortOn map[int]int              // node -> short tasks launched there
}

// newPullRig returns a rig for a long job of longTasks tasks, "0" up.
func newPullRig(longTasks int) *pullRig {
	p := &pullRig{led: newLedger(), release: map[string]chan struct{}{}, longOn: map[int]string{}, shortOn: map[int]int{}}
	for i := range longTasks {
		p.release[fmt.Sprint(i)] = make(chan struct{})
	}
	return p
}

// run is the executors' task: a long task runs until released.
func (p *pullRig) run(ctx context.Context, lt client.LaunchedTask) ([]byte, error) {
	if lt.Ref.RequestID == "long" {
		p.mu.Lock()
		c := p.release[lt.Ref.TaskID]
		p.mu.Unlock()
		select {
		case <-c:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return []byte("done"), nil
}

func (p *pullRig) onLaunch(node int, lt client.LaunchedTask) {
	p.led.launched(node, lt)
	p.mu.Lock()
	defer p.mu.Unlock()
	if lt.Ref.RequestID == "long" {
		p.longOn[node] = lt.Ref.TaskID
	} else {
		p.shortOn[node]++
	}
}

// releaseAtEnd releases every long task when the test ends, before the
// fleet (started earlier) stops.
func (p *pullRig) releaseAtEnd(t *testing.T) {
	t.Cleanup(func() { p.releaseAllBut(-1) })
}

// submitLong submits the long job through fe and waits until each of its
// tasks runs on a node monitor of its own.
func (p *pullRig) submitLong(t *testing.T, fe *client.Frontend) {
	t.Helper()
	long := client.Job{RequestID: "long", TaskDuration: 30 * time.Second, ProbeRatio: 1}
	for i := range len(p.release) {
		long.Tasks = append(long.Tasks, client.Task{ID: fmt.Sprint(i), Message: []byte("long")})
	}
	if _, err := fe.Submit(context.Background(), long); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "a long task on each node monitor it may run on", 20*time.Second, func() bool {
		p.mu.Lock()
		defer p.mu.Unlock()
		return len(p.longOn) == len(p.release)
	})
}

// releaseOn ends the long task on node monitor node.
func (p *pullRig) releaseOn(node int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	closeOnce(p.release[p.longOn[node]])
}

// releaseAllBut ends every long task but the one on node monitor node.
func (p *pullRig) releaseAllBut(node int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for id, c := range p.release {
		if on, ok := p.longOn[node]; !ok || id != on {
			closeOnce(c)
		}
	}
}

// shortLaunches returns how many short tasks launched on each node monitor.
func (p *pullRig) shortLaunches() map[int]int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return maps.Clone(p.shortOn)
}

func closeOnce(c chan struct{}) {
	select {
	case <-c:
	default:
		close(c)
	}
}

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
	p := newPullRig(nodes)
	led := p.led
	f := startFleet(t, fleet.Config{
		Schedulers: 1, NodeMonitors: nodes, Slots: 1, Apps: []string{"app"}, NoOffers: true, ProbeRatio: 1,
		ShortJobs: &shortjobs.Config{Cutoff: 1, StarveLimit: shortjobs.DefaultStarveLimit},
		ShortPull: 200 * time.Millisecond,
		Run:       p.run, OnLaunch: p.onLaunch,
	})
	p.releaseAtEnd(t)
	fe := ledgerFrontend(t, f, led, "127.0.4.2")
	ctx := context.Background()
	p.submitLong(t, fe)

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
	p.releaseOn(free)

	// Only node monitor free has a slot: the short tasks run there while
	// the other long tasks still run.
	waitFor(t, "the short tasks' messages", 20*time.Second, func() bool {
		_, m := led.counts()
		return m == 1+shortSize
	})
	if on := p.shortLaunches(); on[free] != shortSize {
		t.Errorf("short tasks launched by node %v, want all %d on node monitor %d", on, shortSize, free)
	}
	if st := f.Schedulers[0].Stats(); st.PulledTasks == 0 {
		t.Errorf("scheduler stats %+v: no task was pulled", st)
	}

	p.releaseAllBut(free)
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
	p := newPullRig(appNodes)
	led := p.led
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
		Run:       p.run, OnLaunch: p.onLaunch,
	})
	p.releaseAtEnd(t)
	fe := ledgerFrontend(t, f, led, "127.0.4.3")
	ctx := context.Background()
	p.submitLong(t, fe)
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
	p.releaseOn(free)
	waitFor(t, "the short task's message", 20*time.Second, func() bool {
		_, m := led.counts()
		return m == 2
	})
	if on := p.shortLaunches(); on[free] != 1 {
		t.Errorf("short task launched on node monitors %v, want on %d, by its pull", on, free)
	}
	p.releaseAllBut(free)
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
