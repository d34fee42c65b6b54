package planner

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/sparrowfleet/sparrow/core/perfmodel"
)

// orderOracle is the exhaustive optimum over assignments and machine
// orders, by plain enumeration: every assignment, and for it every
// permutation of each machine's tasks in which no task comes after one of
// its descendants (that order could never start the descendant); each
// combination is simulated, and those that deadlock through other
// machines are skipped. Two shortcuts keep it fast, both from isolated run
// times (contention only slows a task) and heads and tails along the arcs:
// assignments are taken in order of a lower bound on every order's
// makespan, stopping at the first whose bound reaches the best makespan
// found; and a machine's sequence is not extended once its own timing
// (one task at a time, none before its head, each followed by its tail)
// reaches it. It shares only the simulation and the isolated run times
// with Solve.
func orderOracle(t *testing.T, p Problem) (best float64, evaluated int) {
	t.Helper()
	in, err := compile(p)
	if err != nil {
		t.Fatal(err)
	}
	// desc[u][v]: v is reachable from u by arcs.
	desc := make([][]bool, in.n)
	for u := range in.n {
		desc[u] = make([]bool, in.n)
		stack := slices.Clone(in.succ[u])
		for len(stack) > 0 {
			v := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if !desc[u][v] {
				desc[u][v] = true
				stack = append(stack, in.succ[v]...)
			}
		}
	}
	type candidate struct {
		load       float64
		iso        []float64
		head, tail []float64
	}
	// timing computes an assignment's isolated run times, heads (longest
	// isolated path before a task starts) and tails (after it ends) along
	// the arcs, in priority order, which is topological; a machine's first
	// task starts no earlier than the least head there, and its last is
	// followed by the least tail.
	timing := func(assign []int) candidate {
		c := candidate{iso: make([]float64, in.n), head: make([]float64, in.n), tail: make([]float64, in.n)}
		for x, m := range assign {
			r, err := in.run(x, m, assign)
			if err != nil {
				t.Fatal(err)
			}
			c.iso[x] = r.iso
		}
		for _, x := range in.prio {
			for _, a := range in.in[x] {
				if a.pipe { // x may start once its producer has started
					c.head[x] = max(c.head[x], c.head[a.from])
				} else {
					c.head[x] = max(c.head[x], c.head[a.from]+c.iso[a.from])
				}
			}
		}
		for i := in.n - 1; i >= 0; i-- {
			x := in.prio[i]
			for _, a := range in.in[x] {
				if a.pipe { // x finishes no earlier than its producer, then its tail
					c.tail[a.from] = max(c.tail[a.from], c.tail[x])
				} else {
					c.tail[a.from] = max(c.tail[a.from], c.tail[x]+c.iso[x])
				}
			}
		}
		for m := range in.m {
			first, load, last := math.Inf(1), 0.0, math.Inf(1)
			for x, a := range assign {
				if a == m {
					first, load, last = min(first, c.head[x]), load+c.iso[x], min(last, c.tail[x])
				}
			}
			if load > 0 {
				c.load = max(c.load, first+load+last)
			}
		}
		return c
	}
	// Assignment k puts task x on machine (k / m^x) mod m.
	decode := func(k int, assign []int) {
		for x := range in.n {
			assign[x] = k % in.m
			k /= in.m
		}
	}
	total := 1
	for range in.n {
		total *= in.m
	}
	type ranked struct {
		k    int
		load float64
	}
	all := make([]ranked, total)
	assign := make([]int, in.n)
	for k := range total {
		decode(k, assign)
		all[k] = ranked{k, timing(assign).load}
	}
	slices.SortFunc(all, func(a, b ranked) int {
		if c := cmp.Compare(a.load, b.load); c != 0 {
			return c
		}
		return cmp.Compare(a.k, b.k)
	})

	best = math.Inf(1)
	order := make([][]int, in.m)
	var cur candidate
	// perms fills order[m] with every admissible permutation of tasks and
	// then moves to machine m+1. A machine finishing its sequence so far
	// at free (each task starting no earlier than its head), then running
	// its other tasks, makes any completion last at least free plus their
	// run times; and each task is followed by its tail. A prefix whose
	// bound reaches the best makespan is not extended.
	var perms func(m int, tasks []int, free float64)
	var machine func(m int)
	perms = func(m int, tasks []int, free float64) {
		if len(tasks) == 0 {
			machine(m + 1)
			return
		}
		rest := 0.0
		for _, x := range tasks {
			rest += cur.iso[x]
		}
		for i, x := range tasks {
			f := max(free, cur.head[x]) + cur.iso[x]
			if f+cur.tail[x] >= best || f+rest-cur.iso[x] >= best {
				continue
			}
			admissible := true
			for _, y := range tasks {
				if y != x && desc[y][x] {
					admissible = false // an ancestor of x would come after it
					break
				}
			}
			if !admissible {
				continue
			}
			order[m] = append(order[m], x)
			others := append(slices.Clone(tasks[:i]), tasks[i+1:]...)
			perms(m, others, f)
			order[m] = order[m][:len(order[m])-1]
		}
	}
	machine = func(m int) {
		if m == in.m {
			plan, err := in.simulateOrder(order)
			if err != nil {
				if !strings.Contains(err.Error(), "deadlock") {
					t.Fatal(err)
				}
				return
			}
			evaluated++
			best = min(best, plan.Makespan)
			return
		}
		var tasks []int
		for x, a := range assign {
			if a == m {
				tasks = append(tasks, x)
			}
		}
		order[m] = order[m][:0]
		perms(m, tasks, 0)
	}
	for _, c := range all {
		if c.load >= best {
			break
		}
		decode(c.k, assign)
		cur = timing(assign)
		machine(0)
	}
	return best, evaluated
}

// counterexample is the smallest problem on which the assignment-only
// search misses the optimum: X takes 4 s on F and 16 s on S, A 2/8, B 1/4,
// A → B. Under the priority rule (longest remaining path first) F runs X
// before A whenever both are there, so the best assignment gives 7 s;
// A then X on F with B on S gives 6 s, F never idle.
func counterexample() Problem {
	unit := func(name string, cpu float64) perfmodel.Model {
		return perfmodel.Model{Type: name, Ref: machine("ref", 1, 1, 100), Groups: []perfmodel.PhaseGroup{
			{Label: "work", Kind: perfmodel.Compute, Phases: 1, Run: cpu, CPU: []float64{cpu}},
		}}
	}
	return Problem{
		Graph: Graph{
			Tasks: []Task{{Name: "X", Type: "x"}, {Name: "A", Type: "a"}, {Name: "B", Type: "b"}},
			Arcs:  []Arc{{From: "A", To: "B"}},
		},
		Machines: []perfmodel.Machine{machine("F", 1, 1, 100), machine("S", 1, 0.25, 100)},
		Models:   map[string]perfmodel.Model{"x": unit("x", 4), "a": unit("a", 2), "b": unit("b", 1)},
	}
}

func TestCounterexampleOrders(t *testing.T) {
	p := counterexample()
	base, bst, err := Solve(p, Options{AssignmentOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	plan, st, err := Solve(p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	oracle, _ := orderOracle(t, p)
	if base.Makespan != 7 || !bst.Proved {
		t.Errorf("assignment-only: %v (proved %v), want 7 proved", base.Makespan, bst.Proved)
	}
	if plan.Makespan != 6 || !st.Proved || oracle != 6 {
		t.Errorf("orders: %v (proved %v), oracle %v, want 6 proved", plan.Makespan, st.Proved, oracle)
	}
	// A then X on F, B on S.
	if !slices.Equal(plan.Order[0], []int{1, 0}) || !slices.Equal(plan.Order[1], []int{2}) {
		t.Errorf("orders %v, want [[A X] [B]]", plan.Order)
	}
}

// TestSolveMatchesOrderOracle is the property test of the order search:
// on 200 random graphs of 4-8 tasks on 2-4 machines, half of them with
// data on the arcs and half pure precedence, Solve proves the oracle's
// optimum over every assignment and order; the plan re-evaluates to its
// makespan; the root bound stays below it; and the assignment-only
// baseline is never better.
func TestSolveMatchesOrderOracle(t *testing.T) {
	rng := rand.New(rand.NewPCG(30, 756))
	total, better := 0, 0
	for c := range 200 {
		n, m := 4+rng.IntN(5), 2+rng.IntN(3)
		p := randomProblem(rng, n, m)
		if c%2 == 1 {
			for i := range p.Graph.Arcs {
				p.Graph.Arcs[i].Bytes = 0
			}
		}
		oracle, count := orderOracle(t, p)
		total += count
		plan, st, err := Solve(p, Options{})
		if err != nil {
			t.Fatalf("case %d: %v", c, err)
		}
		if !st.Proved {
			t.Errorf("case %d (%d tasks, %d machines): not proved in %d nodes", c, n, m, st.Nodes)
		}
		if math.Abs(plan.Makespan-oracle) > 1e-9*oracle {
			t.Errorf("case %d (%d tasks, %d machines): solve %.6f, oracle %.6f", c, n, m, plan.Makespan, oracle)
		}
		again, err := EvaluateOrder(p, plan.Order)
		if err != nil || again.Makespan != plan.Makespan {
			t.Errorf("case %d: re-evaluated %v (%v), solve said %v", c, again.Makespan, err, plan.Makespan)
		}
		if st.RootBound > plan.Makespan*(1+1e-9) {
			t.Errorf("case %d: root bound %v above the optimum %v", c, st.RootBound, plan.Makespan)
		}
		base, _, err := Solve(p, Options{AssignmentOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		if base.Makespan < plan.Makespan*(1-1e-9) {
			t.Errorf("case %d: assignment-only %v beats orders %v", c, base.Makespan, plan.Makespan)
		}
		if base.Makespan > plan.Makespan*(1+1e-9) {
			better++
		}
	}
	t.Logf("%d schedules simulated by the oracle; orders beat the assignment-only optimum on %d of 200", total, better)
}
