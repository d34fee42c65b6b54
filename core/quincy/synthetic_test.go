package quincy

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/sparrowfleet/sparrow/core/flow"
)

// TestSyntheticShape checks a synthetic snapshot against its config: the
// cluster's layout, every job's root placed, the task total, replication,
// and the running workers filling the slots roots leave (Busy = 1).
func TestSyntheticShape(t *testing.T) {
	cfg, err := SyntheticSize("243")
	if err != nil {
		t.Fatal(err)
	}
	s, err := Synthetic(cfg, rand.New(rand.NewPCG(1, 1)))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	perRack := make([]int, cfg.Racks)
	for _, c := range s.Cluster.Computers {
		perRack[c.Rack]++
	}
	for l, n := range perRack {
		if n < 30 || n > 31 { // 243 over 8 racks
			t.Errorf("rack %d has %d computers", l, n)
		}
	}
	tasks, running, roots := 0, 0, 0
	for _, j := range s.Jobs {
		if j.Root != nil && j.Root.Computer >= 0 {
			roots++
		}
		for _, task := range j.Tasks {
			tasks++
			if task.State == Running {
				running++
			}
			for _, b := range task.Input {
				if len(b.Replicas) != cfg.Replicas {
					t.Fatalf("block with %d replicas, want %d", len(b.Replicas), cfg.Replicas)
				}
			}
		}
	}
	if tasks != cfg.Tasks || roots != cfg.Jobs || running != cfg.Computers-cfg.Jobs {
		t.Errorf("%d tasks, %d placed roots, %d running; want %d, %d, %d", tasks, roots, running, cfg.Tasks, cfg.Jobs, cfg.Computers-cfg.Jobs)
	}
}

// TestSyntheticDeterministic: the same seed writes the same DIMACS bytes,
// another seed different ones.
func TestSyntheticDeterministic(t *testing.T) {
	cfg, _ := SyntheticSize("243")
	write := func(seed uint64) []byte {
		var buf bytes.Buffer
		if err := WriteSyntheticDIMACS(&buf, cfg, QFP, DefaultParams(), rand.New(rand.NewPCG(seed, 0))); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	a, b, c := write(5), write(5), write(6)
	if !bytes.Equal(a, b) {
		t.Error("same seed, different DIMACS")
	}
	if bytes.Equal(a, c) {
		t.Error("different seeds, same DIMACS")
	}
	if !bytes.HasPrefix(a, []byte("c")) && !bytes.HasPrefix(a, []byte("p min")) {
		t.Errorf("not a DIMACS problem: %q", a[:min(len(a), 40)])
	}
	// Round trip through the solver's reader: the same network.
	g, err := flow.ReadDIMACS(bytes.NewReader(a))
	if err != nil {
		t.Fatal(err)
	}
	want, err := SyntheticGraph(cfg, QFP, DefaultParams(), rand.New(rand.NewPCG(5, 0)))
	if err != nil {
		t.Fatal(err)
	}
	if g.NumNodes() != want.Net.NumNodes() || g.NumArcs() != want.Net.NumArcs() {
		t.Errorf("read back %v, built %v", g, want.Net)
	}
}

// TestSyntheticSolves solves a small synthetic cluster under every policy
// and checks the schedules (the named sizes are for benchmarks).
func TestSyntheticSolves(t *testing.T) {
	cfg := SyntheticConfig{Computers: 40, Racks: 2, Jobs: 5, Tasks: 300}
	for _, pol := range Policies {
		g, err := SyntheticGraph(cfg, pol, DefaultParams(), rand.New(rand.NewPCG(7, 0)))
		if err != nil {
			t.Fatal(err)
		}
		sol, err := flow.Solve(g.Net)
		if err != nil {
			t.Fatalf("%v: %v", pol, err)
		}
		sch, err := g.ReadSchedule(sol)
		if err != nil {
			t.Fatalf("%v: %v", pol, err)
		}
		if err := checkSchedule(g, sol, sch); err != nil {
			t.Fatalf("%v: %v", pol, err)
		}
		t.Logf("%v: %d nodes, %d arcs, cost %d: started %d kept %d moved %d killed %d waiting %d",
			pol, g.Net.NumNodes(), g.Net.NumArcs(), sch.Cost, sch.Started, sch.Kept, sch.Moved, sch.Killed, sch.Waiting)
	}
}

func TestSyntheticErrors(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	for _, cfg := range []SyntheticConfig{
		{Computers: 2, Racks: 3, Jobs: 1, Tasks: 1},
		{Computers: 4, Racks: 1, Jobs: 0, Tasks: 1},
		{Computers: 4, Racks: 1, Jobs: 3, Tasks: 2},
		{Computers: 2, Racks: 1, Jobs: 3, Tasks: 9},
	} {
		if _, err := Synthetic(cfg, rng); err == nil {
			t.Errorf("Synthetic(%+v) accepted", cfg)
		}
	}
	if _, err := SyntheticSize("nope"); err == nil {
		t.Error("unknown size accepted")
	}
}

// BenchmarkBuild times Build on the named synthetic sizes (seed 1, 1) and
// reports the graph's size.
func BenchmarkBuild(b *testing.B) {
	for _, name := range []string{"243", "2500x100", "12500"} {
		cfg, _ := SyntheticSize(name)
		s, err := Synthetic(cfg, rand.New(rand.NewPCG(1, 1)))
		if err != nil {
			b.Fatal(err)
		}
		b.Run(name, func(b *testing.B) {
			var g *Graph
			for b.Loop() {
				if g, err = Build(s, QFP, DefaultParams()); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(g.Net.NumNodes()), "nodes")
			b.ReportMetric(float64(g.Net.NumArcs()), "arcs")
			b.ReportMetric(float64(countTasks(s)), "tasks")
		})
	}
}

// BenchmarkSolveAndRead times a from-scratch solve plus ReadSchedule on
// the named sizes under QFP (seed 1, 1), as Quincy solved (§6.5), and
// reports the solver's phases.
func BenchmarkSolveAndRead(b *testing.B) {
	for _, name := range []string{"243", "2500x100"} {
		cfg, _ := SyntheticSize(name)
		g, err := SyntheticGraph(cfg, QFP, DefaultParams(), rand.New(rand.NewPCG(1, 1)))
		if err != nil {
			b.Fatal(err)
		}
		b.Run(name, func(b *testing.B) {
			phases := 0
			for b.Loop() {
				solver := flow.NewSolver(g.Net.Clone())
				sol, err := solver.Solve()
				if err != nil {
					b.Fatal(err)
				}
				phases = solver.Stats().Phases
				if _, err := g.ReadSchedule(sol); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(phases), "phases")
		})
	}
}
