package sim

import (
	"testing"

	"github.com/sparrowfleet/sparrow/internal/jobtrace"
)

// TestTraceBoundBelowEveryPolicy replays heavy-tailed workloads on small,
// overloaded clusters under every policy bound to the cluster's slots
// (the ideal is not) and checks that none beats the bound: each class's
// quantiles and mean are at or above TraceBound's. The bound must also
// rise above the ideal on some of them, or it would be the ideal under
// another name.
func TestTraceBoundBelowEveryPolicy(t *testing.T) {
	above := 0
	for seed := uint64(1); seed <= 6; seed++ {
		jobs := synthJobs(seed, 150)
		nodes, slots := 2+int(seed%3), 1+int(seed%2)
		run := func(p TracePolicy) TraceResult {
			cfg := testTraceConfig(p, nodes, slots, seed)
			cfg.GapScale = 0.5
			res, err := RunTrace(cfg, sliceSource(jobs), jobtrace.NewRecorder(cfg.Aware.Cutoff))
			if err != nil {
				t.Fatalf("seed %d, %v: %v", seed, p, err)
			}
			return res
		}
		bound, ideal := run(TraceBound), run(TraceIdeal)
		if bound.Jobs != len(jobs) || bound.Short.N+bound.Long.N != len(jobs) {
			t.Fatalf("seed %d: bound counted %d jobs (%d short, %d long), want %d", seed, bound.Jobs, bound.Short.N, bound.Long.N, len(jobs))
		}
		if bound.Short.P99 > ideal.Short.P99*(1+1e-9) || bound.Short.P90 > ideal.Short.P90*(1+1e-9) {
			above++
		}
		for _, p := range []TracePolicy{TraceSparrow, TraceAware, TraceCentral} {
			got := run(p)
			for _, c := range []struct {
				name       string
				got, bound jobtrace.Summary
			}{{"short", got.Short, bound.Short}, {"long", got.Long, bound.Long}} {
				if c.got.N != c.bound.N {
					t.Fatalf("seed %d, %v %s: %d jobs, bound %d", seed, p, c.name, c.got.N, c.bound.N)
				}
				for _, q := range []struct {
					name       string
					got, bound float64
				}{{"mean", c.got.Mean, c.bound.Mean}, {"p50", c.got.P50, c.bound.P50}, {"p90", c.got.P90, c.bound.P90}, {"p99", c.got.P99, c.bound.P99}} {
					if q.got < q.bound*(1-1e-9) {
						t.Errorf("seed %d on %d x %d: %v %s %s = %v, under the bound %v", seed, nodes, slots, p, c.name, q.name, q.got, q.bound)
					}
				}
			}
		}
	}
	if above == 0 {
		t.Error("the bound never rose above the ideal's quantiles on overloaded clusters")
	}
}
