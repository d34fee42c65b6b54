package quincy

import (
	"slices"
	"testing"
	"time"
)

// appendixCase is a hand-worked case for the Appendix's cost formulas:
// racks R0 = {C0, C1}, R1 = {C2, C3}, R2 = {C4, C5}; one job without a
// root, three workers reading the same 10 GB:
//
//	block A, 6 GB on C0 and C2; block B, 3 GB on C0 and C1; block C, 1 GB on C4.
//
// Bytes per computer d_m: C0 9, C1 3, C2 6, C3 0, C4 1, C5 0; per rack D_l:
// R0 9, R1 6, R2 1 (a block counts once per place however many replicas
// sit there). δ = 0.1 of 10 GB is 1 GB and "more than" is strict, so the
// preferred computers are C0, C1, C2 (C4 holds exactly 1 GB: not
// preferred) and the preferred racks R0, R1 (R2 holds 1 GB: not).
//
// Byte pairs (rack switch, core switch), Appendix:
//
//	C0: (D_R0 − d_C0, D − D_R0) = (0, 1)   C1: (6, 1)   C2: (0, 4)
//	R0's worst computer is C1 (least data): (6, 1); R1's is C3: (6, 4);
//	R2's is C5: (1, 9). No rack is empty of input, so (ℛ^X, 𝒳^X) is the
//	costliest of these three.
//
// At ψ = 1 and ξ = 20 (QFPX): γ_C0 = 0 + 20 = 20, γ_C1 = 6 + 20 = 26,
// γ_C2 = 0 + 80 = 80, ρ_R0 = 26, ρ_R1 = 86, α = max(26, 86, 1 + 180) =
// 181 with (ℛ^X, 𝒳^X) = (1, 9).
// At ξ = 2 (QFP): γ = 2, 8, 8; ρ = 8, 14; α = max(8, 14, 19) = 19.
//
//	t0 waits, ν = 30 s: υ = ω·30 = 15.
//	t1 runs on C5 (rack R2, off both lists): d* uses (𝒳^X/P, 𝒳^X) with P
//	   = 3 racks: (3, 9), QFPX 3 + 180 = 183, QFP 3 + 18 = 21. θ = 20 s of
//	   an earlier attempt + 80 s now = 100: running arc 83 (QFPX), −79
//	   (QFP). ν = 8 s from before it started: υ = 4.
//	t2 runs on C3 (off the computer list, rack R1 on the rack list): d*
//	   is R1's pair (6, 4): 86 (QFPX), 14 (QFP). θ = 50: 36, −36. υ = 0.
func appendixCase() *State {
	in := []Block{blk(6, 0, 2), blk(3, 0, 1), blk(1, 4)}
	now := 1000 * time.Second
	return &State{
		Now: now,
		Cluster: Cluster{Racks: 3, Computers: []Computer{
			{Rack: 0}, {Rack: 0}, {Rack: 1}, {Rack: 1}, {Rack: 2}, {Rack: 2},
		}},
		Jobs: []Job{{Tasks: []Task{
			{Input: in, Since: now - 30*time.Second},
			{Input: in, State: Running, Computer: 5, Since: now - 80*time.Second, RanBefore: 20 * time.Second, WaitedBefore: 8 * time.Second},
			{Input: in, State: Running, Computer: 3, Since: now - 50*time.Second},
		}}},
	}
}

// taskArc is one expected worker arc: its kind, where it goes (rack or
// computer, -1 for U and X) and its cost in paper units.
type taskArc struct {
	kind  ArcKind
	place int
	cost  int64
}

func taskArcs(g *Graph, j, n int) []taskArc {
	var out []taskArc
	first, end := g.ArcsOf(j, n)
	for a := first; a < end; a++ {
		info := g.Arcs[a]
		place := int(info.Computer)
		if info.Kind == RackArc {
			place = int(info.Rack)
		}
		out = append(out, taskArc{info.Kind, place, g.Net.Arc(a).Cost})
	}
	return out
}

func scaled(arcs []taskArc) []taskArc {
	out := slices.Clone(arcs)
	for i := range out {
		out[i].cost *= CostUnit
	}
	return out
}

func TestAppendixCosts(t *testing.T) {
	capped := DefaultParams()
	capped.MaxCost = 50 * CostUnit
	exact := DefaultParams()
	exact.ExactRunningCost = true
	for _, tc := range []struct {
		name string
		pol  Policy
		p    Params
		want [][]taskArc
	}{
		{"QFPX", QFPX, DefaultParams(), [][]taskArc{
			{{UnscheduledArc, -1, 15}, {ClusterArc, -1, 181}, {RackArc, 0, 26}, {RackArc, 1, 86}, {ComputerArc, 0, 20}, {ComputerArc, 1, 26}, {ComputerArc, 2, 80}},
			{{UnscheduledArc, -1, 4}, {ClusterArc, -1, 181}, {RackArc, 0, 26}, {RackArc, 1, 86}, {ComputerArc, 0, 20}, {ComputerArc, 1, 26}, {ComputerArc, 2, 80}, {RunningArc, 5, 83}},
			{{UnscheduledArc, -1, 0}, {ClusterArc, -1, 181}, {RackArc, 0, 26}, {RackArc, 1, 86}, {ComputerArc, 0, 20}, {ComputerArc, 1, 26}, {ComputerArc, 2, 80}, {RunningArc, 3, 36}},
		}},
		{"QFP", QFP, DefaultParams(), [][]taskArc{
			{{UnscheduledArc, -1, 15}, {ClusterArc, -1, 19}, {RackArc, 0, 8}, {RackArc, 1, 14}, {ComputerArc, 0, 2}, {ComputerArc, 1, 8}, {ComputerArc, 2, 8}},
			{{UnscheduledArc, -1, 4}, {ClusterArc, -1, 19}, {RackArc, 0, 8}, {RackArc, 1, 14}, {ComputerArc, 0, 2}, {ComputerArc, 1, 8}, {ComputerArc, 2, 8}, {RunningArc, 5, -79}},
			{{UnscheduledArc, -1, 0}, {ClusterArc, -1, 19}, {RackArc, 0, 8}, {RackArc, 1, 14}, {ComputerArc, 0, 2}, {ComputerArc, 1, 8}, {ComputerArc, 2, 8}, {RunningArc, 3, -36}},
		}},
		// QF keeps running workers on their computers: only that arc.
		{"QF", QF, DefaultParams(), [][]taskArc{
			{{UnscheduledArc, -1, 15}, {ClusterArc, -1, 19}, {RackArc, 0, 8}, {RackArc, 1, 14}, {ComputerArc, 0, 2}, {ComputerArc, 1, 8}, {ComputerArc, 2, 8}},
			{{RunningArc, 5, -79}},
			{{RunningArc, 3, -36}},
		}},
		// Exact running costs: t1 on C5 reads 1 GB across R2's switch and
		// 9 across the core: 1 + 180 = 181 − 100 = 81; t2 on C3 is R1's
		// worst computer anyway: 36.
		{"QFPX exact", QFPX, exact, [][]taskArc{
			{{UnscheduledArc, -1, 15}, {ClusterArc, -1, 181}, {RackArc, 0, 26}, {RackArc, 1, 86}, {ComputerArc, 0, 20}, {ComputerArc, 1, 26}, {ComputerArc, 2, 80}},
			{{UnscheduledArc, -1, 4}, {ClusterArc, -1, 181}, {RackArc, 0, 26}, {RackArc, 1, 86}, {ComputerArc, 0, 20}, {ComputerArc, 1, 26}, {ComputerArc, 2, 80}, {RunningArc, 5, 81}},
			{{UnscheduledArc, -1, 0}, {ClusterArc, -1, 181}, {RackArc, 0, 26}, {RackArc, 1, 86}, {ComputerArc, 0, 20}, {ComputerArc, 1, 26}, {ComputerArc, 2, 80}, {RunningArc, 3, 36}},
		}},
		// Ω = 50: data and wait costs stop at 50; t1's running arc is
		// min(183, Ω) − 100 = −50, t2's min(86, Ω) − 50 = 0.
		{"QFPX capped", QFPX, capped, [][]taskArc{
			{{UnscheduledArc, -1, 15}, {ClusterArc, -1, 50}, {RackArc, 0, 26}, {RackArc, 1, 50}, {ComputerArc, 0, 20}, {ComputerArc, 1, 26}, {ComputerArc, 2, 50}},
			{{UnscheduledArc, -1, 4}, {ClusterArc, -1, 50}, {RackArc, 0, 26}, {RackArc, 1, 50}, {ComputerArc, 0, 20}, {ComputerArc, 1, 26}, {ComputerArc, 2, 50}, {RunningArc, 5, -50}},
			{{UnscheduledArc, -1, 0}, {ClusterArc, -1, 50}, {RackArc, 0, 26}, {RackArc, 1, 50}, {ComputerArc, 0, 20}, {ComputerArc, 1, 26}, {ComputerArc, 2, 50}, {RunningArc, 3, 0}},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g, err := Build(appendixCase(), tc.pol, tc.p)
			if err != nil {
				t.Fatal(err)
			}
			for n, want := range tc.want {
				if got := taskArcs(g, 0, n); !slices.Equal(got, scaled(want)) {
					t.Errorf("t%d arcs\n got %v\nwant %v", n, got, scaled(want))
				}
			}
		})
	}
}

// TestRunningFloor checks the running arc's floor of −2Ω: a task that has
// run for ages costs −2Ω to keep, not an ever larger negative number.
func TestRunningFloor(t *testing.T) {
	s := appendixCase()
	s.Jobs[0].Tasks[2].RanBefore = 1000 * 24 * time.Hour
	p := DefaultParams()
	g, err := Build(s, QFP, p)
	if err != nil {
		t.Fatal(err)
	}
	arcs := taskArcs(g, 0, 2)
	if last := arcs[len(arcs)-1]; last.kind != RunningArc || last.cost != -2*p.MaxCost {
		t.Errorf("running arc %+v, want cost %d", last, -2*p.MaxCost)
	}
}

func TestReads(t *testing.T) {
	s := appendixCase()
	task := &s.Jobs[0].Tasks[0]
	for _, tc := range []struct {
		m                 int
		local, rack, core int64
	}{
		{0, 9, 0, 1}, {1, 3, 6, 1}, {2, 6, 0, 4}, {3, 0, 6, 4}, {4, 1, 0, 9}, {5, 0, 1, 9},
	} {
		l, r, c := s.Cluster.Reads(task, tc.m)
		if l != tc.local*gb || r != tc.rack*gb || c != tc.core*gb {
			t.Errorf("C%d: reads (%d, %d, %d) GB, want (%d, %d, %d)", tc.m, l/gb, r/gb, c/gb, tc.local, tc.rack, tc.core)
		}
	}
}

func TestPreferredThreshold(t *testing.T) {
	for _, tc := range []struct {
		bytes, total, perMille int64
		want                   bool
	}{
		{1, 10, 100, false}, // exactly 10%: "more than" is strict
		{2, 10, 100, true},
		{0, 0, 0, false},
		{1 << 62, 1 << 62, 999, true},
		{1 << 60, 1 << 62, 250, false},
		{1<<60 + 1, 1 << 62, 250, true},
	} {
		if got := preferred(tc.bytes, tc.total, tc.perMille); got != tc.want {
			t.Errorf("preferred(%d, %d, %d) = %v, want %v", tc.bytes, tc.total, tc.perMille, got, tc.want)
		}
	}
}

func TestMulDiv(t *testing.T) {
	for _, tc := range []struct{ a, b, c, want int64 }{
		{6, 7, 4, 10},
		{0, 5, 3, 0},
		{1 << 62, 8, 2, 1<<63 - 1},
		{4_000_000_000, 20_000, 1_000_000_000, 80_000},
		{-5, 3, 1, 0},
	} {
		if got := mulDiv(tc.a, tc.b, tc.c); got != tc.want {
			t.Errorf("mulDiv(%d, %d, %d) = %d, want %d", tc.a, tc.b, tc.c, got, tc.want)
		}
	}
}
