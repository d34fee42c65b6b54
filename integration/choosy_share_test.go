package integration

import (
	"fmt"
	"testing"
	"time"

	"github.com/sparrowfleet/sparrow/coordinator"
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
	t.Logf("spark's share of the high-memory node's running tasks, in slots: fair queues %.2f, Choosy with a coordinator %.2f, fair queues with the coordinator's CMMF weights %.2f (CMMF: 4, per-node fair: 2)", fair, choosy, weighted)
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
	f := constrainedFleet(t, queue, period, cmmfWeights)
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
	stop := submitBacklog(t, f, host, fmt.Sprintf("%s-%v", queue, cmmfWeights))
	defer stop()
	if coordinated {
		// The share is measured once converged: after the high-memory
		// node has installed five guidance versions, so that the first
		// periods' guidance, computed before both users' work reached
		// every node, has been replaced (the ramp-up is bench choosy's
		// measurement, not this test's).
		high := f.NodeMonitors[0]
		seen := map[uint64]bool{}
		waitFor(t, "the high-memory node to follow five guidance versions", 20*time.Second, func() bool {
			if v, ok := high.GuidanceVersion(); ok {
				seen[v] = true
			}
			return len(seen) >= 5
		})
	}
	return sparkSlotsOnHigh(t, f, queue)
}
