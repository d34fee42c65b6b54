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

// TestDirectGuidanceGivesTheConstrainedUserItsCMMFShare runs the Choosy
// paper's motivating case (as TestChoosyGivesTheConstrainedUserItsCMMFShare)
// with the coordinator delivering guidance by direct replies instead of
// gossip: every node monitor must follow the guidance (its version
// advancing), the coordinator must broadcast nothing, and the constrained
// user must get its CMMF share, with Choosy queues and with fair queues
// taking the CMMF weights; and with both deliveries at once (each version
// arriving twice, installed once).
func TestDirectGuidanceGivesTheConstrainedUserItsCMMFShare(t *testing.T) {
	for _, tc := range []struct {
		queue, delivery string
		weights         bool
	}{
		{"choosy", coordinator.DeliveryDirect, false},
		{"fair", coordinator.DeliveryDirect, true},
		{"choosy", coordinator.DeliveryBoth, false},
	} {
		t.Run(tc.queue+"-"+tc.delivery, func(t *testing.T) {
			spark := directSparkSlots(t, tc.queue, tc.delivery, tc.weights)
			t.Logf("spark's mean running slots on the high-memory node with direct replies: %.2f (CMMF: 4, per-node fair: 2)", spark)
			if spark < 3.5 {
				t.Errorf("%s queues with direct guidance gave spark %.2f slots; want its CMMF share, about 4", tc.queue, spark)
			}
		})
	}
}

func directSparkSlots(t *testing.T, queue, delivery string, cmmfWeights bool) float64 {
	const period = 200 * time.Millisecond
	f := startFleet(t, fleet.Config{
		Schedulers: 1, NodeMonitors: 4, Slots: 4, Apps: []string{"app"}, Queue: queue,
		NodeAttrs: func(i int) map[string]string {
			if i == 0 {
				return map[string]string{"mem": "high"}
			}
			return map[string]string{"mem": "std"}
		},
		Coordination: nodemonitor.CoordinationConfig{ReportEvery: period, Stale: 10 * period, Weights: cmmfWeights},
		Run:          echoTask(100 * time.Millisecond),
	})
	d, err := coordinator.Start(coordinator.Config{
		Name: "coord", Gossip: "127.0.5.19:0", Join: []string{f.Schedulers[0].Cluster.Addr()},
		GossipProfile: "local", Period: period, Delivery: delivery, Log: testLogger(t),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()

	host := 70 + len(queue) + len(delivery)
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
	var wg sync.WaitGroup
	for _, user := range []string{"spark", "hadoop"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 150 {
				job := newJob(fmt.Sprintf("%s-%s-%s-%d", delivery, queue, user, j), 4)
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

	// Every node monitor follows the direct replies, and keeps following:
	// its version advances past the first one it installed.
	first := make([]uint64, len(f.NodeMonitors))
	waitFor(t, "every node monitor to follow the coordinator's direct replies", 20*time.Second, func() bool {
		for i, nm := range f.NodeMonitors {
			v, ok := nm.GuidanceVersion()
			if !ok {
				return false
			}
			if first[i] == 0 {
				first[i] = v
			}
		}
		return true
	})
	waitFor(t, "every node monitor's guidance version to advance", 20*time.Second, func() bool {
		for i, nm := range f.NodeMonitors {
			if v, ok := nm.GuidanceVersion(); !ok || v <= first[i] {
				return false
			}
		}
		return true
	})
	st := d.Stats()
	if gossiped := st.Chunks != 0; st.Replies < len(f.NodeMonitors) || st.ReplyBytes == 0 || gossiped != (delivery == coordinator.DeliveryBoth) {
		t.Errorf("coordinator stats %+v: want a reply per node monitor, and gossiped guidance only with delivery %q", st, coordinator.DeliveryBoth)
	}

	high := f.NodeMonitors[0]
	waitFor(t, "both users running", 20*time.Second, func() bool {
		u := high.Usage()
		return u["spark"].Running > 0 && u["hadoop"].Queued > 0
	})
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
