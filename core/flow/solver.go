package flow

import "slices"

// Solver solves one Network repeatedly, warm-starting each solve from the
// previous optimum: after supplies, arcs or nodes change through the
// Network's methods, only the imbalance the change created is routed anew.
// A Solver must be the only one tracking its Network.
type Solver struct {
	g      *Network
	e      *engine
	supply []int64 // supplies as of the last solve
	arcs   []Arc   // arcs as of the last solve
	stats  Stats

	// The last solution's flows and cost, updated on warm solves from the
	// arcs that changed or carried augmenting flow rather than rebuilt
	// from every arc, and the totals that let a warm solve validate only
	// the change log (totals.go).
	flow   []int64
	cost   int64
	totals totals
}

// Stats describes the last solve.
type Stats struct {
	Warm       bool // warm-started from the previous optimum
	Phases     int  // shortest-path phases run (0 for a cold cost-scaling solve)
	DirtyNodes int  // nodes changed since the previous solve
	DirtyArcs  int  // arcs changed or added since the previous solve
}

// NewSolver returns a Solver for g and starts logging g's changes.
func NewSolver(g *Network) *Solver {
	g.logging = true
	g.dirtyArcs, g.dirtyNodes = g.dirtyArcs[:0], g.dirtyNodes[:0]
	return &Solver{g: g}
}

// Stats returns statistics about the last Solve.
func (s *Solver) Stats() Stats { return s.stats }

// Solve returns a minimum-cost flow of the network, with the same errors as
// the package-level Solve. The first call (and any call after an invalid
// network, a failed solve or with an uncapacitated arc) solves from scratch.
//
// The returned Solution's Flow and Potential belong to the Solver: the next
// Solve overwrites them in place (only the entries that changed), so a
// caller that keeps a solution across solves must copy them. Copying them
// for every caller would cost a fifth of a warm solve's budget on a large
// graph: allocating and filling the 1.4 MB flow slice at 2,500 computers
// took 1.7-2.9 ms on the development machine.
func (s *Solver) Solve() (Solution, error) {
	g := s.g
	defer func() { g.dirtyArcs, g.dirtyNodes = g.dirtyArcs[:0], g.dirtyNodes[:0] }()
	oldM := len(s.arcs)
	s.stats = Stats{Warm: true, DirtyNodes: len(g.dirtyNodes), DirtyArcs: len(g.dirtyArcs)}
	if s.e == nil || !s.applyChanges() {
		return s.solveCold()
	}
	before := s.e.phases
	err := s.e.run(true)
	s.stats.Phases = s.e.phases - before
	if err != nil {
		// A failed solve may have left a flow without matching potentials,
		// so the next solve must start over.
		s.e = nil
		return Solution{}, err
	}
	// Flows can only have changed on new arcs, logged arcs and the arcs
	// the augmenting paths used.
	for i := oldM; i < len(g.arcs); i++ {
		s.refresh(i)
	}
	for _, i := range g.dirtyArcs {
		s.refresh(i)
	}
	for _, i := range s.e.touched {
		s.refresh(int(i))
	}
	return Solution{Cost: s.cost, Flow: s.flow, Potential: s.e.pot[:len(g.supply)]}, nil
}

// solveCold validates the whole network and solves it from scratch.
func (s *Solver) solveCold() (Solution, error) {
	g := s.g
	s.stats.Warm = false
	s.e = nil
	c, err := validate(g)
	if err != nil {
		return Solution{}, err
	}
	spare := len(g.arcs)/4 + 64 // room for churn before arrays must grow
	e := newEngine(g, c, spare)
	err = e.solveCold(c, methodAuto)
	s.stats.Phases = e.phases
	if err != nil {
		return Solution{}, err
	}
	sol := e.solution(g)
	if !c.hasInf {
		// Keep the engine and the solution's slices: warm solves update
		// them in place (see Solve on sharing).
		// Warm solves cannot resolve Infinity for new arcs, so a network
		// with an uncapacitated arc is always solved from scratch.
		s.e = e
		s.supply = append(slices.Grow(s.supply[:0], len(g.supply)+spare), g.supply...)
		s.arcs = append(slices.Grow(s.arcs[:0], len(g.arcs)+spare), g.arcs...)
		s.flow = append(slices.Grow(s.flow[:0], len(g.arcs)+spare), sol.Flow...)
		s.cost = sol.Cost
		s.totals = newTotals(g)
		sol.Flow, sol.Potential = s.flow, s.e.pot[:len(g.supply)]
		e.partition() // here rather than in the first warm solve
	}
	return sol, nil
}

// refresh brings s.flow[i] and s.cost up to date with the engine; arcs
// whose cost changed had their old contribution removed by applyChanges.
func (s *Solver) refresh(i int) {
	a := s.g.arcs[i]
	s.cost -= s.flow[i] * a.Cost
	s.flow[i] = a.Lower + s.e.res[2*i+1]
	s.cost += s.flow[i] * a.Cost
}

// applyChanges brings the engine up to date with the network's change log,
// keeping its potentials and complementary slackness: new nodes get a
// potential that makes their cheapest arc tight, changed supplies change
// excesses, and each changed arc keeps its flow where the new bounds and
// reduced cost allow, the difference becoming excess at its ends. It
// returns false if the changes may have made the network invalid (or
// uncapacitated); the engine is then unusable and Solve starts over.
func (s *Solver) applyChanges() bool {
	g, e := s.g, s.e
	oldN, oldM := len(s.supply), len(s.arcs)
	n, m := len(g.supply), len(g.arcs)
	// Check the new and changed arcs' endpoints before anything indexes by
	// them; totals checks their bounds and costs.
	for i := oldM; i < m; i++ {
		if a := g.arcs[i]; a.From < 0 || a.From >= n || a.To < 0 || a.To >= n {
			return false
		}
	}
	for _, i := range g.dirtyArcs {
		if a := g.arcs[i]; a.From < 0 || a.From >= n || a.To < 0 || a.To >= n {
			return false
		}
	}
	t := &s.totals
	for v := oldN; v < n; v++ {
		e.pot = append(e.pot, 0)
		e.excess = append(e.excess, 0)
		e.adj = append(e.adj, nil)
	}
	e.grow(n)
	if n > oldN {
		s.seedPotentials(oldN)
	}
	// Changed supplies become excess; a node logged twice counts once
	// because s.supply is brought up to date as we go.
	for len(s.supply) < n {
		s.supply = append(s.supply, 0)
	}
	for _, v := range g.dirtyNodes {
		t.node(s.supply[v], g.supply[v])
		e.excess[v] += g.supply[v] - s.supply[v]
		s.supply[v] = g.supply[v]
	}
	for i := oldM; i < m; i++ {
		a := g.arcs[i]
		if t.arc(Arc{}, a); !t.ok {
			return false
		}
		e.head = append(e.head, 0, 0)
		e.cost = append(e.cost, 0, 0)
		e.res = append(e.res, 0, 0)
		// Ship the lower bound as the engine's transformation does, then
		// choose the flow above it by complementary slackness.
		e.excess[a.From] -= a.Lower
		e.excess[a.To] += a.Lower
		e.setArc(i, a, a.Upper-a.Lower)
		e.link(a.From, int32(2*i))
		e.link(a.To, int32(2*i+1))
		s.arcs = append(s.arcs, a)
		s.flow = append(s.flow, 0) // refreshed after the run
	}
	for _, i := range g.dirtyArcs {
		if i >= oldM {
			continue // added above
		}
		old, a := s.arcs[i], g.arcs[i]
		if old == a {
			continue
		}
		if t.arc(old, a); !t.ok {
			return false
		}
		// Current flow on the old arc, then the new flow: clamped into the
		// new bounds and pushed to a bound if the new reduced cost asks.
		f := old.Lower + e.res[2*i+1]
		nf := min(max(f, a.Lower), a.Upper)
		rc := a.Cost + e.pot[a.From] - e.pot[a.To]
		if rc < 0 {
			nf = a.Upper
		} else if rc > 0 {
			nf = a.Lower
		}
		e.excess[a.From] += f - nf
		e.excess[a.To] -= f - nf
		e.cost[2*i], e.cost[2*i+1] = a.Cost, -a.Cost
		e.res[2*i], e.res[2*i+1] = a.Upper-nf, nf-a.Lower
		if e.res[2*i] > 0 {
			e.revive(int32(2 * i))
		}
		if e.res[2*i+1] > 0 {
			e.revive(int32(2*i + 1))
		}
		// Drop the old contribution to the cost; refresh adds the new one.
		s.cost -= s.flow[i] * old.Cost
		s.flow[i] = 0
		s.arcs[i] = a
	}
	return t.valid(n)
}

// seedPotentials gives each node from first on a potential that makes its
// cheapest outgoing arc to an older node tight (or, failing that, its
// cheapest incoming one), so new tasks start near their final prices and
// few arcs need their flow forced by complementary slackness.
func (s *Solver) seedPotentials(first int) {
	g, e := s.g, s.e
	const unset = int64(-1) << 62
	out := make([]int64, len(g.supply)-first)
	in := make([]int64, len(g.supply)-first)
	for k := range out {
		out[k], in[k] = unset, -unset
	}
	for i := len(s.arcs); i < len(g.arcs); i++ {
		a := g.arcs[i]
		if a.Upper <= a.Lower && a.Upper <= 0 {
			continue
		}
		if a.From >= first && a.To < first {
			out[a.From-first] = max(out[a.From-first], e.pot[a.To]-a.Cost)
		}
		if a.To >= first && a.From < first {
			in[a.To-first] = min(in[a.To-first], e.pot[a.From]+a.Cost)
		}
	}
	for k := range out {
		switch {
		case out[k] != unset:
			e.pot[first+k] = out[k]
		case in[k] != -unset:
			e.pot[first+k] = in[k]
		}
	}
}
