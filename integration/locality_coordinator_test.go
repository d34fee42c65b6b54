package integration

import (
	"context"
	"fmt"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/sparrowfleet/sparrow/bench/driver"
	"github.com/sparrowfleet/sparrow/bench/fleet"
	"github.com/sparrowfleet/sparrow/client"
	"github.com/sparrowfleet/sparrow/coordinator"
	"github.com/sparrowfleet/sparrow/nodemonitor"
	"github.com/sparrowfleet/sparrow/scheduler"
)

// TestLocalityCoordinatorKilledUnderLoad: the coordinator fault for
// locality guidance, over loopback with a real coordinator. Eight one-slot
// node monitors in two racks; a driver (bench/driver, as `sparrow drive
// --prefer-nodes` runs it) submits jobs whose tasks prefer the 3 replicas
// of Zipf-popular blocks and opt into relaxation. Once the coordinator's
// prices widen tasks, the coordinator is killed mid-load: the scheduler's
// prices go stale (after scheduler.DefaultLocalityStale), no task is
// widened by prices after that and the delay widens tasks instead; a new
// coordinator's prices then guide again. Every job completes, and no task
// is launched twice. (scripts/e2e/locality.sh does the same to a
// containerised fleet, with kills and partitions.)
func TestLocalityCoordinatorKilledUnderLoad(t *testing.T) {
	const period = 200 * time.Millisecond
	var (
		mu       sync.Mutex
		launches = map[string]int{}
	)
	f := startFleet(t, fleet.Config{
		Schedulers: 1, NodeMonitors: 8, Slots: 1, Apps: []string{"app"},
		NodeAttrs:    func(i int) map[string]string { return map[string]string{"rack": fmt.Sprintf("r%d", i/4)} },
		Coordination: nodemonitor.CoordinationConfig{ReportEvery: period, Stale: 10 * period},
		Run: func(ctx context.Context, task client.LaunchedTask) ([]byte, error) {
			d, err := time.ParseDuration(string(task.Message))
			if err != nil {
				return nil, err
			}
			select {
			case <-time.After(d):
				return []byte("ok"), nil
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		},
		OnLaunch: func(_ int, task client.LaunchedTask) {
			mu.Lock()
			launches[key(task.Ref.RequestID, task.Ref.TaskID)]++
			mu.Unlock()
		},
	})
	seed := f.Schedulers[0].Cluster.Addr()
	stats := func() scheduler.LocalityStats { return f.Schedulers[0].Stats().Locality }
	startCoordinator := func(name, gossip string) *coordinator.Daemon {
		d, err := coordinator.Start(coordinator.Config{
			Name: name, Gossip: gossip, Join: []string{seed}, GossipProfile: "local",
			Period: period, Locality: true, Log: testLogger(t),
		})
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	coordA := startCoordinator("coord-a", "127.0.5.41:0")
	killed := false
	t.Cleanup(func() {
		if !killed {
			coordA.Close()
		}
	})
	waitFor(t, "the scheduler to hold prices", 20*time.Second, func() bool { return stats().PricesFresh })

	nodes := make([]string, len(f.NodeMonitors))
	for i, nm := range f.NodeMonitors {
		nodes[i] = nm.Cluster.Name()
	}
	// 8 slots at load 0.6 with 4 tasks of 100 ms: 12 jobs/s for 14 s. The
	// hottest of 10 blocks (Zipf 1.5) is half the tasks: its replica nodes
	// queue, so the prices widen tasks, and without them the 100 ms delay
	// does.
	cfg := driver.Config{
		App: "app", Schedulers: f.SchedulerAddrs(), Listen: "127.0.3.70:0", AdvertiseHost: "127.0.3.70",
		Jobs: 168, Tasks: 4, TaskDuration: 100 * time.Millisecond, Rate: 12, Poisson: true, Seed: 1,
		Deadline: 60 * time.Second, Timeout: 5 * time.Second, Heartbeat: 100 * time.Millisecond,
		User: client.User{Name: "loc"}, Log: testLogger(t), Progress: io.Discard,
		Prefer: driver.Preferences{Nodes: nodes, Racks: 2, Replicas: 3, Blocks: 10, Zipf: 1.5,
			DelayThreshold: 100 * time.Millisecond, InputBytes: 64 << 20},
	}
	done := make(chan driver.Summary, 1)
	go func() {
		s, err := driver.Run(context.Background(), cfg)
		if err != nil {
			t.Errorf("driver: %v", err)
		}
		done <- s
	}()

	waitFor(t, "the prices to widen a task", 20*time.Second, func() bool {
		st := stats()
		return st.WidenedRackByPrices+st.WidenedClusterByPrices > 0
	})
	before := stats()
	killed = true
	killedAt := time.Now()
	coordA.Kill()
	waitFor(t, "the prices to go stale", 20*time.Second, func() bool { return !stats().PricesFresh })
	staleAfter := time.Since(killedAt)
	stale := stats()
	waitFor(t, "the delay to widen a task while the prices are stale", 20*time.Second, func() bool {
		st := stats()
		return st.WidenedRackByDelay+st.WidenedClusterByDelay > stale.WidenedRackByDelay+stale.WidenedClusterByDelay
	})
	during := stats()
	if during.PricesFresh {
		t.Fatal("prices fresh again with no coordinator")
	}
	if p, q := stale.WidenedRackByPrices+stale.WidenedClusterByPrices, during.WidenedRackByPrices+during.WidenedClusterByPrices; p != q {
		t.Fatalf("%d tasks widened by stale prices", q-p)
	}

	coordB := startCoordinator("coord-b", "127.0.5.42:0")
	t.Cleanup(func() { coordB.Close() })
	backAt := time.Now()
	waitFor(t, "the new coordinator's prices", 20*time.Second, func() bool {
		st := stats()
		return st.PricesFresh && st.PricesVersion > before.PricesVersion
	})
	freshAfter := time.Since(backAt)
	waitFor(t, "the new prices to widen a task", 20*time.Second, func() bool {
		st := stats()
		return st.WidenedRackByPrices+st.WidenedClusterByPrices > during.WidenedRackByPrices+during.WidenedClusterByPrices
	})

	var sum driver.Summary
	select {
	case sum = <-done:
	case <-time.After(90 * time.Second):
		t.Fatal("the driver did not finish")
	}
	if !sum.OK || sum.JobsCompleted != cfg.Jobs || sum.DuplicateOKReports != 0 {
		t.Fatalf("driver: ok %v, %d of %d jobs, %d duplicate OK reports: %s", sum.OK, sum.JobsCompleted, cfg.Jobs, sum.DuplicateOKReports, sum.Error)
	}
	mu.Lock()
	n := 0
	for k, c := range launches {
		n += c
		if c > 1 {
			t.Errorf("%s launched %d times", k, c)
		}
	}
	mu.Unlock()
	if n < sum.TasksCompleted {
		t.Errorf("%d launches for %d completed tasks", n, sum.TasksCompleted)
	}
	end := stats()
	t.Logf("prices stale %v after the kill; fresh %v after the new coordinator started; widened by prices %d before the kill, %d in all; "+
		"by the delay %d while stale, %d in all; launches node/rack/cluster %d/%d/%d; %d jobs, %d lost reports",
		staleAfter.Round(time.Millisecond), freshAfter.Round(time.Millisecond),
		before.WidenedRackByPrices+before.WidenedClusterByPrices, end.WidenedRackByPrices+end.WidenedClusterByPrices,
		during.WidenedRackByDelay+during.WidenedClusterByDelay-stale.WidenedRackByDelay-stale.WidenedClusterByDelay,
		end.WidenedRackByDelay+end.WidenedClusterByDelay, end.LaunchedNode, end.LaunchedRack, end.LaunchedCluster,
		sum.JobsCompleted, sum.LostReports)
}
