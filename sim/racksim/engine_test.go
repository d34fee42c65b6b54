package racksim

import (
	"math"
	"reflect"
	"testing"
)

// smallConfig is a reduced cluster (3 racks of 6) and workload exercising
// every kind of phase: one-phase, gathers, pipes and the DatabaseJoin
// layouts.
func smallConfig(p Policy, k int, seed uint64) Config {
	cfg := DefaultConfig()
	cfg.RackSizes = []int{6, 6, 6}
	cfg.Policy, cfg.K, cfg.Seed = p, k, seed
	cfg.Instances = []Instance{
		{Name: "hog", Ideal: 200, Phases: []Phase{{Tasks: 14, Read: []float64{20 * MB}, Weight: 1}}},
		{Name: "prime", Ideal: 20, Phases: []Phase{{Tasks: 6, Read: []float64{0.4 * MB}, Weight: 1}}},
		{Name: "sort", NW: true, Ideal: 60, Phases: []Phase{
			{Tasks: 5, Read: []float64{400 * MB}, Weight: 1, Output: 400 * MB},
			{Tasks: 5, Gather: true, Weight: 1, Output: 100 * MB},
		}},
		{Name: "join", NW: true, Layout: Join5, Ideal: 60, Phases: []Phase{
			{Tasks: 10, Read: []float64{100 * MB, 300 * MB}, Weight: 1, Output: 200 * MB},
			{Tasks: 10, Read: []float64{300 * MB}, Gather: true, Weight: 1, Output: 10 * MB},
		}},
		{Name: "pagerank", NW: true, Layout: OnePerComputer, Ideal: 90, Phases: []Phase{
			{Tasks: 12, Read: []float64{300 * MB}, Weight: 1, Output: 100 * MB},
			{Tasks: 12, Gather: true, Weight: 1, Output: 20 * MB},
			{Tasks: 12, Read: []float64{300 * MB}, Pipe: true, Weight: 1, Output: 100 * MB},
			{Tasks: 12, Gather: true, Weight: 1, Output: 20 * MB},
		}},
		{Name: "word", Ideal: 30, Phases: []Phase{
			{Tasks: 4, Read: []float64{50 * MB}, Weight: 1, Output: 1 * MB},
			{Tasks: 1, Gather: true, Weight: 0.1, Output: 0.01 * MB},
		}},
	}
	return cfg
}

// inputBytes is the bytes every task of cfg's workload reads once.
func inputBytes(t *testing.T, cfg Config) float64 {
	t.Helper()
	total := 0.0
	for _, in := range Workload(&cfg) {
		for k, p := range in.Phases {
			per := 0.0
			for _, b := range p.Read {
				per += b
			}
			if k > 0 {
				prev := in.Phases[k-1]
				switch {
				case p.Gather:
					per += float64(prev.Tasks) * float64(int64(prev.Output/float64(p.Tasks)))
				case p.Pipe:
					per += prev.Output
				}
			}
			total += per * float64(p.Tasks)
		}
	}
	return total
}

// TestEndToEnd runs every policy on the reduced cluster and checks the
// invariants: every worker finishes exactly once (Run fails otherwise),
// the DT parts are the bytes read, every instance runs after its
// admission, and at most K run at once.
func TestEndToEnd(t *testing.T) {
	for _, p := range AllPolicies {
		for _, k := range []int{1, 3} {
			cfg := smallConfig(p, k, 7)
			r, err := Run(cfg)
			if err != nil {
				t.Fatalf("%s K=%d: %v", p, k, err)
			}
			if r.Completed != r.Tasks || r.Tasks != 14+6+10+20+48+5 {
				t.Errorf("%s K=%d: %d of %d tasks completed", p, k, r.Completed, r.Tasks)
			}
			want := inputBytes(t, cfg)
			dt := r.DT()
			// Killed attempts read more; without kills DT is exactly the
			// input, whatever the placement.
			if dt < want*(1-1e-9) || (r.Kills == 0 && math.Abs(dt-want) > want*1e-9) {
				t.Errorf("%s K=%d: DT %.0f bytes with %d kills, inputs %.0f", p, k, dt, r.Kills, want)
			}
			for c := range 3 {
				if r.GatherBytes[c] > r.Bytes[c]*(1+1e-12) {
					t.Errorf("%s K=%d: gathers read %g of class %d's %g bytes", p, k, r.GatherBytes[c], c, r.Bytes[c])
				}
			}
			// Admission: at most K instances overlap, in order.
			for i, j := range r.Jobs {
				if j.Time <= 0 || j.Finished > r.Makespan {
					t.Errorf("%s K=%d: %s ran %g s, finished %g, makespan %g", p, k, j.Name, j.Time, j.Finished, r.Makespan)
				}
				if i > 0 && j.Admitted < r.Jobs[i-1].Admitted {
					t.Errorf("%s K=%d: %s admitted before %s", p, k, j.Name, r.Jobs[i-1].Name)
				}
				overlap := 0
				for _, o := range r.Jobs {
					if o.Admitted <= j.Admitted && o.Finished > j.Admitted {
						overlap++
					}
				}
				if overlap > k {
					t.Errorf("%s K=%d: %d instances running when %s started", p, k, overlap, j.Name)
				}
			}
			if p.Flow() && r.Solves == 0 {
				t.Errorf("%s: no solves", p)
			}
			if (p == G || p == GF || p == GFH || p == Q || p == QF) && k == 1 && r.Kills != 0 {
				// Non-preemptive policies kill only to seat a root, and at
				// K = 1 a root always finds a free computer.
				t.Errorf("%s K=1: %d kills", p, r.Kills)
			}
		}
	}
}

// TestDeterminism checks that a run is a function of its Config, and
// that the seed matters.
func TestDeterminism(t *testing.T) {
	for _, p := range []Policy{GFP, QFP} {
		a, err := Run(smallConfig(p, 3, 11))
		if err != nil {
			t.Fatal(err)
		}
		b, err := Run(smallConfig(p, 3, 11))
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(a, b) {
			t.Errorf("%s: two runs of one Config differ: makespan %g vs %g, DT %v vs %v", p, a.Makespan, b.Makespan, a.Bytes, b.Bytes)
		}
		c, err := Run(smallConfig(p, 3, 12))
		if err != nil {
			t.Fatal(err)
		}
		if reflect.DeepEqual(a.Bytes, c.Bytes) && a.Makespan == c.Makespan {
			t.Errorf("%s: seeds 11 and 12 gave identical runs", p)
		}
	}
}

// TestMeasure checks §5.2's metrics on a hand-made result.
func TestMeasure(t *testing.T) {
	r := &Result{Jobs: []JobResult{{Name: "a", Time: 10}, {Name: "b", Time: 40, NW: true}}, Makespan: 50}
	r.Bytes = [3]float64{3e12, 2e12, 1e12}
	m := Measure(r, map[string]float64{"a": 10, "b": 10})
	// ANPs 1 and 0.25; slowdowns 1 and 4.
	want := Metrics{Makespan: 50, SNP: 0.5, L1: 2.5, L2: math.Sqrt(8.5), LInf: 4, Unfairness: 0.375 / 0.625,
		SNPCPU: 1, SNPNW: 0.25, DTTotal: 6, DTLocal: 3, DTRack: 2, DTCore: 1}
	if !reflect.DeepEqual(roundMetrics(m), roundMetrics(want)) {
		t.Errorf("Measure = %+v, want %+v", m, want)
	}
}

func roundMetrics(m Metrics) Metrics {
	v := reflect.ValueOf(&m).Elem()
	for i := range v.NumField() {
		f := v.Field(i)
		f.SetFloat(math.Round(f.Float()*1e9) / 1e9)
	}
	return m
}

// TestTinyClusters runs clusters whose racks are too small for HDFS's
// three copies, and a single rack.
func TestTinyClusters(t *testing.T) {
	for _, racks := range [][]int{{5}, {1, 1, 3}, {2, 2}} {
		for _, p := range []Policy{G, GFP, QP, QFPX} {
			cfg := smallConfig(p, 2, 3)
			cfg.RackSizes = racks
			r, err := Run(cfg)
			if err != nil {
				t.Fatalf("racks %v, %s: %v", racks, p, err)
			}
			if r.Completed != r.Tasks {
				t.Errorf("racks %v, %s: %d of %d tasks completed", racks, p, r.Completed, r.Tasks)
			}
		}
	}
}
