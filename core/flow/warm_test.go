package flow_test

import (
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/sparrowfleet/sparrow/core/flow"
	"github.com/sparrowfleet/sparrow/core/flow/gen"
)

// TestSolverWarmMatchesCold re-solves randomly perturbed networks with a
// warm-started Solver and checks each answer against a cold Solve of a copy
// and against Verify's optimality certificate.
func TestSolverWarmMatchesCold(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 1))
	warm := 0
	for inst := range 300 {
		g := randomNetwork(rng, 30)
		s := flow.NewSolver(g)
		for round := range 6 {
			if round > 0 {
				perturb(rng, g)
			}
			got, err := s.Solve()
			want, werr := flow.Solve(g.Clone())
			if (err == nil) != (werr == nil) || (err != nil && !sameKind(err, werr)) {
				t.Fatalf("instance %d round %d: solver err %v, cold err %v", inst, round, err, werr)
			}
			if err != nil {
				continue
			}
			if s.Stats().Warm {
				warm++
			}
			if got.Cost != want.Cost {
				t.Fatalf("instance %d round %d: warm cost %d, cold cost %d", inst, round, got.Cost, want.Cost)
			}
			if err := flow.Verify(g, got); err != nil {
				t.Fatalf("instance %d round %d: %v", inst, round, err)
			}
		}
	}
	if warm == 0 {
		t.Fatal("no solve was warm-started")
	}
}

func sameKind(a, b error) bool {
	for _, k := range []error{flow.ErrInfeasible, flow.ErrInvalid, flow.ErrUnbounded} {
		if errors.Is(a, k) != errors.Is(b, k) {
			return false
		}
	}
	return true
}

// TestSolverQuincyChurn checks warm re-solves on a Quincy-shaped graph as
// tasks finish and arrive.
func TestSolverQuincyChurn(t *testing.T) {
	q := gen.Quincy(gen.Default(120, 6, 600), rand.New(rand.NewPCG(3, 3)))
	s := flow.NewSolver(q.Net)
	for round := range 5 {
		if round > 0 {
			q.Churn(6)
		}
		got, err := s.Solve()
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		want, err := flow.Solve(q.Net.Clone())
		if err != nil {
			t.Fatalf("round %d cold: %v", round, err)
		}
		if got.Cost != want.Cost {
			t.Fatalf("round %d: warm cost %d, cold %d", round, got.Cost, want.Cost)
		}
		if err := flow.Verify(q.Net, got); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		if round > 0 && !s.Stats().Warm {
			t.Fatalf("round %d was not warm", round)
		}
	}
}

// TestSolverInvalidChanges makes one change to a network a Solver has just
// solved and checks that the next Solve reports what a cold Solve of the
// same network reports: warm solves validate only the change log, against
// running totals, and must still catch every kind of invalid network.
func TestSolverInvalidChanges(t *testing.T) {
	huge := int64(1) << 61
	cases := []struct {
		name   string
		change func(g *flow.Network)
		want   error // nil: valid, solved like a cold solve
	}{
		{"supplies off balance", func(g *flow.Network) { g.SetSupply(0, g.Supply(0)+1) }, flow.ErrInvalid},
		{"supply too large", func(g *flow.Network) { g.SetSupply(0, huge); g.SetSupply(1, g.Supply(1)-huge) }, flow.ErrInvalid},
		{"arc to a missing node", func(g *flow.Network) { g.AddArc(0, g.NumNodes(), 0, 1, 1) }, flow.ErrInvalid},
		{"arc from a negative node", func(g *flow.Network) { g.AddArc(-1, 0, 0, 1, 1) }, flow.ErrInvalid},
		{"lower above upper", func(g *flow.Network) { g.SetArcBounds(0, 3, 2) }, flow.ErrInvalid},
		{"cost too large", func(g *flow.Network) { g.SetArcCost(0, huge) }, flow.ErrInvalid},
		{"cost x capacity too large", func(g *flow.Network) { g.AddArc(0, 1, 0, 1<<40, 1<<30) }, flow.ErrInvalid},
		{"nodes x cost too large", func(g *flow.Network) { g.AddArc(0, 1, 0, 1, 1<<59) }, flow.ErrInvalid},
		// Valid changes: an uncapacitated arc sends the solve cold, new
		// nodes and arcs are repaired warm.
		{"uncapacitated arc", func(g *flow.Network) { g.AddArc(0, 1, 0, flow.Infinity, 5) }, nil},
		{"new node and arcs", func(g *flow.Network) {
			w := g.AddNode()
			g.SetSupply(w, 2)
			g.SetSupply(0, g.Supply(0)-2)
			g.AddArc(w, 0, 0, 5, 3)
		}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := flow.New(3)
			g.SetSupply(0, 4)
			g.SetSupply(2, -4)
			g.AddArc(0, 1, 0, 5, 2)
			g.AddArc(1, 2, 0, 5, 2)
			g.AddArc(0, 2, 0, 2, 5)
			s := flow.NewSolver(g)
			if _, err := s.Solve(); err != nil {
				t.Fatal(err)
			}
			tc.change(g)
			got, err := s.Solve()
			want, werr := flow.Solve(g.Clone())
			if !errors.Is(werr, tc.want) && werr != tc.want {
				t.Fatalf("cold solve: err %v, want %v", werr, tc.want)
			}
			if (err == nil) != (werr == nil) || !sameKind(err, werr) {
				t.Fatalf("solver err %v, cold err %v", err, werr)
			}
			if err != nil {
				return
			}
			if got.Cost != want.Cost {
				t.Fatalf("solver cost %d, cold cost %d", got.Cost, want.Cost)
			}
			if err := flow.Verify(g, got); err != nil {
				t.Fatal(err)
			}
			if warm := tc.name != "uncapacitated arc"; s.Stats().Warm != warm {
				t.Fatalf("warm %v, want %v", s.Stats().Warm, warm)
			}
		})
	}
}
