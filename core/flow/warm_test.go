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
