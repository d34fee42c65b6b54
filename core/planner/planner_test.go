package planner

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/sparrowfleet/sparrow/core/perfmodel"
)

const mb = perfmodel.MB

// unitModel is a compute-only task type: 2 CPU-seconds at 1 GHz.
func unitModel() perfmodel.Model {
	return perfmodel.Model{Type: "unit", Ref: machine("ref", 1, 1, 100), Groups: []perfmodel.PhaseGroup{
		{Label: "work", Kind: perfmodel.Compute, Phases: 1, Run: 2, CPU: []float64{2}},
	}}
}

func machine(name string, cores int, ghz, disk float64) perfmodel.Machine {
	return perfmodel.Machine{Name: name, Cores: cores, GHz: ghz, DiskRead: disk * mb, DiskWrite: disk * mb, Net: 100 * mb}
}

// s1 is the notes' hand-checked case S1: A and B are sources, C needs
// both; 2 s each on F, 8 s on S (4× slower).
func s1() Problem {
	return Problem{
		Graph: Graph{
			Tasks: []Task{{Name: "A", Type: "unit"}, {Name: "B", Type: "unit"}, {Name: "C", Type: "unit"}},
			Arcs:  []Arc{{From: "A", To: "C"}, {From: "B", To: "C"}},
		},
		Machines: []perfmodel.Machine{machine("F", 1, 1, 100), machine("S", 1, 0.25, 100)},
		Models:   map[string]perfmodel.Model{"unit": unitModel()},
	}
}

func TestS1HandChecked(t *testing.T) {
	p := s1()
	g, err := Greedy(p)
	if err != nil {
		t.Fatal(err)
	}
	if g.Makespan != 10 || !slices.Equal(g.Machine, []int{0, 1, 0}) {
		t.Errorf("greedy %v makespan %v, want FSF = 10", g.Machine, g.Makespan)
	}
	ex, err := Exhaustive(p)
	if err != nil {
		t.Fatal(err)
	}
	// Assignment k puts task t on machine (k / 2^t) mod 2: k = A + 2B + 4C.
	want := map[[3]int]float64{
		{0, 0, 0}: 6, {0, 0, 1}: 12, {0, 1, 0}: 10, {0, 1, 1}: 16,
		{1, 0, 0}: 10, {1, 0, 1}: 16, {1, 1, 0}: 18, {1, 1, 1}: 24,
	}
	for k, c := range ex.Costs {
		a := [3]int{k % 2, k / 2 % 2, k / 4 % 2}
		if c != want[a] {
			t.Errorf("assignment %v costs %v, want %v", a, c, want[a])
		}
	}
	plan, st, err := Solve(p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if plan.Makespan != 6 || !st.Proved || st.Seed != 10 {
		t.Errorf("solve: makespan %v proved %v seed %v, want 6, true, 10", plan.Makespan, st.Proved, st.Seed)
	}
	if !slices.Equal(plan.Order[0], []int{0, 1, 2}) || plan.Start[2] != 4 {
		t.Errorf("plan order %v starts %v, want A B C on F, C at 4", plan.Order, plan.Start)
	}
}

// ioModel reads one channel and writes one, with CPU work that can use
// two cores; it references 100 MB in and out on a 1 GHz, 2-core machine.
func ioModel(name string, cpu float64) perfmodel.Model {
	return perfmodel.Model{Type: name, Ref: machine("ref", 2, 1, 100), Groups: []perfmodel.PhaseGroup{
		{Label: "init", Kind: perfmodel.Init, Phases: 1, Run: 0.2},
		{Label: "read", Kind: perfmodel.IO, Phases: 1, CPU: []float64{cpu / 2, cpu / 2}, Read: []float64{100 * mb}},
		{Label: "write", Kind: perfmodel.IO, Phases: 1, CPU: []float64{0.1}, Write: []float64{100 * mb}},
	}}
}

// randomProblem draws a DAG of n tasks on m machines: random types, input
// tables on random machines, arcs forward in index order (some pipelined),
// some tasks duplicated to make identical twins, and some machines
// duplicated to make identical machines.
func randomProblem(rng *rand.Rand, n, m int) Problem {
	p := Problem{Models: map[string]perfmodel.Model{"light": ioModel("light", 0.5), "heavy": ioModel("heavy", 4), "unit": unitModel()}}
	for i := range m {
		if i > 0 && rng.IntN(2) == 0 {
			twin := p.Machines[rng.IntN(i)]
			twin.Name = string(rune('a' + i))
			p.Machines = append(p.Machines, twin)
			continue
		}
		p.Machines = append(p.Machines, perfmodel.Machine{Name: string(rune('a' + i)), Cores: 1 + rng.IntN(4),
			GHz: 0.5 + rng.Float64()*2, DiskRead: (20 + rng.Float64()*200) * mb, DiskWrite: (20 + rng.Float64()*200) * mb,
			Net: (10 + rng.Float64()*100) * mb})
	}
	types := []string{"light", "heavy", "unit"}
	for i := 0; i < n; i++ {
		name := string(rune('A' + i))
		if i > 0 && rng.IntN(4) == 0 {
			// A twin of the previous task: same type, inputs and arcs.
			prev := p.Graph.Tasks[i-1]
			p.Graph.Tasks = append(p.Graph.Tasks, Task{Name: name, Type: prev.Type, Inputs: prev.Inputs})
			for _, a := range slices.Clone(p.Graph.Arcs) {
				if a.To == prev.Name {
					a.To = name
					p.Graph.Arcs = append(p.Graph.Arcs, a)
				}
			}
			continue
		}
		tk := Task{Name: name, Type: types[rng.IntN(len(types))]}
		if tk.Type != "unit" && (i == 0 || rng.IntN(2) == 0) {
			// Mostly on machine a, so that twins of other machines stay interchangeable.
			at := 0
			if rng.IntN(3) == 0 {
				at = rng.IntN(m)
			}
			tk.Inputs = []Input{{Machine: p.Machines[at].Name, Bytes: float64(rng.IntN(200)+1) * mb}}
		}
		p.Graph.Tasks = append(p.Graph.Tasks, tk)
		for j := range i {
			if rng.IntN(3) != 0 {
				continue
			}
			a := Arc{From: p.Graph.Tasks[j].Name, To: name, Pipelined: rng.IntN(5) == 0}
			if p.Graph.Tasks[j].Type != "unit" && tk.Type != "unit" {
				a.Bytes = float64(rng.IntN(150)+1) * mb
			}
			p.Graph.Arcs = append(p.Graph.Arcs, a)
		}
	}
	return p
}

// TestAssignmentSearchMatchesExhaustive is the baseline's property test:
// on random graphs of up to 9 tasks and 3 machines, the assignment-only
// branch and bound proves the exhaustive assignment optimum, with and
// without symmetry breaking, depth-first and by limited discrepancy
// search with polishing (the large-problem mode).
func TestAssignmentSearchMatchesExhaustive(t *testing.T) {
	cases := 50
	if testing.Short() {
		cases = 12
	}
	rng := rand.New(rand.NewPCG(10, 756))
	for c := range cases {
		n, m := 2+rng.IntN(8), 1+rng.IntN(3)
		if c%4 == 0 {
			n, m = 9, 3
		}
		p := randomProblem(rng, n, m)
		if err := p.Validate(); err != nil {
			t.Fatalf("case %d: generator made an invalid problem: %v", c, err)
		}
		ex, err := Exhaustive(p)
		if err != nil {
			t.Fatalf("case %d: %v", c, err)
		}
		for _, o := range []Options{{}, {NoSymmetry: true}, {Search: "lds"}} {
			o.AssignmentOnly = true
			sym := !o.NoSymmetry
			plan, st, err := Solve(p, o)
			if err != nil {
				t.Fatalf("case %d: %v", c, err)
			}
			if !st.Proved {
				t.Errorf("case %d (%d tasks, %d machines): not proved in %d nodes", c, n, m, st.Nodes)
			}
			if math.Abs(plan.Makespan-ex.Best.Makespan) > 1e-9*ex.Best.Makespan {
				t.Errorf("case %d (%d tasks, %d machines, symmetry %v, search %q): solve %.6f, exhaustive %.6f",
					c, n, m, sym, o.Search, plan.Makespan, ex.Best.Makespan)
			}
			// The plan must be what Evaluate predicts for its assignment.
			again, err := Evaluate(p, plan.Machine)
			if err != nil || again.Makespan != plan.Makespan {
				t.Errorf("case %d: re-evaluated %v (%v), solve said %v", c, again.Makespan, err, plan.Makespan)
			}
			if st.RootBound > plan.Makespan+1e-9 {
				t.Errorf("case %d: root bound %v above the optimum %v", c, st.RootBound, plan.Makespan)
			}
		}
	}
}

// TestBudget checks that a tiny budget stops the search unproved but
// still returns the seed or better.
func TestBudget(t *testing.T) {
	p := randomProblem(rand.New(rand.NewPCG(1, 2)), 9, 3)
	plan, st, err := Solve(p, Options{MaxNodes: 5})
	if err != nil {
		t.Fatal(err)
	}
	if st.Proved || st.Nodes > 5 || plan.Makespan > st.Seed {
		t.Errorf("budget 5: proved %v nodes %d makespan %v seed %v", st.Proved, st.Nodes, plan.Makespan, st.Seed)
	}
	// An injected clock that advances 1 ms per reading stops a search that
	// cannot finish (100 tasks on 40 machines) after about 10 readings.
	clock := 0.0
	big := largeProblem(1)
	plan, st, err = Solve(big, Options{Clock: func() float64 { clock += 0.001; return clock }, TimeLimit: 0.01})
	if err != nil {
		t.Fatal(err)
	}
	if st.Proved || st.Elapsed < 0.01 || plan.Makespan > st.Seed {
		t.Errorf("time limit: proved %v elapsed %v makespan %v seed %v", st.Proved, st.Elapsed, plan.Makespan, st.Seed)
	}
	for i := 1; i < len(st.Improvements); i++ {
		if st.Improvements[i].Makespan >= st.Improvements[i-1].Makespan || st.Improvements[i].Time < st.Improvements[i-1].Time {
			t.Errorf("improvements not strictly better over time: %+v", st.Improvements)
			break
		}
	}
}

func TestValidateGraph(t *testing.T) {
	base := func() Problem {
		return Problem{
			Graph: Graph{Tasks: []Task{{Name: "A", Type: "light", Inputs: []Input{{Machine: "a", Bytes: mb}}}, {Name: "B", Type: "light"}, {Name: "C", Type: "light"}},
				Arcs: []Arc{{From: "A", To: "B", Bytes: mb}, {From: "B", To: "C", Bytes: mb}}},
			Machines: []perfmodel.Machine{machine("a", 1, 1, 50)},
			Models:   map[string]perfmodel.Model{"light": ioModel("light", 1)},
		}
	}
	if err := base().Validate(); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		edit func(*Problem)
		want string
	}{
		{"cycle", func(p *Problem) { p.Graph.Arcs = append(p.Graph.Arcs, Arc{From: "C", To: "A"}) }, "cycle A → B → C → A"},
		{"self loop", func(p *Problem) { p.Graph.Arcs = append(p.Graph.Arcs, Arc{From: "B", To: "B"}) }, "to itself"},
		{"unknown from", func(p *Problem) { p.Graph.Arcs[0].From = "Z" }, `unknown task "Z"`},
		{"unknown to", func(p *Problem) { p.Graph.Arcs[0].To = "Z" }, `unknown task "Z"`},
		{"duplicate arc", func(p *Problem) { p.Graph.Arcs = append(p.Graph.Arcs, p.Graph.Arcs[0]) }, "appears twice"},
		{"duplicate task", func(p *Problem) { p.Graph.Tasks[1].Name = "A" }, `task "A" named twice`},
		{"unnamed task", func(p *Problem) { p.Graph.Tasks[1].Name = "" }, "task 1 has no name"},
		{"unknown type", func(p *Problem) { p.Graph.Tasks[1].Type = "sort" }, `type "sort", which has no model`},
		{"unknown machine", func(p *Problem) { p.Graph.Tasks[0].Inputs[0].Machine = "q" }, `unknown machine "q"`},
		{"negative bytes", func(p *Problem) { p.Graph.Arcs[1].Bytes = -1 }, "has -1 bytes"},
		{"nan bytes", func(p *Problem) { p.Graph.Arcs[1].Bytes = math.NaN() }, "NaN bytes"},
		{"bad read channel", func(p *Problem) { p.Graph.Arcs[1].ReadChannel = 3 }, "read channel 3"},
		{"bad input channel", func(p *Problem) { p.Graph.Tasks[0].Inputs[0].Channel = 2 }, "read channel 2"},
		{"no tasks", func(p *Problem) { p.Graph = Graph{} }, "no tasks"},
		{"no machines", func(p *Problem) { p.Machines = nil }, "no machines"},
		{"bad machine", func(p *Problem) { p.Machines[0].Cores = 0 }, "cores 0"},
		{"model name", func(p *Problem) { p.Models["other"] = unitModel() }, `model under "other"`},
	}
	for _, c := range cases {
		p := base()
		c.edit(&p)
		err := p.Validate()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.want)
		}
		if _, _, err := Solve(p, Options{MaxNodes: 10}); err == nil {
			t.Errorf("%s: Solve accepted an invalid problem", c.name)
		}
	}
}
