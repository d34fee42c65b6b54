package flow

import "fmt"

// Arc is one arc of a Network: flow from From to To of at least Lower and
// at most Upper units, each costing Cost.
type Arc struct {
	From, To     int
	Lower, Upper int64
	Cost         int64
}

// Network is a min-cost flow problem: nodes 0..NumNodes()-1 with supplies
// and arcs 0..NumArcs()-1. The zero value is an empty network.
type Network struct {
	supply []int64
	arcs   []Arc
	// dirtyArcs and dirtyNodes log the arcs and nodes touched since a
	// Solver last consumed the log, so that a warm start repairs only them.
	dirtyArcs  []int
	dirtyNodes []int
	// logging is set while a Solver tracks this network.
	logging bool
}

// New returns a network with the given number of nodes, all of supply 0,
// and no arcs.
func New(nodes int) *Network {
	if nodes < 0 {
		nodes = 0
	}
	return &Network{supply: make([]int64, nodes)}
}

// AddNode adds a node of supply 0 and returns its index.
func (g *Network) AddNode() int {
	g.supply = append(g.supply, 0)
	g.touchNode(len(g.supply) - 1)
	return len(g.supply) - 1
}

// NumNodes returns the number of nodes.
func (g *Network) NumNodes() int { return len(g.supply) }

// NumArcs returns the number of arcs.
func (g *Network) NumArcs() int { return len(g.arcs) }

// SetSupply sets node v's supply: s > 0 supplies s units, s < 0 demands -s.
// Supplies must sum to zero when the network is solved. It panics if v is
// not a node, like an out-of-range slice index.
func (g *Network) SetSupply(v int, s int64) {
	g.supply[v] = s
	g.touchNode(v)
}

// Supply returns node v's supply.
func (g *Network) Supply(v int) int64 { return g.supply[v] }

// AddArc adds an arc from -> to with flow bounds [lower, upper] and a cost
// per unit, and returns its index. Invalid arcs (a bad node, lower > upper)
// are accepted here and reported by Solve, so that a builder can add arcs
// in any order without checking errors at each step.
func (g *Network) AddArc(from, to int, lower, upper, cost int64) int {
	g.arcs = append(g.arcs, Arc{From: from, To: to, Lower: lower, Upper: upper, Cost: cost})
	g.touchArc(len(g.arcs) - 1)
	return len(g.arcs) - 1
}

// Arc returns arc i.
func (g *Network) Arc(i int) Arc { return g.arcs[i] }

// SetArcBounds changes arc i's lower and upper bounds. Setting both to 0
// removes the arc from the problem in effect; arcs are never deleted, so
// that arc indices stay stable for incremental solving.
func (g *Network) SetArcBounds(i int, lower, upper int64) {
	g.arcs[i].Lower, g.arcs[i].Upper = lower, upper
	g.touchArc(i)
}

// SetArcCost changes arc i's cost per unit of flow.
func (g *Network) SetArcCost(i int, cost int64) {
	g.arcs[i].Cost = cost
	g.touchArc(i)
}

// Clone returns a deep copy of the network (without a Solver's change log).
func (g *Network) Clone() *Network {
	return &Network{
		supply: append([]int64(nil), g.supply...),
		arcs:   append([]Arc(nil), g.arcs...),
	}
}

func (g *Network) touchNode(v int) {
	if g.logging {
		g.dirtyNodes = append(g.dirtyNodes, v)
	}
}

func (g *Network) touchArc(i int) {
	if g.logging {
		g.dirtyArcs = append(g.dirtyArcs, i)
	}
}

// String summarises the network's size, for error messages and logs.
func (g *Network) String() string {
	return fmt.Sprintf("flow network with %d nodes and %d arcs", len(g.supply), len(g.arcs))
}
