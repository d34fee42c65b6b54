package planner

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/sparrowfleet/sparrow/core/perfmodel"
)

// equiJoinModel is a join of two large inputs (read channels 0 and 1),
// 512 MB each on the reference machine. The report gives no model for it;
// it is shaped like JoinModels' Join with both inputs large.
func equiJoinModel() perfmodel.Model {
	mb := float64(perfmodel.MB)
	return perfmodel.Model{Type: "EquiJoin", Ref: T5400(), Groups: []perfmodel.PhaseGroup{
		{Label: "init", Kind: perfmodel.Init, Phases: 1, Run: 1.4, CPU: []float64{1.1}},
		{Label: "build", Kind: perfmodel.IO, Phases: 2, CPU: []float64{1.5, 1.0}, Read: []float64{256 * mb, 0}},
		{Label: "probe", Kind: perfmodel.IO, Phases: 2, CPU: []float64{1.5, 1.0}, Read: []float64{0, 256 * mb}},
		{Label: "write", Kind: perfmodel.IO, Phases: 1, CPU: []float64{0.2}, Write: []float64{256 * mb}, Stretch: 1.1},
		{Label: "compute", Kind: perfmodel.Compute, Phases: 2, CPU: []float64{0.5}},
	}}
}

// equiJoin is §2.5's job: an equijoin of two 250 MB files. The report
// gives no graph; here each file is stored as 4 partitions on random
// machines, each partition is hashed into 4 buckets, bucket i of each file
// is merged, and 4 joins each join bucket i of both files: 20 tasks.
func equiJoin(rng *rand.Rand, machines []perfmodel.Machine) Problem {
	mb := float64(perfmodel.MB)
	const parts = 4
	part := 250 * mb / parts
	models := JoinModels()
	models["EquiJoin"] = equiJoinModel()
	// A 4-way HashPartition: the same costs as the 2-way one, four outputs.
	hp := models["HashPartition"]
	hp.Groups = slices.Clone(hp.Groups)
	hp.Groups[2].Write = []float64{64 * mb, 64 * mb, 64 * mb, 64 * mb}
	hp.Type = "HashPartition4"
	models["HashPartition4"] = hp
	var g Graph
	for _, file := range []string{"A", "B"} {
		for i := range parts {
			g.Tasks = append(g.Tasks, Task{Name: fmt.Sprintf("HP%s%d", file, i), Type: "HashPartition4",
				Inputs: []Input{{Machine: machines[rng.IntN(len(machines))].Name, Bytes: part}}})
		}
		for b := range parts {
			m := fmt.Sprintf("M%s%d", file, b)
			g.Tasks = append(g.Tasks, Task{Name: m, Type: "Merge"})
			for i := range parts {
				g.Arcs = append(g.Arcs, Arc{From: fmt.Sprintf("HP%s%d", file, i), To: m, Bytes: part / parts, WriteChannel: b})
			}
		}
	}
	for b := range parts {
		j := fmt.Sprintf("J%d", b)
		g.Tasks = append(g.Tasks, Task{Name: j, Type: "EquiJoin"})
		g.Arcs = append(g.Arcs, Arc{From: fmt.Sprintf("MA%d", b), To: j, Bytes: 250 * mb / parts},
			Arc{From: fmt.Sprintf("MB%d", b), To: j, Bytes: 250 * mb / parts, ReadChannel: 1})
	}
	return Problem{Graph: g, Machines: machines, Models: models}
}

// BenchmarkFigure4 is §2.5's Monte Carlo: for 50 random heterogeneous
// clusters of 2, 10 and 40 machines (Figure 17's ranges), the predicted
// makespan of Dryad's greedy schedule over that of the plan Solve finds
// within 10,000 nodes. It reports the ratio's median, 10th and 90th
// percentiles and the median makespans. Slow; run once:
//
//	go test -run XXX -bench Figure4 -benchtime 1x -timeout 60m ./core/planner/
func BenchmarkFigure4(b *testing.B) {
	for _, sr := range searches {
		for _, size := range []int{2, 10, 40} {
			benchFigure4(b, sr.name, sr.opt, size)
		}
	}
}

func benchFigure4(b *testing.B, search string, opt Options, size int) {
	opt.MaxNodes = 10_000
	b.Run(fmt.Sprintf("search=%s/nodes=%d", search, size), func(b *testing.B) {
		for b.Loop() {
			rng := rand.New(rand.NewPCG(4, uint64(size)))
			var ratio, greedy, planned []float64
			for range 50 {
				p := equiJoin(rng, randomCluster(rng, size))
				plan, st, err := Solve(p, opt)
				if err != nil {
					b.Fatal(err)
				}
				ratio = append(ratio, st.Greedy/plan.Makespan)
				greedy = append(greedy, st.Greedy)
				planned = append(planned, plan.Makespan)
			}
			q := func(v []float64, f float64) float64 {
				s := slices.Clone(v)
				slices.Sort(s)
				return s[int(f*float64(len(s)-1))]
			}
			b.ReportMetric(q(ratio, 0.5), "ratio-p50")
			b.ReportMetric(q(ratio, 0.1), "ratio-p10")
			b.ReportMetric(q(ratio, 0.9), "ratio-p90")
			b.ReportMetric(q(greedy, 0.5), "greedy-p50-s")
			b.ReportMetric(q(planned, 0.5), "planned-p50-s")
		}
	})
}

// TestEquiJoinValid keeps the Monte Carlo's job valid and plannable.
func TestEquiJoinValid(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 2))
	p := equiJoin(rng, randomCluster(rng, 3))
	plan, st, err := Solve(p, Options{MaxNodes: 2000})
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Machine) != 20 || plan.Makespan > st.Seed {
		t.Errorf("plan %v makespan %v, seed %v", plan.Machine, plan.Makespan, st.Seed)
	}
}
