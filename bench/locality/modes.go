package locality

import (
	"context"
	"fmt"
	"time"

	"github.com/sparrowfleet/sparrow/bench/fleet"
	"github.com/sparrowfleet/sparrow/client"
	"github.com/sparrowfleet/sparrow/coordinator"
	corelocality "github.com/sparrowfleet/sparrow/core/locality"
	"github.com/sparrowfleet/sparrow/nodemonitor"
)

// relax opts task into the scheduler's relaxation after delay (0: strict)
// and tells it the task's input size.
func relax(task *client.Task, delay time.Duration, inputBytes int64) {
	task.DelayThreshold = delay
	if delay > 0 {
		task.InputBytes = inputBytes
	}
}

// guidance starts a coordinator with locality prices beside a running
// fleet and waits until every scheduler holds fresh prices; stop closes
// the coordinator.
type guidance func(ctx context.Context, f *fleet.Fleet) (stop func(), err error)

// setupGuidance prepares the fleet for mode: in the guided mode the node
// monitors report their load and rack to the coordinator every period. It
// returns what starts the coordinator once the fleet is up.
func setupGuidance(fc *fleet.Config, cfg Config, mode Mode) guidance {
	if !mode.Coordinator {
		return nil
	}
	fc.Coordination = nodemonitor.CoordinationConfig{
		ReportEvery: cfg.Period, Stale: max(nodemonitor.DefaultGuidanceStale, 5*cfg.Period),
	}
	// Quincy's wait weight, the run's transfer weights; queued tasks are
	// taken to read one block each.
	params := corelocality.DefaultParams()
	params.RackPerGB, params.CorePerGB = costUnits(cfg.RackCost), costUnits(cfg.CoreCost)
	params.InputBytes = cfg.Workload.BlockBytes
	return func(ctx context.Context, f *fleet.Fleet) (func(), error) {
		d, err := coordinator.Start(coordinator.Config{
			Name: "coordinator", Gossip: "127.0.5.1:0", Join: []string{f.Schedulers[0].Cluster.Addr()},
			GossipProfile: cfg.GossipProfile, Period: cfg.Period, Locality: true, LocalityParams: params, Log: cfg.Log,
		})
		if err != nil {
			return nil, fmt.Errorf("start coordinator: %w", err)
		}
		if err := waitPrices(ctx, f); err != nil {
			d.Close()
			return nil, err
		}
		return func() { d.Close() }, nil
	}
}

// waitPrices waits until every scheduler holds fresh locality prices, so
// that the guided run starts guided.
func waitPrices(ctx context.Context, f *fleet.Fleet) error {
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		n := 0
		for _, s := range f.Schedulers {
			if s.Stats().Locality.PricesFresh {
				n++
			}
		}
		if n == len(f.Schedulers) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("only %d of %d schedulers hold the coordinator's locality prices: %w", n, len(f.Schedulers), ctx.Err())
		case <-tick.C:
		}
	}
}

// RelaxationStats are the schedulers' own counts (scheduler.LocalityStats,
// summed over schedulers): tasks widened to their racks or the cluster,
// by the delay or by the prices, and launches of tasks with preferences
// by level, as the schedulers saw them.
type RelaxationStats struct {
	WidenedRackByDelay     uint64 `json:"widened_rack_by_delay"`
	WidenedRackByPrices    uint64 `json:"widened_rack_by_prices"`
	WidenedClusterByDelay  uint64 `json:"widened_cluster_by_delay"`
	WidenedClusterByPrices uint64 `json:"widened_cluster_by_prices"`
	LaunchedNode           uint64 `json:"launched_node"`
	LaunchedRack           uint64 `json:"launched_rack"`
	LaunchedCluster        uint64 `json:"launched_cluster"`
	PricesAccepted         uint64 `json:"prices_accepted"`
}

func relaxationOf(f *fleet.Fleet) RelaxationStats {
	var r RelaxationStats
	for _, s := range f.Schedulers {
		l := s.Stats().Locality
		r.WidenedRackByDelay += l.WidenedRackByDelay
		r.WidenedRackByPrices += l.WidenedRackByPrices
		r.WidenedClusterByDelay += l.WidenedClusterByDelay
		r.WidenedClusterByPrices += l.WidenedClusterByPrices
		r.LaunchedNode += l.LaunchedNode
		r.LaunchedRack += l.LaunchedRack
		r.LaunchedCluster += l.LaunchedCluster
		r.PricesAccepted += l.PricesAccepted
	}
	return r
}
