package flow_test

import (
	"math/rand/v2"

	"github.com/sparrowfleet/sparrow/core/flow"
)

// randomNetwork draws a random problem with up to n nodes: sparse or dense,
// with lower bounds, zero and negative costs, and supplies that sum to
// zero; some are infeasible, which is part of the point.
func randomNetwork(rng *rand.Rand, maxNodes int) *flow.Network {
	n := 2 + rng.IntN(maxNodes-1)
	g := flow.New(n)
	m := rng.IntN(4*n + 1)
	lowers := rng.IntN(3) == 0
	for range m {
		u, v := rng.IntN(n), rng.IntN(n)
		up := int64(rng.IntN(20))
		lo := int64(0)
		if lowers && rng.IntN(3) == 0 {
			lo = int64(rng.IntN(int(up) + 1))
		}
		cost := int64(rng.IntN(70)) - 20
		g.AddArc(u, v, lo, up, cost)
	}
	var sum int64
	for v := 0; v < n-1; v++ {
		if rng.IntN(3) == 0 {
			s := int64(rng.IntN(21)) - 10
			g.SetSupply(v, s)
			sum += s
		}
	}
	g.SetSupply(n-1, -sum)
	return g
}

// perturb changes a few supplies, arcs and nodes of g as a scheduler's next
// round would, keeping supplies summing to zero.
func perturb(rng *rand.Rand, g *flow.Network) {
	for range 1 + rng.IntN(4) {
		switch rng.IntN(5) {
		case 0: // move supply between two nodes
			u, v := rng.IntN(g.NumNodes()), rng.IntN(g.NumNodes())
			d := int64(rng.IntN(5))
			g.SetSupply(u, g.Supply(u)+d)
			g.SetSupply(v, g.Supply(v)-d)
		case 1: // new arc
			g.AddArc(rng.IntN(g.NumNodes()), rng.IntN(g.NumNodes()), 0, int64(rng.IntN(10)), int64(rng.IntN(60))-20)
		case 2: // new node with supply, balanced elsewhere, and arcs
			w := g.AddNode()
			d := int64(1 + rng.IntN(3))
			g.SetSupply(w, d)
			u := rng.IntN(w)
			g.SetSupply(u, g.Supply(u)-d)
			for range 1 + rng.IntN(3) {
				g.AddArc(w, rng.IntN(w), 0, int64(1+rng.IntN(5)), int64(rng.IntN(40))-5)
			}
		case 3: // change bounds
			if g.NumArcs() > 0 {
				i := rng.IntN(g.NumArcs())
				up := int64(rng.IntN(15))
				lo := int64(0)
				if rng.IntN(4) == 0 {
					lo = int64(rng.IntN(int(up) + 1))
				}
				g.SetArcBounds(i, lo, up)
			}
		case 4: // change cost
			if g.NumArcs() > 0 {
				g.SetArcCost(rng.IntN(g.NumArcs()), int64(rng.IntN(70))-20)
			}
		}
	}
}
