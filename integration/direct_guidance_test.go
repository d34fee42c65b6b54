package integration

import (
	"testing"
	"time"

	"github.com/sparrowfleet/sparrow/coordinator"
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
			t.Logf("spark's share of the high-memory node's running tasks, in slots, with direct replies: %.2f (CMMF: 4, per-node fair: 2)", spark)
			if spark < 3.5 {
				t.Errorf("%s queues with direct guidance gave spark %.2f slots; want its CMMF share, about 4", tc.queue, spark)
			}
		})
	}
}

func directSparkSlots(t *testing.T, queue, delivery string, cmmfWeights bool) float64 {
	const period = 200 * time.Millisecond
	f := constrainedFleet(t, queue, period, cmmfWeights)
	d, err := coordinator.Start(coordinator.Config{
		Name: "coord", Gossip: "127.0.5.19:0", Join: []string{f.Schedulers[0].Cluster.Addr()},
		GossipProfile: "local", Period: period, Delivery: delivery, Log: testLogger(t),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	stop := submitBacklog(t, f, 70+len(queue)+len(delivery), delivery+"-"+queue)
	defer stop()

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
	// With delivery "both", a node monitor's version may advance through
	// gossip before the coordinator has counted its reply to it.
	waitFor(t, "the coordinator to reply to every node monitor", 20*time.Second, func() bool {
		return d.Stats().Replies >= len(f.NodeMonitors)
	})
	st := d.Stats()
	if gossiped := st.Chunks != 0; st.ReplyBytes == 0 || gossiped != (delivery == coordinator.DeliveryBoth) {
		t.Errorf("coordinator stats %+v: want a reply per node monitor, and gossiped guidance only with delivery %q", st, coordinator.DeliveryBoth)
	}

	return sparkSlotsOnHigh(t, f, queue)
}
