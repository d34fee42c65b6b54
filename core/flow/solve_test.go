package flow

import (
	"errors"
	"os"
	"testing"
)

// arcSpec is an arc in a table test: from, to, lower, upper, cost.
type arcSpec [5]int64

func build(supply []int64, arcs []arcSpec) *Network {
	g := New(len(supply))
	for v, s := range supply {
		g.SetSupply(v, s)
	}
	for _, a := range arcs {
		g.AddArc(int(a[0]), int(a[1]), a[2], a[3], a[4])
	}
	return g
}

func TestSolveSmall(t *testing.T) {
	tests := []struct {
		name   string
		supply []int64
		arcs   []arcSpec
		cost   int64
		flow   []int64 // nil: any optimal flow
		err    error
	}{
		{name: "empty", supply: nil, cost: 0},
		{name: "one arc", supply: []int64{3, -3}, arcs: []arcSpec{{0, 1, 0, 5, 2}}, cost: 6, flow: []int64{3}},
		{name: "cheaper path wins", supply: []int64{2, 0, -2},
			arcs: []arcSpec{{0, 2, 0, 5, 5}, {0, 1, 0, 5, 1}, {1, 2, 0, 5, 1}}, cost: 4, flow: []int64{0, 2, 2}},
		{name: "capacity splits flow", supply: []int64{2, 0, -2},
			arcs: []arcSpec{{0, 2, 0, 5, 5}, {0, 1, 0, 1, 1}, {1, 2, 0, 5, 1}}, cost: 7, flow: []int64{1, 1, 1}},
		{name: "lower bound forces a costly arc", supply: []int64{2, 0, -2},
			arcs: []arcSpec{{0, 1, 0, 2, 1}, {1, 2, 1, 1, 1}, {0, 2, 0, 5, 3}}, cost: 5, flow: []int64{1, 1, 1}},
		{name: "negative cost cycle of finite capacity is used", supply: []int64{0, 0},
			arcs: []arcSpec{{0, 1, 0, 4, -3}, {1, 0, 0, 3, 1}}, cost: -6, flow: []int64{3, 3}},
		{name: "zero-cost arcs", supply: []int64{1, 0, -1},
			arcs: []arcSpec{{0, 1, 0, 1, 0}, {1, 2, 0, 1, 0}}, cost: 0, flow: []int64{1, 1}},
		{name: "negative lower and cost", supply: []int64{0, 0},
			arcs: []arcSpec{{0, 1, -2, 2, 1}, {0, 1, 0, 9, 0}}, cost: -2, flow: []int64{-2, 2}},
		{name: "assignment", supply: []int64{1, 1, 0, 0, -2},
			arcs: []arcSpec{{0, 2, 0, 1, 1}, {0, 3, 0, 1, 4}, {1, 2, 0, 1, 2}, {1, 3, 0, 1, 6}, {2, 4, 0, 1, 0}, {3, 4, 0, 1, 0}},
			cost: 6, flow: []int64{0, 1, 1, 0, 1, 1}},
		{name: "infeasible capacity", supply: []int64{3, -3}, arcs: []arcSpec{{0, 1, 0, 2, 1}}, err: ErrInfeasible},
		{name: "infeasible disconnected", supply: []int64{1, -1}, err: ErrInfeasible},
		{name: "infeasible lower bound", supply: []int64{0, 0}, arcs: []arcSpec{{0, 1, 1, 2, 0}}, err: ErrInfeasible},
		{name: "supplies do not sum to zero", supply: []int64{1, 0}, err: ErrInvalid},
		{name: "lower above upper", supply: []int64{0, 0}, arcs: []arcSpec{{0, 1, 3, 2, 0}}, err: ErrInvalid},
		{name: "bad node", supply: []int64{0, 0}, arcs: []arcSpec{{0, 2, 0, 1, 0}}, err: ErrInvalid},
		{name: "negative node", supply: []int64{0}, arcs: []arcSpec{{-1, 0, 0, 1, 0}}, err: ErrInvalid},
		{name: "overflow risk", supply: []int64{0, 0}, arcs: []arcSpec{{0, 1, 0, 1 << 40, 1 << 40}}, err: ErrInvalid},
		{name: "unbounded negative cycle", supply: []int64{0, 0},
			arcs: []arcSpec{{0, 1, 0, Infinity, -1}, {1, 0, 0, Infinity, 0}}, err: ErrUnbounded},
		{name: "uncapacitated but bounded", supply: []int64{2, 0, -2},
			arcs: []arcSpec{{0, 1, 0, Infinity, -1}, {1, 2, 0, Infinity, 1}, {1, 0, 0, 1, 0}}, cost: -1, flow: []int64{3, 2, 1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := build(tc.supply, tc.arcs)
			s, err := Solve(g)
			if tc.err != nil {
				if !errors.Is(err, tc.err) {
					t.Fatalf("err = %v, want %v", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if s.Cost != tc.cost {
				t.Errorf("cost = %d, want %d", s.Cost, tc.cost)
			}
			if tc.flow != nil {
				for i, f := range tc.flow {
					if s.Flow[i] != f {
						t.Errorf("flow = %v, want %v", s.Flow, tc.flow)
						break
					}
				}
			}
			if err := Verify(g, s); err != nil {
				t.Error(err)
			}
		})
	}
}

// TestLemonCrashInstance: the instance on which LEMON 1.3's CostScaling
// segfaults; its NetworkSimplex and our solver agree on cost 199.
func TestLemonCrashInstance(t *testing.T) {
	f, err := os.Open("testdata/lemon-costscaling-segfault.min")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	g, err := ReadDIMACS(f)
	if err != nil {
		t.Fatal(err)
	}
	s, err := Solve(g)
	if err != nil {
		t.Fatal(err)
	}
	if s.Cost != 199 {
		t.Errorf("cost = %d, want 199 (LEMON NetworkSimplex)", s.Cost)
	}
	if err := Verify(g, s); err != nil {
		t.Error(err)
	}
}
