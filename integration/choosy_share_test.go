package integration

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/sparrowfleet/sparrow/bench/fleet"
	"github.com/sparrowfleet/sparrow/client"
	"github.com/sparrowfleet/sparrow/coordinator"
	"github.com/sparrowfleet/sparrow/nodemonitor"
)

// TestChoosyGivesTheConstrainedUserItsCMMFShare is the Choosy paper's
// motivating case on a live fleet: 4 node monitors x 4 slots, one of them
// high-memory; spark may run only there, hadoop anywhere, both
// backlogged. CMMF gives spark the whole high-memory node (4 of 16 slots);
// per-node fair queues split it, giving spark 2. With a coordinator, both
// Choosy queues and fair queues taking its CMMF weights give spark its
// CMMF share.
func TestChoosyGivesTheConstrainedUserItsCMMFShare(t *testing.T) {
	fair := sparkSlots(t, "fair", false, false)
	choosy := sparkSlots(t, "choosy", true, false)
	weighted := sparkSlots(t, "fair", true, true)
	t.Logf("spark's mean running slots on the high-memory node: fair queues %.2f, Choosy with a coordinator %.2f, fair queues with the coordinator's CMMF weights %.2f (CMMF: 4, per-node fair: 2)", fair, choosy, weighted)
	if fair > 3 {
		t.Errorf("per-node fair queues gave spark %.2f slots; want about 2", fair)
	}
	if choosy < 3.5 {
		t.Errorf("Choosy with a coordinator gave spark %.2f slots; want its CMMF share, about 4", choosy)
	}
	if weighted < 3.5 {
		t.Errorf("CMMF weights gave spark %.2f slots; want its CMMF share, about 4", weighted)
	}
}

// sparkSlots runs the two backlogged users on a fleet with the given
// queue discipline, with or without a coordinator, and returns spark's
// mean running tasks sampled over a steady window.
func sparkSlots(t *testing.T, queue string, coordinated, cmmfWeights bool) float64 {
	const period = 200 * time.Millisecond
	cfg := fleet.Config{
		Schedulers: 1, NodeMonitors: 4, Slots: 4, Apps: []string{"app"}, Queue: queue,
		NodeAttrs: func(i int) map[string]string {
			if i == 0 {
				return map[string]string{"mem": "high"}
			}
			return map[string]string{"mem": "std"}
		},
		Coordination: nodemonitor.CoordinationConfig{ReportEvery: period, Stale: 10 * period, Weights: cmmfWeights},
		Run:          echoTask(100 * time.Millisecond),
	}
	f := startFleet(t, cfg)
	if coordinated {
		d, err := coordinator.Start(coordinator.Config{
			Name: "coord", Gossip: "127.0.5.9:0", Join: []string{f.Schedulers[0].Cluster.Addr()},
			GossipProfile: "local", Period: period, Log: testLogger(t),
		})
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
	}
	host := 30 + len(queue)
	if cmmfWeights {
		host += 10
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	fe, err := client.NewFrontend(ctx, client.FrontendConfig{
		App: "app", Schedulers: f.SchedulerAddrs(), Listen: fmt.Sprintf("127.0.3.%d:0", host), AdvertiseHost: fmt.Sprintf("127.0.3.%d", host),
		OnMessage: func(client.Message) {}, Log: testLogger(t), Timeout: 5 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer fe.Close()
	// A backlog that outlasts the measurement: 16 slots x 100 ms tasks
	// run 160 tasks/s; each user queues 600.
	var wg sync.WaitGroup
	for _, user := range []string{"spark", "hadoop"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 150 {
				job := newJob(fmt.Sprintf("%s-%v-%s-%d", queue, cmmfWeights, user, j), 4)
				job.User = client.User{Name: user}
				if user == "spark" {
					job.Constraints = []client.Constraint{{Key: "mem", Op: "=", Values: []string{"high"}}}
				}
				if _, err := fe.Submit(ctx, job); err != nil {
					if ctx.Err() == nil {
						t.Errorf("submit: %v", err)
					}
					return
				}
			}
		}()
	}
	defer wg.Wait()
	defer cancel()
	high := f.NodeMonitors[0]
	if coordinated {
		waitFor(t, "the high-memory node to follow the coordinator", 20*time.Second, func() bool {
			_, ok := high.GuidanceVersion()
			return ok
		})
	}
	waitFor(t, "both users running", 20*time.Second, func() bool {
		u := high.Usage()
		return u["spark"].Running > 0 && u["hadoop"].Queued > 0
	})
	// Sample spark's running tasks on the high-memory node every 20 ms for
	// 2 s, while both users stay backlogged there.
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	sum, n := 0, 0
	for range 100 {
		<-tick.C
		u := high.Usage()
		if u["spark"].Queued == 0 || u["hadoop"].Queued == 0 {
			continue // not both backlogged at this instant
		}
		sum += u["spark"].Running
		n++
	}
	if n < 50 {
		t.Fatalf("%s: both users backlogged in only %d of 100 samples", queue, n)
	}
	return float64(sum) / float64(n)
}
