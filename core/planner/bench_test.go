package planner

import (
	"fmt"
	"math/rand/v2"
	"syscall"
	"testing"
	"time"

	"github.com/sparrowfleet/sparrow/core/perfmodel"
)

// wallClock returns an injected clock reading seconds since its creation:
// benchmarks measure real time, the core only calls the function.
func wallClock() func() float64 {
	t0 := time.Now()
	return func() float64 { return time.Since(t0).Seconds() }
}

// cpuClock returns an injected clock reading this process's CPU seconds
// (user + system, all threads) since its creation: on a shared, loaded
// machine it measures the compute the search used, not the time it
// waited for a processor.
func cpuClock() func() float64 {
	now := func() float64 {
		var ru syscall.Rusage
		if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
			panic(err)
		}
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
	}
	t0 := now()
	return func() float64 { return now() - t0 }
}

// searches are the two searches the benchmarks compare: over machine
// assignments and orders (Solve's default), and the assignment-only
// baseline.
var searches = []struct {
	name string
	opt  Options
}{{"orders", Options{}}, {"assignments", Options{AssignmentOnly: true}}}

// BenchmarkJoinProve is branch and bound on the Join (data on F2 and F3,
// keys on F1) to the proof of optimality, with each search.
func BenchmarkJoinProve(b *testing.B) {
	p := JoinOnFrank([2]string{"F2", "F3"}, "F1")
	for _, sr := range searches {
		b.Run("search="+sr.name, func(b *testing.B) {
			var plan Plan
			var st Stats
			for b.Loop() {
				var err error
				if plan, st, err = Solve(p, sr.opt); err != nil || !st.Proved {
					b.Fatal(err, st.Proved)
				}
			}
			b.ReportMetric(float64(st.Nodes), "nodes")
			b.ReportMetric(plan.Makespan, "makespan-s")
		})
	}
}

// BenchmarkJoinToOptimum stops the same searches at the node where they
// found the optimum: its time is the time to the optimum.
func BenchmarkJoinToOptimum(b *testing.B) {
	p := JoinOnFrank([2]string{"F2", "F3"}, "F1")
	for _, sr := range searches {
		b.Run("search="+sr.name, func(b *testing.B) {
			_, st, err := Solve(p, sr.opt)
			if err != nil {
				b.Fatal(err)
			}
			at := st.Improvements[len(st.Improvements)-1]
			opt := sr.opt
			opt.MaxNodes = at.Node + 1
			var plan Plan
			for b.Loop() {
				plan, _, _ = Solve(p, opt)
			}
			if plan.Makespan != at.Makespan {
				b.Fatalf("stopped at %v, want the optimum %v", plan.Makespan, at.Makespan)
			}
			b.ReportMetric(float64(at.Node), "nodes")
		})
	}
}

// BenchmarkJoinExhaustive evaluates all 19,683 assignments.
func BenchmarkJoinExhaustive(b *testing.B) {
	p := JoinOnFrank([2]string{"F2", "F3"}, "F1")
	for b.Loop() {
		if _, err := Exhaustive(p); err != nil {
			b.Fatal(err)
		}
	}
}

// randomCluster draws n heterogeneous machines in the ranges of the
// report's Figure 17: 1–4 cores at 1.8–3.6 GHz, disks 20–210 MB/s,
// 100 Mbps or gigabit Ethernet.
func randomCluster(rng *rand.Rand, n int) []perfmodel.Machine {
	mb := float64(perfmodel.MB)
	ms := make([]perfmodel.Machine, n)
	for i := range ms {
		disk := (20 + rng.Float64()*190) * mb
		net := gigabit
		if rng.IntN(2) == 0 {
			net = gigabit / 10
		}
		ms[i] = perfmodel.Machine{Name: fmt.Sprintf("m%02d", i), Cores: 1 << rng.IntN(3), GHz: 1.8 + rng.Float64()*1.8,
			DiskRead: disk, DiskWrite: disk * (0.85 + 0.15*rng.Float64()), Net: net}
	}
	return ms
}

// largeJob is a 100-task data-parallel job in the Join's shape, widened:
// 25 HashPartitions over 64 MB input partitions on random machines and 5
// over keys files, 25 data Merges each reading from 5 HashPartitions, 20
// keys Merges, 25 Joins each reading a data Merge and a keys Merge (195
// arcs).
func largeJob(rng *rand.Rand, machines []perfmodel.Machine) Problem {
	mb := float64(perfmodel.MB)
	var g Graph
	for i := range 25 {
		g.Tasks = append(g.Tasks, Task{Name: fmt.Sprintf("HP%d", i), Type: "HashPartition",
			Inputs: []Input{{Machine: machines[rng.IntN(len(machines))].Name, Bytes: 64 * mb}}})
	}
	for i := range 5 {
		g.Tasks = append(g.Tasks, Task{Name: fmt.Sprintf("HPk%d", i), Type: "HashPartition",
			Inputs: []Input{{Machine: machines[rng.IntN(len(machines))].Name, Bytes: 112}}})
	}
	for i := range 25 {
		m := fmt.Sprintf("M%d", i)
		g.Tasks = append(g.Tasks, Task{Name: m, Type: "Merge"})
		for j := range 5 { // each data Merge reads from 5 HashPartitions
			g.Arcs = append(g.Arcs, Arc{From: fmt.Sprintf("HP%d", (i+j*5)%25), To: m, Bytes: 64 * mb / 5 / 2, WriteChannel: j % 2})
		}
	}
	for i := range 20 {
		m := fmt.Sprintf("Mk%d", i)
		g.Tasks = append(g.Tasks, Task{Name: m, Type: "Merge"})
		g.Arcs = append(g.Arcs, Arc{From: fmt.Sprintf("HPk%d", i%5), To: m, Bytes: 28, WriteChannel: i % 2})
	}
	for i := range 25 {
		j := fmt.Sprintf("J%d", i)
		g.Tasks = append(g.Tasks, Task{Name: j, Type: "Join"})
		g.Arcs = append(g.Arcs, Arc{From: fmt.Sprintf("M%d", i), To: j, Bytes: 64 * mb, ReadChannel: 1},
			Arc{From: fmt.Sprintf("Mk%d", i%20), To: j, Bytes: 28})
	}
	return Problem{Graph: g, Machines: machines, Models: JoinModels()}
}

func largeProblem(seed uint64) Problem {
	rng := rand.New(rand.NewPCG(seed, 40))
	return largeJob(rng, randomCluster(rng, 40))
}

// BenchmarkLarge40x100 runs branch and bound for 1 s on 100 tasks and 40
// machines and reports the plan's makespan next to greedy's: 1 s of wall
// time, and 1 s of this process's CPU time (both injected clocks).
func BenchmarkLarge40x100(b *testing.B) {
	for _, sr := range searches {
		b.Run("search="+sr.name+"/wall", func(b *testing.B) { benchLarge(b, sr.opt, wallClock) })
		b.Run("search="+sr.name+"/cpu", func(b *testing.B) { benchLarge(b, sr.opt, cpuClock) })
	}
}

func benchLarge(b *testing.B, opt Options, clock func() func() float64) {
	p := largeProblem(1)
	var plan Plan
	var st Stats
	for b.Loop() {
		var err error
		opt.Clock, opt.TimeLimit, opt.MaxNodes = clock(), 1, 1<<62
		plan, st, err = Solve(p, opt)
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(plan.Makespan, "makespan-s")
	b.ReportMetric(st.Greedy, "greedy-s")
	b.ReportMetric(float64(st.Nodes), "nodes")
}

// improveLocally is a hill climb over single-task moves from assign,
// evaluating each with the planner's own simulation; it stops at a local
// optimum or when stop says so. It is independent of the branch and bound
// and serves as a second opinion on the best known plan.
func improveLocally(in *instance, assign []int, stop func() bool) (float64, error) {
	cur, err := in.simulate(assign)
	if err != nil {
		return 0, err
	}
	best := cur.Makespan
	for improved := true; improved && !stop(); {
		improved = false
		for t := range in.n {
			orig := assign[t]
			for m := range in.m {
				if m == orig || stop() {
					continue
				}
				assign[t] = m
				p, err := in.simulate(assign)
				if err != nil {
					return 0, err
				}
				if p.Makespan < best-1e-9 {
					best, orig, improved = p.Makespan, m, true
				}
			}
			assign[t] = orig
		}
	}
	return best, nil
}

// BenchmarkLargeBestKnown establishes the best known plan for the 40×100
// problem: branch and bound for 60 s of CPU time, then a hill climb over
// single-task moves to every machine from its plan for up to 120 s of CPU
// time. Slow; run it once:
//
//	go test -run XXX -bench LargeBestKnown -benchtime 1x ./core/planner/
func BenchmarkLargeBestKnown(b *testing.B) {
	p := largeProblem(1)
	for b.Loop() {
		plan, st, err := Solve(p, Options{Clock: cpuClock(), TimeLimit: 60, MaxNodes: 1 << 62})
		if err != nil {
			b.Fatal(err)
		}
		in, err := compile(p)
		if err != nil {
			b.Fatal(err)
		}
		clock := cpuClock()
		local, err := improveLocally(in, append([]int(nil), plan.Machine...), func() bool { return clock() > 120 })
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(plan.Makespan, "bnb60s-s")
		b.ReportMetric(local, "best-known-s")
		b.ReportMetric(st.Greedy, "greedy-s")
		b.ReportMetric(float64(st.Nodes), "nodes")
	}
}

// BenchmarkLargeBudget is the 40×100 search under deterministic node
// budgets: the makespan reached depends only on the budget, the time per
// op on the machine.
func BenchmarkLargeBudget(b *testing.B) {
	p := largeProblem(1)
	for _, sr := range searches {
		for _, budget := range []int64{5_000, 20_000, 100_000, 400_000} {
			b.Run(fmt.Sprintf("search=%s/nodes=%d", sr.name, budget), func(b *testing.B) {
				var plan Plan
				opt := sr.opt
				opt.MaxNodes = budget
				for b.Loop() {
					var err error
					if plan, _, err = Solve(p, opt); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(plan.Makespan, "makespan-s")
			})
		}
	}
}
