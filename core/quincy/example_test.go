package quincy

import (
	"testing"
	"time"

	"github.com/sparrowfleet/sparrow/core/flow"
)

const gb = 1_000_000_000

// blk is a block of size GB on the given computers.
func blk(size int64, on ...int) Block { return Block{Bytes: size * gb, Replicas: on} }

// workedExample is the notes' worked example (quincy-notes.md §3), with
// computers C1..C4 numbered 0..3 and racks R1, R2 numbered 0, 1. Now is
// 100 s; ν and θ are given by the tasks' times:
//
//	job 0 (root on C1): a: 4 GB on C2, running on C2 for 3 s, waited 4 s;
//	                    b: 4 GB on C4, waiting 10 s;
//	                    c: 2 GB on C2 + 2 GB on C4, waiting 10 s.
//	job 1 (root on C3): d: 4 GB on C2, running on C4 for 3 s, waited 6 s;
//	                    e: 2 GB on C3, waiting 4 s.
func workedExample(thetaA time.Duration) *State {
	now := 100 * time.Second
	return &State{
		Now: now,
		Cluster: Cluster{Racks: 2, Computers: []Computer{
			{Rack: 0}, {Rack: 0}, {Rack: 1}, {Rack: 1},
		}},
		Jobs: []Job{
			{Root: &Root{Computer: 0}, Tasks: []Task{
				{Input: []Block{blk(4, 1)}, State: Running, Computer: 1, Since: now - thetaA, WaitedBefore: 4 * time.Second},
				{Input: []Block{blk(4, 3)}, Since: now - 10*time.Second},
				{Input: []Block{blk(2, 1), blk(2, 3)}, Since: now - 10*time.Second},
			}},
			{Root: &Root{Computer: 2}, Tasks: []Task{
				{Input: []Block{blk(4, 1)}, State: Running, Computer: 3, Since: now - 3*time.Second, WaitedBefore: 6 * time.Second},
				{Input: []Block{blk(2, 2)}, Since: now - 4*time.Second},
			}},
		},
	}
}

// wantArc is an expected arc, in paper cost units (× CostUnit in the net).
type wantArc struct {
	kind      ArcKind
	from, to  string
	lo, up    int64
	paperCost int64
}

// nodeNames names g's nodes as the paper does, for readable failures.
func nodeNames(g *Graph) map[int]string {
	names := map[int]string{g.ClusterNode: "X", g.SinkNode: "S"}
	tasks := [][]string{{"a", "b", "c"}, {"d", "e"}}
	for j := range g.TaskNode {
		names[g.RootNode[j]] = []string{"r1", "r2"}[j]
		names[g.UnscheduledNode[j]] = []string{"U1", "U2"}[j]
		for n, v := range g.TaskNode[j] {
			names[v] = tasks[j][n]
		}
	}
	for l, v := range g.RackNode {
		names[v] = []string{"R1", "R2"}[l]
	}
	for m, v := range g.ComputerNode {
		names[v] = []string{"C1", "C2", "C3", "C4"}[m]
	}
	return names
}

func checkArcs(t *testing.T, g *Graph, want []wantArc) {
	t.Helper()
	names := nodeNames(g)
	if g.Net.NumArcs() != len(want) {
		t.Fatalf("%d arcs, want %d", g.Net.NumArcs(), len(want))
	}
	for i, w := range want {
		a := g.Net.Arc(i)
		got := wantArc{g.Arcs[i].Kind, names[a.From], names[a.To], a.Lower, a.Upper, a.Cost}
		w.paperCost *= CostUnit
		if got != w {
			t.Errorf("arc %d: got %+v, want %+v", i, got, w)
		}
	}
}

// fixedArcs are the arcs every variant shares, after the task arcs:
// U_j → S (capacities per variant), X → R_l (P_l = 2), R_l → C_m and
// C_m → S (capacity 1), all of cost 0.
func fixedArcs(u1, u2 int64) []wantArc {
	return []wantArc{
		{FairArc, "U1", "S", 0, u1, 0}, {FairArc, "U2", "S", 0, u2, 0},
		{ClusterRackArc, "X", "R1", 0, 2, 0}, {ClusterRackArc, "X", "R2", 0, 2, 0},
		{RackComputerArc, "R1", "C1", 0, 1, 0}, {RackComputerArc, "R1", "C2", 0, 1, 0},
		{RackComputerArc, "R2", "C3", 0, 1, 0}, {RackComputerArc, "R2", "C4", 0, 1, 0},
		{SinkArc, "C1", "S", 0, 1, 0}, {SinkArc, "C2", "S", 0, 1, 0},
		{SinkArc, "C3", "S", 0, 1, 0}, {SinkArc, "C4", "S", 0, 1, 0},
	}
}

// TestWorkedExampleQFP checks the notes' worked example under QFP arc by
// arc, with every cost computed by hand from the Appendix (ψ = 1, ξ = 2,
// ω = 0.5; sizes in GB):
//
//	a: D = 4 on C2. Worst computer: any of rack R2, which reads all 4 GB
//	   across the core: (ℛ^X, 𝒳^X) = (0, 4), α = 2·4 = 8. Preferred rack
//	   R1: its worst computer C1 reads 4 GB across the rack switch, ρ = 4.
//	   Running on its preferred C2: d* = 0, p* = θ = 3, so −3. υ = ω·4 = 2.
//	b: 4 GB on C4: α = 8 (rack R1 reads all across the core), ρ_R2 = 4
//	   (C3), γ_C4 = 0, υ = ω·10 = 5.
//	c: 2 GB on C2 and C4, each 50% > δ^c: both computers and both racks
//	   preferred. On C1: 2 GB across R1's switch and 2 across the core:
//	   1·2 + 2·2 = 6 = α = ρ_R1 = ρ_R2. γ_C2 = γ_C4 = 2·2 = 4. υ = 5.
//	d: 4 GB on C2, running on C4, which is off its lists (as is rack R2),
//	   so d* uses (𝒳^X/P, 𝒳^X) = (4/2, 4): 2 + 8 = 10, minus θ = 3: 7.
//	   α = 8, ρ_R1 = 4, γ_C2 = 0, υ = ω·6 = 3.
//	e: 2 GB on C3: α = 2·2 = 4 (rack R1), ρ_R2 = 2 (C4 reads it across
//	   R2's switch), γ_C3 = 0, υ = ω·4 = 2.
//
// K = 2 jobs share the M' = 2 computers free of roots: A = (1, 1), so
// E = F = 1: U1 supplies 1 − 3 = −2, U2 1 − 2 = −1, S −(2 + 2) = −4,
// U_j → S capacity 0. The unique optimum costs 9: kill a, move d to C2,
// start b on C4.
func TestWorkedExampleQFP(t *testing.T) {
	g, err := Build(workedExample(3*time.Second), QFP, DefaultParams())
	if err != nil {
		t.Fatal(err)
	}
	if g.Net.NumNodes() != 17 {
		t.Errorf("%d nodes, want 2J + N + L + M + 2 = 17", g.Net.NumNodes())
	}
	want := []wantArc{
		{RootArc, "r1", "C1", 0, 1, 0},
		{UnscheduledArc, "a", "U1", 0, 1, 2}, {ClusterArc, "a", "X", 0, 1, 8}, {RackArc, "a", "R1", 0, 1, 4}, {RunningArc, "a", "C2", 0, 1, -3},
		{UnscheduledArc, "b", "U1", 0, 1, 5}, {ClusterArc, "b", "X", 0, 1, 8}, {RackArc, "b", "R2", 0, 1, 4}, {ComputerArc, "b", "C4", 0, 1, 0},
		{UnscheduledArc, "c", "U1", 0, 1, 5}, {ClusterArc, "c", "X", 0, 1, 6}, {RackArc, "c", "R1", 0, 1, 6}, {RackArc, "c", "R2", 0, 1, 6},
		{ComputerArc, "c", "C2", 0, 1, 4}, {ComputerArc, "c", "C4", 0, 1, 4},
		{RootArc, "r2", "C3", 0, 1, 0},
		{UnscheduledArc, "d", "U2", 0, 1, 3}, {ClusterArc, "d", "X", 0, 1, 8}, {RackArc, "d", "R1", 0, 1, 4}, {ComputerArc, "d", "C2", 0, 1, 0}, {RunningArc, "d", "C4", 0, 1, 7},
		{UnscheduledArc, "e", "U2", 0, 1, 2}, {ClusterArc, "e", "X", 0, 1, 4}, {RackArc, "e", "R2", 0, 1, 2}, {ComputerArc, "e", "C3", 0, 1, 0},
	}
	checkArcs(t, g, append(want, fixedArcs(0, 0)...))
	supplies := map[string]int64{"r1": 1, "r2": 1, "a": 1, "b": 1, "c": 1, "d": 1, "e": 1, "U1": -2, "U2": -1, "S": -4}
	for v, name := range nodeNames(g) {
		if got := g.Net.Supply(v); got != supplies[name] {
			t.Errorf("supply of %s = %d, want %d", name, got, supplies[name])
		}
	}
	sch := solveAndRead(t, g)
	if sch.Cost != 9*CostUnit {
		t.Errorf("cost %d, want 9 units", sch.Cost)
	}
	wantTasks := [][]Decision{
		{{Preempt, -1, ViaNone}, {Start, 3, ViaComputer}, {Wait, -1, ViaNone}},
		{{Move, 1, ViaComputer}, {Wait, -1, ViaNone}},
	}
	checkDecisions(t, sch, wantTasks)
	if len(sch.Preempted) != 2 || sch.Preempted[0] != (TaskRef{0, 0}) || sch.Preempted[1] != (TaskRef{1, 0}) {
		t.Errorf("preempted %v, want a and d", sch.Preempted)
	}
	if sch.Started != 1 || sch.Moved != 1 || sch.Killed != 1 || sch.Waiting != 2 || sch.Kept != 0 {
		t.Errorf("counts %+v", sch)
	}
	for j, r := range sch.Roots {
		if r.Action != Keep || r.Computer != []int{0, 2}[j] {
			t.Errorf("root %d: %+v, want kept", j, r)
		}
	}
}

func solveAndRead(t *testing.T, g *Graph) *Schedule {
	t.Helper()
	sol, err := flow.Solve(g.Net)
	if err != nil {
		t.Fatalf("solve: %v", err)
	}
	sch, err := g.ReadSchedule(sol)
	if err != nil {
		t.Fatalf("read schedule: %v", err)
	}
	return sch
}

// viaAny in a wanted Decision accepts any route: where two routes to the
// computer cost the same, which one the solver returns is its choice.
const viaAny Via = 255

func checkDecisions(t *testing.T, sch *Schedule, want [][]Decision) {
	t.Helper()
	for j := range want {
		for n, w := range want[j] {
			got := sch.Tasks[j][n]
			if w.Via == viaAny {
				got.Via = viaAny
			}
			if got != w {
				t.Errorf("job %d task %d: %+v, want %+v", j, n, got, w)
			}
		}
	}
}

// TestWorkedExampleVariants runs the notes' variants of the example.
func TestWorkedExampleVariants(t *testing.T) {
	exact := DefaultParams()
	exact.ExactRunningCost = true
	native := DefaultParams()
	native.NativeLowerBounds = true
	for _, tc := range []struct {
		name   string
		theta  time.Duration
		pol    Policy
		p      Params
		arcs   int
		cost   int64 // paper units
		unitsU []int64
		tasks  [][]Decision
	}{
		// QP: N = 5 > M' = 2, so E = (1, 1), F = (3, 2): U_j supply 0,
		// caps 2 and 1. Same schedule, cost 9.
		{"QP", 3 * time.Second, QP, DefaultParams(), 37, 9, []int64{2, 1},
			[][]Decision{{{Preempt, -1, ViaNone}, {Start, 3, ViaComputer}, {Wait, -1, ViaNone}}, {{Move, 1, ViaComputer}, {Wait, -1, ViaNone}}}},
		// QF and Q: a and d keep only their running arcs; the status quo
		// costs −3 + 7 + 5 + 5 + 2 = 16 on 30 arcs.
		{"QF", 3 * time.Second, QF, DefaultParams(), 30, 16, []int64{0, 0},
			[][]Decision{{{Keep, 1, ViaComputer}, {Wait, -1, ViaNone}, {Wait, -1, ViaNone}}, {{Keep, 3, ViaComputer}, {Wait, -1, ViaNone}}}},
		{"Q", 3 * time.Second, Q, DefaultParams(), 30, 16, []int64{2, 1},
			[][]Decision{{{Keep, 1, ViaComputer}, {Wait, -1, ViaNone}, {Wait, -1, ViaNone}}, {{Keep, 3, ViaComputer}, {Wait, -1, ViaNone}}}},
		// θ_a = 8: keeping a (−8) and starting e on C4 through R2 (2)
		// costs −8 + 2 + 5 + 5 + 3 = 7 and wins.
		{"QFP theta 8", 8 * time.Second, QFP, DefaultParams(), 37, 7, []int64{0, 0},
			[][]Decision{{{Keep, 1, ViaComputer}, {Wait, -1, ViaNone}, {Wait, -1, ViaNone}}, {{Preempt, -1, ViaNone}, {Start, 3, ViaRack}}}},
		// Exact d*: d on C4 reads 4 GB across the core, 8 − 3 = 5; QFP
		// still costs 9, QF's status quo 14.
		{"QFP exact", 3 * time.Second, QFP, exact, 37, 9, []int64{0, 0},
			[][]Decision{{{Preempt, -1, ViaNone}, {Start, 3, ViaComputer}, {Wait, -1, ViaNone}}, {{Move, 1, ViaComputer}, {Wait, -1, ViaNone}}}},
		{"QF exact", 3 * time.Second, QF, exact, 30, 14, []int64{0, 0},
			[][]Decision{{{Keep, 1, ViaComputer}, {Wait, -1, ViaNone}, {Wait, -1, ViaNone}}, {{Keep, 3, ViaComputer}, {Wait, -1, ViaNone}}}},
		// The untransformed bounds give the same optimum.
		{"QFP native", 3 * time.Second, QFP, native, 37, 9, []int64{2, 1},
			[][]Decision{{{Preempt, -1, ViaNone}, {Start, 3, ViaComputer}, {Wait, -1, ViaNone}}, {{Move, 1, ViaComputer}, {Wait, -1, ViaNone}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g, err := Build(workedExample(tc.theta), tc.pol, tc.p)
			if err != nil {
				t.Fatal(err)
			}
			if g.Net.NumArcs() != tc.arcs {
				t.Errorf("%d arcs, want %d", g.Net.NumArcs(), tc.arcs)
			}
			for j, a := range g.FairArcIndex {
				if up := g.Net.Arc(a).Upper; up != tc.unitsU[j] {
					t.Errorf("U%d → S upper bound %d, want %d", j+1, up, tc.unitsU[j])
				}
			}
			sch := solveAndRead(t, g)
			if sch.Cost != tc.cost*CostUnit {
				t.Errorf("cost %d, want %d units", sch.Cost, tc.cost)
			}
			checkDecisions(t, sch, tc.tasks)
		})
	}
}

// TestOneRackTwoComputers is the smallest case: one rack {C0, C1}, one job
// without a root, two waiting workers; everything crosses only the rack
// switch (one rack: 𝒳 = 0 everywhere).
//
//	t0: 2 GB on C0, waited 10 s. Preferred C0 (100%), R0. Worst computer
//	    C1 reads 2 GB across the rack switch: α = ρ = 2. γ_C0 = 0. υ = 5.
//	t1: 1 GB on C0 and 1 GB on C1, waited 2 s. Both computers hold 50%:
//	    both preferred, as is R0. Every computer reads 1 GB remotely:
//	    α = ρ = γ_C0 = γ_C1 = 1. υ = 1.
//
// QP: N = 2 <= M' = 2, so E = F = 2: U0 supplies 0, U0 → S capacity 0, S
// demands 2. Both must run: t0 on C0 (0) and t1 on C1 (1), cost 1.
func TestOneRackTwoComputers(t *testing.T) {
	s := &State{
		Now:     10 * time.Second,
		Cluster: Cluster{Racks: 1, Computers: []Computer{{Rack: 0}, {Rack: 0}}},
		Jobs: []Job{{Tasks: []Task{
			{Input: []Block{blk(2, 0)}},
			{Input: []Block{blk(1, 0), blk(1, 1)}, Since: 8 * time.Second},
		}}},
	}
	g, err := Build(s, QP, DefaultParams())
	if err != nil {
		t.Fatal(err)
	}
	// Nodes: t0 0, t1 1, U0 2, X 3, R0 4, C0 5, C1 6, S 7.
	want := []flow.Arc{
		{From: 0, To: 2, Upper: 1, Cost: 5000}, {From: 0, To: 3, Upper: 1, Cost: 2000}, {From: 0, To: 4, Upper: 1, Cost: 2000}, {From: 0, To: 5, Upper: 1, Cost: 0},
		{From: 1, To: 2, Upper: 1, Cost: 1000}, {From: 1, To: 3, Upper: 1, Cost: 1000}, {From: 1, To: 4, Upper: 1, Cost: 1000}, {From: 1, To: 5, Upper: 1, Cost: 1000}, {From: 1, To: 6, Upper: 1, Cost: 1000},
		{From: 2, To: 7, Upper: 0}, {From: 3, To: 4, Upper: 2},
		{From: 4, To: 5, Upper: 1}, {From: 4, To: 6, Upper: 1}, {From: 5, To: 7, Upper: 1}, {From: 6, To: 7, Upper: 1},
	}
	if g.Net.NumNodes() != 8 || g.Net.NumArcs() != len(want) {
		t.Fatalf("%d nodes and %d arcs, want 8 and %d", g.Net.NumNodes(), g.Net.NumArcs(), len(want))
	}
	for i, w := range want {
		if a := g.Net.Arc(i); a != w {
			t.Errorf("arc %d = %+v, want %+v", i, a, w)
		}
	}
	for v, want := range []int64{1, 1, 0, 0, 0, 0, 0, -2} {
		if got := g.Net.Supply(v); got != want {
			t.Errorf("supply of node %d = %d, want %d", v, got, want)
		}
	}
	sch := solveAndRead(t, g)
	if sch.Cost != 1000 {
		t.Errorf("cost %d, want 1000", sch.Cost)
	}
	// t1 reaches C1 at cost 1 straight or through X and R0 (both cost 1).
	checkDecisions(t, sch, [][]Decision{{{Start, 0, ViaComputer}, {Start, 1, viaAny}}})
	if sch.Running[0] != 2 || sch.Started != 2 {
		t.Errorf("running %v, started %d; want 2 and 2", sch.Running, sch.Started)
	}

	// With a root on C1 and QFP: M' = 1, E = F = 1. Running t0 on C0 and
	// leaving t1 waiting costs 0 + 1 = 1; the other way 1 + 5 = 6.
	s.Jobs[0].Root = &Root{Computer: 1}
	g, err = Build(s, QFP, DefaultParams())
	if err != nil {
		t.Fatal(err)
	}
	sch = solveAndRead(t, g)
	if sch.Cost != 1000 {
		t.Errorf("with a root: cost %d, want 1000", sch.Cost)
	}
	checkDecisions(t, sch, [][]Decision{{{Start, 0, ViaComputer}, {Wait, -1, ViaNone}}})
}

// TestInfeasibleNonPreemptive checks that Build refuses, with a clear
// error, a snapshot where a root cannot be placed without preemption.
func TestInfeasibleNonPreemptive(t *testing.T) {
	s := &State{
		Cluster: Cluster{Racks: 1, Computers: []Computer{{Rack: 0}, {Rack: 0}}},
		Jobs: []Job{
			{Root: &Root{Computer: -1}, Tasks: []Task{{State: Running, Computer: 0}, {State: Running, Computer: 1}}},
		},
	}
	for _, pol := range []Policy{Q, QF} {
		if _, err := Build(s, pol, DefaultParams()); err == nil {
			t.Errorf("%v: built a graph with no slot for the root", pol)
		}
	}
	// With preemption the root evicts a worker: E = F = 1 for QFP.
	g, err := Build(s, QFP, DefaultParams())
	if err != nil {
		t.Fatal(err)
	}
	sch := solveAndRead(t, g)
	if sch.Roots[0].Action != Start || sch.RootsStarted != 1 || sch.Running[0] != 1 || len(sch.Preempted) != 1 {
		t.Errorf("schedule %+v: want the root started and one worker preempted", sch)
	}
}

// TestQFullCluster: two computers, both running job 0's workers, and job 1
// with one waiting worker. The paper's Q sets E_1 = 1, which no flow can
// meet without preemption; Build lowers it to 0 and job 1 waits. QP keeps
// E_1 = 1 and preempts one of job 0's workers for it.
func TestQFullCluster(t *testing.T) {
	s := &State{
		Now:     time.Minute,
		Cluster: Cluster{Racks: 1, Computers: []Computer{{Rack: 0}, {Rack: 0}}},
		Jobs: []Job{
			{Tasks: []Task{{State: Running, Computer: 0}, {State: Running, Computer: 1, Since: 30 * time.Second}}},
			{Tasks: []Task{{}}},
		},
	}
	g, err := Build(s, Q, DefaultParams())
	if err != nil {
		t.Fatal(err)
	}
	if g.Min[0] != 1 || g.Max[0] != 2 || g.Min[1] != 0 || g.Max[1] != 1 {
		t.Errorf("Q bounds E = %v, F = %v; want [1 0] and [2 1]", g.Min, g.Max)
	}
	sch := solveAndRead(t, g)
	checkDecisions(t, sch, [][]Decision{{{Keep, 0, ViaComputer}, {Keep, 1, ViaComputer}}, {{Wait, -1, ViaNone}}})

	g, err = Build(s, QP, DefaultParams())
	if err != nil {
		t.Fatal(err)
	}
	if g.Min[1] != 1 {
		t.Errorf("QP: E_1 = %d, want 1", g.Min[1])
	}
	sch = solveAndRead(t, g)
	// Job 0's second worker has run 30 s, the first 60 s: the younger
	// one is cheaper to kill (−30 vs −60 to keep).
	checkDecisions(t, sch, [][]Decision{{{Keep, 0, ViaComputer}, {Preempt, -1, ViaNone}}, {{Start, 1, ViaCluster}}})
}
