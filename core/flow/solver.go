package flow

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
func (s *Solver) Solve() (Solution, error) {
	g := s.g
	c, err := validate(g)
	if err != nil {
		s.e = nil
		return Solution{}, err
	}
	warm := s.e != nil && !c.hasInf
	s.stats = Stats{Warm: warm, DirtyNodes: len(g.dirtyNodes), DirtyArcs: len(g.dirtyArcs)}
	if warm {
		s.applyChanges(c)
	} else {
		s.e = newEngine(g, c)
	}
	g.dirtyArcs, g.dirtyNodes = g.dirtyArcs[:0], g.dirtyNodes[:0]
	if !warm {
		// applyChanges keeps these copies in step on warm solves, so the
		// whole network is copied only when starting over.
		s.supply = append(s.supply[:0], g.supply...)
		s.arcs = append(s.arcs[:0], g.arcs...)
	}
	before := s.e.phases
	if warm {
		err = s.e.run()
	} else {
		err = s.e.solveCold(c, methodAuto)
	}
	s.stats.Phases = s.e.phases - before
	if err != nil {
		// A failed solve may have left a flow without matching potentials
		// (the max-flow feasibility pass ignores costs), so the next solve
		// must start over.
		s.e = nil
		return Solution{}, err
	}
	return s.e.solution(g), nil
}

// applyChanges brings the engine up to date with the network's change log,
// keeping its potentials and complementary slackness: new nodes get a
// potential that makes their cheapest arc tight, changed supplies change
// excesses, and each changed arc keeps its flow where the new bounds and
// reduced cost allow, the difference becoming excess at its ends.
func (s *Solver) applyChanges(c checked) {
	g, e := s.g, s.e
	oldN, oldM := len(s.supply), len(s.arcs)
	n, m := len(g.supply), len(g.arcs)
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
		e.excess[v] += g.supply[v] - s.supply[v]
		s.supply[v] = g.supply[v]
	}
	for i := oldM; i < m; i++ {
		e.head = append(e.head, 0, 0)
		e.cost = append(e.cost, 0, 0)
		e.res = append(e.res, 0, 0)
		a := g.arcs[i]
		e.adj[a.From] = append(e.adj[a.From], int32(2*i))
		e.adj[a.To] = append(e.adj[a.To], int32(2*i+1))
		// Ship the lower bound as the engine's transformation does, then
		// choose the flow above it by complementary slackness.
		e.excess[a.From] -= a.Lower
		e.excess[a.To] += a.Lower
		e.setArc(i, a, c.caps[i])
		s.arcs = append(s.arcs, a)
	}
	for _, i := range g.dirtyArcs {
		if i >= oldM {
			continue // added above
		}
		old, a := s.arcs[i], g.arcs[i]
		if old == a {
			continue
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
		s.arcs[i] = a
	}
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
