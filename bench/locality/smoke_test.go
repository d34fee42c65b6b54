package locality

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/rs/zerolog"
)

// TestSmoke runs the harness tiny, on 8 node monitors x 1 slot in 2
// racks, in every mode: every submitted task must complete exactly once,
// and the locality fractions must sum to 1. Every task reads the one
// block of the catalogue, whose 3 replica nodes cannot keep up (4 slots'
// worth of work on 3): in the strict mode every task must still run on a
// replica; in the relaxing modes the schedulers must widen some tasks and
// some must run off the replicas; in the guided mode the schedulers must
// have received prices.
func TestSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("live fleet; skipped with -short")
	}
	cfg := Config{
		Workload: WorkloadConfig{
			Topology: Topology{Nodes: 8, Racks: 2}, Slots: 1, Blocks: 1, BlockBytes: 8 << 20, ZipfS: 1.1,
			TasksPerJob: 3, Load: 0.5, CPU: 40 * time.Millisecond, Duration: 2 * time.Second, Seed: 7,
		},
		Period: 200 * time.Millisecond, Drain: 20 * time.Second, Seed: 1, GossipProfile: "local", Log: zerolog.Nop(),
	}
	cfg.Defaults()
	trace, err := Generate(cfg.Workload)
	if err != nil {
		t.Fatal(err)
	}
	if len(trace.Jobs) < 5 {
		t.Fatalf("the trace has only %d jobs", len(trace.Jobs))
	}
	for _, mode := range Modes {
		t.Run(mode.Name, func(t *testing.T) {
			m, err := Measure(context.Background(), cfg, mode, trace)
			if err != nil {
				t.Fatal(err)
			}
			if len(m.Jobs) != len(trace.Jobs) {
				t.Fatalf("%d of %d jobs submitted", len(m.Jobs), len(trace.Jobs))
			}
			for j, job := range m.Jobs {
				if job.Refused {
					t.Errorf("job %d refused", j)
				}
				for k, task := range job.Tasks {
					if task.Launches != 1 || !task.Done || task.Failed {
						t.Errorf("job %d task %d: %d launches, done %v, failed %v", j, k, task.Launches, task.Done, task.Failed)
					}
					if !mode.Relax && task.Where != NodeLocal {
						t.Errorf("strict job %d task %d ran %v on node %d", j, k, task.Where, task.Node)
					}
				}
			}
			s := Analyze(m.Jobs, m.End)
			if s.TasksCompleted != s.TasksSubmitted || s.JobsCompleted != s.JobsSubmitted {
				t.Errorf("completed %d of %d tasks, %d of %d jobs", s.TasksCompleted, s.TasksSubmitted, s.JobsCompleted, s.JobsSubmitted)
			}
			if sum := s.NodeLocal + s.RackLocal + s.Elsewhere; math.Abs(sum-1) > 1e-9 {
				t.Errorf("locality fractions sum to %g: %+v", sum, s)
			}
			r := m.Relaxation
			widened := r.WidenedRackByDelay + r.WidenedRackByPrices + r.WidenedClusterByDelay + r.WidenedClusterByPrices
			if mode.Relax && (widened == 0 || s.NodeLocal == 1) {
				t.Errorf("%s: %d tasks widened, node-local fraction %g: want some moved off the hot replicas", mode.Name, widened, s.NodeLocal)
			}
			if !mode.Relax && widened != 0 {
				t.Errorf("strict: %d tasks widened", widened)
			}
			if mode.Coordinator && (!m.Guidance || r.PricesAccepted == 0) {
				t.Errorf("guided: guidance %v, %d price sets accepted", m.Guidance, r.PricesAccepted)
			}
		})
	}
}
