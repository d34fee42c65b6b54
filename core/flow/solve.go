package flow

import "fmt"

// Solution is an optimal flow and the potentials that prove it optimal.
type Solution struct {
	// Cost is the total cost, the sum of Flow[i] * Arc(i).Cost.
	Cost int64
	// Flow is the flow on each arc, Lower <= Flow[i] <= Upper.
	Flow []int64
	// Potential holds one dual value per node. With the reduced cost of arc
	// u->v defined as Cost + Potential[u] - Potential[v], the flow is optimal
	// because every arc with a positive reduced cost carries its lower bound
	// and every arc with a negative one its upper bound (complementary
	// slackness). Potential[v] is thus a shortest-path label: it grows along
	// the flow by at most the cost, and -Potential[v] is the marginal price
	// of one more unit of supply at v, up to a common constant.
	Potential []int64
}

// Solve returns a minimum-cost flow of g. It returns an error wrapping
// ErrInvalid for a malformed network, ErrUnbounded for a negative-cost cycle
// of uncapacitated arcs, and ErrInfeasible if no flow meets the supplies,
// demands and bounds. Solve does not modify g.
func Solve(g *Network) (Solution, error) {
	c, err := validate(g)
	if err != nil {
		return Solution{}, err
	}
	e := newEngine(g, c, 0)
	if err := e.solveCold(c, methodAuto); err != nil {
		return Solution{}, err
	}
	return e.solution(g), nil
}

// method selects the algorithm for a cold solve (tests force each one).
type method int

const (
	methodAuto        method = iota // cost scaling when its numbers fit
	methodPrimalDual                // successive shortest paths only
	methodCostScaling               // cost scaling (falls back if it cannot)
)

// solveCold solves a fresh engine: cost scaling from a feasible flow, then
// exact potentials; or primal-dual when the scaled numbers could overflow.
func (e *engine) solveCold(c checked, m method) error {
	if m == methodPrimalDual || !canScale(len(e.pot), c.maxAbs) {
		return e.run(false)
	}
	if err := e.feasible(); err != nil {
		return err
	}
	e.costScaling(c.maxAbs, 0)
	e.exactPotentials()
	return nil
}

// solution reads the flow, its cost and the potentials out of the engine.
func (e *engine) solution(g *Network) Solution {
	s := Solution{
		Flow:      make([]int64, len(g.arcs)),
		Potential: append([]int64(nil), e.pot[:len(g.supply)]...),
	}
	for i, a := range g.arcs {
		f := a.Lower + e.res[2*i+1]
		s.Flow[i] = f
		s.Cost += f * a.Cost
	}
	return s
}

// Verify checks that s is a feasible flow of g whose Cost is right and that
// s.Potential proves it optimal by complementary slackness. It is the
// independent check the tests run on every solution, and callers may run it
// on solutions from elsewhere.
func Verify(g *Network, s Solution) error {
	n, m := len(g.supply), len(g.arcs)
	if len(s.Flow) != m || len(s.Potential) != n {
		return fmt.Errorf("solution has %d flows and %d potentials for %d arcs and %d nodes", len(s.Flow), len(s.Potential), m, n)
	}
	bal := append([]int64(nil), g.supply...)
	var cost int64
	for i, a := range g.arcs {
		f := s.Flow[i]
		if f < a.Lower || f > a.Upper {
			return fmt.Errorf("arc %d (%d->%d): flow %d outside [%d, %d]", i, a.From, a.To, f, a.Lower, a.Upper)
		}
		bal[a.From] -= f
		bal[a.To] += f
		cost += f * a.Cost
		rc := a.Cost + s.Potential[a.From] - s.Potential[a.To]
		if rc > 0 && f != a.Lower {
			return fmt.Errorf("arc %d (%d->%d): reduced cost %d > 0 but flow %d above lower bound %d", i, a.From, a.To, rc, f, a.Lower)
		}
		if rc < 0 && f != a.Upper {
			return fmt.Errorf("arc %d (%d->%d): reduced cost %d < 0 but flow %d below upper bound %d", i, a.From, a.To, rc, f, a.Upper)
		}
	}
	for v, b := range bal {
		if b != 0 {
			return fmt.Errorf("node %d: supply %d not conserved (imbalance %d)", v, g.supply[v], b)
		}
	}
	if cost != s.Cost {
		return fmt.Errorf("solution cost %d, but flows cost %d", s.Cost, cost)
	}
	return nil
}
