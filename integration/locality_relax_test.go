package integration

import (
	"context"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/sparrowfleet/sparrow/bench/fleet"
	"github.com/sparrowfleet/sparrow/client"
	"github.com/sparrowfleet/sparrow/core/locality"
	"github.com/sparrowfleet/sparrow/internal/membership"
	"github.com/sparrowfleet/sparrow/internal/pricegossip"
	"github.com/sparrowfleet/sparrow/scheduler"
)

// localityFleet is four one-slot node monitors, nodes 0-1 in rack r0 and
// 2-3 in r1, whose executors run a task whose message is "block" until
// release is closed and any other at once. Node 0 is the busy node every
// test's tasks prefer.
type localityFleet struct {
	f       *fleet.Fleet
	led     *ledger
	fe      *client.Frontend
	release chan struct{}
	// unblock closes release, once.
	unblock func()

	mu         sync.Mutex
	launchedAt map[string]time.Time
}

func startLocalityFleet(t *testing.T, feHost string) *localityFleet {
	t.Helper()
	lf := &localityFleet{led: newLedger(), release: make(chan struct{}), launchedAt: map[string]time.Time{}}
	lf.unblock = sync.OnceFunc(func() { close(lf.release) })
	t.Cleanup(lf.unblock)
	lf.f = startFleet(t, fleet.Config{
		Schedulers: 1, NodeMonitors: 4, Slots: 1, Apps: []string{"app"},
		NodeAttrs: func(i int) map[string]string { return map[string]string{"rack": fmt.Sprintf("r%d", i/2)} },
		Run: func(ctx context.Context, task client.LaunchedTask) ([]byte, error) {
			if string(task.Message) == "block" {
				select {
				case <-lf.release:
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			}
			return []byte("done"), nil
		},
		OnLaunch: func(node int, task client.LaunchedTask) {
			lf.mu.Lock()
			lf.launchedAt[key(task.Ref.RequestID, task.Ref.TaskID)] = time.Now()
			lf.mu.Unlock()
			lf.led.launched(node, task)
		},
	})
	fe, err := client.NewFrontend(context.Background(), client.FrontendConfig{
		App: "app", Schedulers: lf.f.SchedulerAddrs(), Listen: feHost + ":0", AdvertiseHost: feHost,
		OnMessage: lf.led.message, Timeout: 5 * time.Second, Log: testLogger(t),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fe.Close() })
	lf.fe = fe
	return lf
}

// host returns node monitor i's host, which preferences name.
func (lf *localityFleet) host(i int) string {
	h, _, _ := net.SplitHostPort(lf.f.NodeMonitors[i].InternalAddr())
	return h
}

// submit submits a one-task job preferring node 0, relaxable after delay
// when delay > 0, and returns when it was submitted.
func (lf *localityFleet) submit(t *testing.T, id, msg string, delay time.Duration) time.Time {
	t.Helper()
	job := client.Job{RequestID: id, Tasks: []client.Task{{
		ID: "0", Message: []byte(msg), Nodes: []string{lf.host(0)}, DelayThreshold: delay,
	}}}
	at := time.Now()
	if _, err := lf.fe.Submit(context.Background(), job); err != nil {
		t.Fatalf("submit %s: %v", id, err)
	}
	return at
}

// ranOn returns the node job id's task launched on, and how many times
// it launched.
func (lf *localityFleet) ranOn(id string) (node, launches int) {
	lf.led.mu.Lock()
	defer lf.led.mu.Unlock()
	ls := lf.led.launches[key(id, "0")]
	if len(ls) == 0 {
		return -1, 0
	}
	return ls[0].node, len(ls)
}

func (lf *localityFleet) finished(id string) bool {
	lf.led.mu.Lock()
	defer lf.led.mu.Unlock()
	return len(lf.led.messages[key(id, "0")]) > 0
}

// blockNode0 runs a task on node 0 that holds its only slot until
// release is closed.
func (lf *localityFleet) blockNode0(t *testing.T) {
	t.Helper()
	lf.submit(t, "blocker", "block", 0)
	waitFor(t, "the blocker to run on node 0", 20*time.Second, func() bool {
		n, _ := lf.ranOn("blocker")
		return n >= 0
	})
	if n, _ := lf.ranOn("blocker"); n != 0 {
		t.Fatalf("the blocker ran on node %d, not its only preferred node 0", n)
	}
}

func (lf *localityFleet) stats() scheduler.LocalityStats {
	return lf.f.Schedulers[0].Stats().Locality
}

// TestLocalityRelaxAfterDelay: node 0 is busy. A task preferring it that
// opted into relaxation runs elsewhere once its delay has passed; a strict
// one waits for node 0, however long that takes, and runs there.
func TestLocalityRelaxAfterDelay(t *testing.T) {
	lf := startLocalityFleet(t, "127.0.3.60")
	lf.blockNode0(t)

	const delay = 300 * time.Millisecond
	lf.submit(t, "strict", "quick", 0)
	submitted := lf.submit(t, "relaxed", "quick", delay)
	waitFor(t, "the relaxed task to finish", 20*time.Second, func() bool { return lf.finished("relaxed") })

	node, n := lf.ranOn("relaxed")
	if node == 0 || n != 1 {
		t.Fatalf("relaxed task launched %d times, first on node %d; want once, away from the busy node 0", n, node)
	}
	lf.mu.Lock()
	waited := lf.launchedAt[key("relaxed", "0")].Sub(submitted)
	lf.mu.Unlock()
	if waited < delay {
		t.Fatalf("relaxed task launched %v after submission, before its %v delay", waited, delay)
	}
	if _, n := lf.ranOn("strict"); n != 0 {
		t.Fatal("the strict task launched while its only preferred node was busy")
	}
	st := lf.stats()
	if st.WidenedRackByDelay != 1 || st.WidenedRackByPrices+st.WidenedClusterByPrices != 0 {
		t.Fatalf("locality stats %+v: want one rack widening by delay and none by prices", st)
	}
	wantLevel := map[int]string{1: "rack", 2: "cluster", 3: "cluster"}[node]
	if (wantLevel == "rack" && st.LaunchedRack != 1) || (wantLevel == "cluster" && st.LaunchedCluster != 1) {
		t.Fatalf("locality stats %+v: the relaxed task ran on node %d, a %s-level launch not counted", st, node, wantLevel)
	}
	t.Logf("relaxed task ran on node %d (%s level) %v after submission", node, wantLevel, waited)

	lf.unblock()
	waitFor(t, "the strict task to finish", 20*time.Second, func() bool { return lf.finished("strict") })
	if node, n := lf.ranOn("strict"); node != 0 || n != 1 {
		t.Fatalf("strict task launched %d times, first on node %d; want once on node 0", n, node)
	}
	if node, n := lf.ranOn("blocker"); node != 0 || n != 1 {
		t.Fatalf("blocker launched %d times, first on node %d", n, node)
	}
	waitFor(t, "the scheduler to count the strict launch", 5*time.Second, func() bool { return lf.stats().LaunchedNode == 2 })
}

// TestLocalityGuidedByGossipedPrices: prices gossiped to the scheduler
// that make the busy node dear move a relaxable task at once, long before
// its delay; once the prices stop coming (a dead coordinator) and go
// stale, the next task waits for its delay again.
func TestLocalityGuidedByGossipedPrices(t *testing.T) {
	lf := startLocalityFleet(t, "127.0.3.61")
	lf.blockNode0(t)

	// A stand-in coordinator: a gossip member sending prices to the
	// scheduler, as the coordinator does each period.
	coord, err := membership.Start(membership.Config{
		Name: "locality-coordinator", Bind: "127.0.5.40:0", Seeds: []string{lf.f.Schedulers[0].Cluster.Addr()},
		Profile: "local", Meta: membership.Meta{Role: membership.RoleObserver}, Log: testLogger(t),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { coord.Leave(0) })
	prices := locality.Prices{
		Node:    map[string]int64{"nodemonitor-0": 1000, "nodemonitor-1": 0, "nodemonitor-2": 0, "nodemonitor-3": 0},
		Rack:    map[string]int64{"r0": 0, "r1": 0},
		Cluster: 0, RackPerGB: 10, CorePerGB: 40,
	}
	stop := make(chan struct{})
	sent := make(chan struct{})
	go func() {
		defer close(sent)
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for v := uint64(1); ; v++ {
			prices.Version = v
			b, err := pricegossip.Encode(prices)
			if err != nil {
				t.Error(err)
				return
			}
			_ = coord.SendTo("scheduler-0", b) // fails until gossip has met the scheduler
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()
	stopPrices := sync.OnceFunc(func() { close(stop); <-sent })
	t.Cleanup(stopPrices)
	waitFor(t, "the scheduler to hold fresh prices", 20*time.Second, func() bool { return lf.stats().PricesFresh })

	lf.submit(t, "guided", "quick", time.Hour)
	waitFor(t, "the guided task to finish", 20*time.Second, func() bool { return lf.finished("guided") })
	if node, n := lf.ranOn("guided"); node != 1 || n != 1 {
		t.Fatalf("guided task launched %d times, first on node %d; want once on node 1, the busy node's rack-mate (rack 1 < cluster 5 < node 1000)", n, node)
	}
	if st := lf.stats(); st.WidenedRackByPrices != 1 || st.LaunchedRack != 1 || st.WidenedRackByDelay != 0 {
		t.Fatalf("locality stats %+v: want one rack widening by prices and one rack-local launch", st)
	}

	// The coordinator dies: its prices go stale and stop guiding.
	stopPrices()
	waitFor(t, "the prices to go stale", 20*time.Second, func() bool { return !lf.stats().PricesFresh })
	const delay = 300 * time.Millisecond
	submitted := lf.submit(t, "fallback", "quick", delay)
	waitFor(t, "the fallback task to finish", 20*time.Second, func() bool { return lf.finished("fallback") })
	lf.mu.Lock()
	waited := lf.launchedAt[key("fallback", "0")].Sub(submitted)
	lf.mu.Unlock()
	if node, n := lf.ranOn("fallback"); node == 0 || n != 1 || waited < delay {
		t.Fatalf("fallback task launched %d times, first on node %d after %v; want once, away from node 0, after its %v delay", n, node, waited, delay)
	}
	if st := lf.stats(); st.WidenedRackByPrices != 1 || st.WidenedRackByDelay != 1 {
		t.Fatalf("locality stats %+v: want the fallback task widened by its delay", st)
	}
	lf.unblock()
	waitFor(t, "the blocker to finish", 20*time.Second, func() bool { return lf.finished("blocker") })
}
