package quincy

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/sparrowfleet/sparrow/core/flow"
)

// randomState makes a small valid snapshot: up to 3 racks, 6 computers of
// 1–2 slots, 3 jobs (at most half the slots) (most with roots) of up to maxTasks workers whose
// blocks sit on 1–3 computers; some workers run.
func randomState(rng *rand.Rand, maxTasks int) *State {
	racks := 1 + rng.IntN(3)
	s := &State{Now: time.Duration(rng.IntN(600)) * time.Second, Cluster: Cluster{Racks: racks}}
	nc := racks + 1 + rng.IntN(3)
	used := make([]int, nc)
	for m := range nc {
		rack := m % racks
		s.Cluster.Computers = append(s.Cluster.Computers, Computer{Rack: rack, Slots: 1 + rng.IntN(2)*rng.IntN(2)})
	}
	slots := func(m int) int { return s.Cluster.Computers[m].slots() }
	freeSlot := func() int {
		for _, m := range rng.Perm(nc) {
			if used[m] < slots(m) {
				used[m]++
				return m
			}
		}
		return -1
	}
	total := 0
	for m := range nc {
		total += slots(m)
	}
	// At most one job per two slots: §3.4's M >= 2K, which admission
	// control keeps (each job needs a slot for its root and one worker).
	for range 1 + rng.IntN(max(1, min(3, total/2))) {
		var job Job
		if rng.IntN(5) > 0 {
			job.Root = &Root{Computer: -1}
			if rng.IntN(3) > 0 {
				job.Root.Computer = freeSlot()
			}
		}
		for range rng.IntN(maxTasks + 1) {
			var t Task
			for range rng.IntN(3) {
				b := Block{Bytes: int64(1+rng.IntN(8)) * gb / 2}
				for range 1 + rng.IntN(3) {
					b.Replicas = append(b.Replicas, rng.IntN(nc))
				}
				t.Input = append(t.Input, b)
			}
			t.Since = s.Now - time.Duration(rng.Int64N(int64(s.Now)+1))
			t.WaitedBefore = time.Duration(rng.IntN(30)) * time.Second
			if rng.IntN(2) == 0 {
				t.RanBefore = time.Duration(rng.IntN(30)) * time.Second
			}
			if rng.IntN(2) == 0 {
				if m := freeSlot(); m >= 0 {
					t.State, t.Computer = Running, m
				}
			}
			job.Tasks = append(job.Tasks, t)
		}
		s.Jobs = append(s.Jobs, job)
	}
	return s
}

// bruteForce is an oracle independent of the flow solver: it tries every
// choice of one outgoing arc per worker, checks that the aggregators can
// route the choices to free slots, and returns the least total arc cost,
// or false if no choice is feasible. Roots are pinned or go through X, as
// in the graph; aggregator arcs cost 0, so a choice's cost is the sum of
// its task arcs' costs. The feasibility check for the aggregators is
// exact: rack l can take its rack-pool tasks if they fit in the slots its
// computers have left, and X's tasks fit if Σ_l min(rack l's slots,
// what rack l has left) covers them (X → R_l carries at most the rack's
// slots).
func bruteForce(g *Graph) (int64, bool) {
	s := g.State
	type choice struct {
		arcs []int
	}
	var tasks []choice
	for j := range s.Jobs {
		for n := range s.Jobs[j].Tasks {
			first, end := g.ArcsOf(j, n)
			var c choice
			for a := first; a < end; a++ {
				if g.Net.Arc(a).Upper > 0 {
					c.arcs = append(c.arcs, a)
				}
			}
			tasks = append(tasks, c)
		}
	}
	best, found := int64(0), false
	pick := make([]int, len(tasks))
	var rec func(i int)
	rec = func(i int) {
		if i < len(tasks) {
			for _, a := range tasks[i].arcs {
				pick[i] = a
				rec(i + 1)
			}
			return
		}
		c := &s.Cluster
		left := make([]int, len(c.Computers))
		for m, comp := range c.Computers {
			left[m] = comp.slots()
		}
		rackPool := make([]int, c.Racks)
		xPool := 0
		unsched := make([]int, len(s.Jobs))
		var cost int64
		for _, job := range s.Jobs {
			if job.Root != nil {
				if m := job.Root.Computer; m >= 0 {
					left[m]--
				} else {
					xPool++
				}
			}
		}
		for _, a := range pick {
			info, arc := g.Arcs[a], g.Net.Arc(a)
			cost += arc.Cost
			switch info.Kind {
			case UnscheduledArc:
				unsched[info.Job]++
			case ComputerArc, RunningArc:
				left[info.Computer]--
			case RackArc:
				rackPool[info.Rack]++
			case ClusterArc:
				xPool++
			}
		}
		for j, job := range s.Jobs {
			nj := len(job.Tasks)
			if unsched[j] < nj-g.Max[j] || unsched[j] > nj-g.Min[j] {
				return
			}
		}
		rackLeft := make([]int, c.Racks)
		for m, l := range left {
			if l < 0 {
				return
			}
			rackLeft[c.Computers[m].Rack] += l
		}
		xRoom := 0
		for l := range rackLeft {
			if rackPool[l] > rackLeft[l] {
				return
			}
			xRoom += min(g.topo.rackSlots[l], rackLeft[l]-rackPool[l])
		}
		if xPool > xRoom {
			return
		}
		if !found || cost < best {
			best, found = cost, true
		}
	}
	rec(0)
	return best, found
}

// checkSchedule checks a schedule against the snapshot and the graph's
// bounds, independently of how it was read: every worker decided once,
// actions consistent with states, fairness bounds, no computer over its
// slots, no preemption without P, placed roots kept, and the flow's cost
// equal to the sum of the arcs it uses.
func checkSchedule(g *Graph, sol flow.Solution, sch *Schedule) error {
	s := g.State
	c := &s.Cluster
	load := make([]int, len(c.Computers))
	for j, job := range s.Jobs {
		if job.Root != nil {
			r := sch.Roots[j]
			if r.Computer < 0 {
				return fmt.Errorf("job %d's root is not placed", j)
			}
			if job.Root.Computer >= 0 && (r.Action != Keep || r.Computer != job.Root.Computer) {
				return fmt.Errorf("job %d's placed root: %+v", j, r)
			}
			load[r.Computer]++
		}
		running := 0
		for n, t := range job.Tasks {
			d := sch.Tasks[j][n]
			switch d.Action {
			case Wait, Start:
				if t.State != Waiting {
					return fmt.Errorf("job %d task %d: %v for a running task", j, n, d.Action)
				}
			case Keep, Move, Preempt:
				if t.State != Running {
					return fmt.Errorf("job %d task %d: %v for a waiting task", j, n, d.Action)
				}
				if (d.Action == Keep) != (d.Computer == t.Computer) {
					return fmt.Errorf("job %d task %d: %v to computer %d from %d", j, n, d.Action, d.Computer, t.Computer)
				}
			}
			if (d.Computer >= 0) != (d.Action == Start || d.Action == Keep || d.Action == Move) {
				return fmt.Errorf("job %d task %d: %+v", j, n, d)
			}
			if d.Computer >= 0 {
				running++
				load[d.Computer]++
			}
			if !g.Policy.Preempts() && (d.Action == Move || d.Action == Preempt) {
				return fmt.Errorf("policy %v preempts job %d task %d", g.Policy, j, n)
			}
		}
		if running != sch.Running[j] || running < g.Min[j] || running > g.Max[j] {
			return fmt.Errorf("job %d runs %d workers (schedule says %d), bounds [%d, %d]", j, running, sch.Running[j], g.Min[j], g.Max[j])
		}
	}
	for m, l := range load {
		if l > c.Computers[m].slots() {
			return fmt.Errorf("computer %d runs %d tasks on %d slots", m, l, c.Computers[m].slots())
		}
	}
	// The unit of every task reaches the sink: conservation at every node
	// and the sink's inflow equals the task and root supplies less the
	// U_j supplies.
	bal := make([]int64, g.Net.NumNodes())
	var cost int64
	for i, f := range sol.Flow {
		a := g.Net.Arc(i)
		if f < a.Lower || f > a.Upper {
			return fmt.Errorf("arc %d carries %d outside [%d, %d]", i, f, a.Lower, a.Upper)
		}
		bal[a.From] -= f
		bal[a.To] += f
		cost += f * a.Cost
	}
	for v := range bal {
		if bal[v]+g.Net.Supply(v) != 0 {
			return fmt.Errorf("node %d unbalanced by %d", v, bal[v]+g.Net.Supply(v))
		}
	}
	if cost != sol.Cost || cost != sch.Cost {
		return fmt.Errorf("flow cost %d, solution says %d, schedule %d", cost, sol.Cost, sch.Cost)
	}
	var into int64
	for m := range c.Computers {
		into += sol.Flow[g.SinkArcIndex[m]]
	}
	placed := 0
	for j := range s.Jobs {
		placed += sch.Running[j]
		if s.Jobs[j].Root != nil {
			placed++
		}
	}
	if into != int64(placed) {
		return fmt.Errorf("%d units reach S through computers, but %d tasks are placed", into, placed)
	}
	return nil
}

// TestRandomInstances builds, solves and reads random snapshots under
// every policy, checks every schedule, and compares the optimal cost with
// the brute-force oracle on the small ones and with the untransformed
// (native lower bound) graph on all.
func TestRandomInstances(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	native := DefaultParams()
	native.NativeLowerBounds = true
	oracled, built := 0, 0
	for c := range 400 {
		s := randomState(rng, 3)
		for _, pol := range Policies {
			g, err := Build(s, pol, DefaultParams())
			if err != nil {
				// Only the non-preemptive policies may lack room for an
				// unplaced root (the precheck says so, see
				// TestInfeasibleNonPreemptive).
				if pol.Preempts() {
					t.Fatalf("case %d %v: %v", c, pol, err)
				}
				continue
			}
			built++
			sol, err := flow.Solve(g.Net)
			if err != nil {
				t.Fatalf("case %d %v: solve: %v", c, pol, err)
			}
			sch, err := g.ReadSchedule(sol)
			if err != nil {
				t.Fatalf("case %d %v: %v", c, pol, err)
			}
			if err := checkSchedule(g, sol, sch); err != nil {
				t.Fatalf("case %d %v: %v", c, pol, err)
			}
			if n := countTasks(s); n <= 7 {
				want, ok := bruteForce(g)
				if !ok || want != sol.Cost {
					t.Fatalf("case %d %v: solver cost %d, brute force %d (feasible %v)", c, pol, sol.Cost, want, ok)
				}
				oracled++
			}
			gn, err := Build(s, pol, native)
			if err != nil {
				t.Fatal(err)
			}
			soln, err := flow.Solve(gn.Net)
			if err != nil {
				t.Fatalf("case %d %v native: %v", c, pol, err)
			}
			if soln.Cost != sol.Cost {
				t.Fatalf("case %d %v: native lower bounds cost %d, transformed %d", c, pol, soln.Cost, sol.Cost)
			}
		}
	}
	if oracled < 500 || built < 1500 {
		t.Fatalf("only %d graphs built and %d checked by brute force", built, oracled)
	}
}

func countTasks(s *State) int {
	n := 0
	for _, j := range s.Jobs {
		n += len(j.Tasks)
	}
	return n
}

// TestRandomLarger checks schedules on larger random synthetic snapshots
// (no oracle: too big for brute force), under every policy.
func TestRandomLarger(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for c := range 20 {
		cfg := SyntheticConfig{Computers: 10 + rng.IntN(40), Racks: 1 + rng.IntN(5), Jobs: 1 + rng.IntN(6), Slots: 1 + rng.IntN(2)}
		cfg.Tasks = cfg.Jobs + rng.IntN(120)
		cfg.Busy = rng.Float64()
		s, err := Synthetic(cfg, rng)
		if err != nil {
			t.Fatal(err)
		}
		for _, pol := range Policies {
			g, err := Build(s, pol, DefaultParams())
			if err != nil {
				t.Fatalf("case %d %v: %v", c, pol, err)
			}
			sol, err := flow.Solve(g.Net)
			if err != nil {
				t.Fatalf("case %d %v: %v", c, pol, err)
			}
			sch, err := g.ReadSchedule(sol)
			if err != nil {
				t.Fatalf("case %d %v: %v", c, pol, err)
			}
			if err := checkSchedule(g, sol, sch); err != nil {
				t.Fatalf("case %d %v: %v", c, pol, err)
			}
		}
	}
}
