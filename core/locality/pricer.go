package locality

import (
	"fmt"

	"github.com/sparrowfleet/sparrow/core/flow"
)

// Pricer prices locality period after period on one flow network that it
// keeps and changes, so that each period's solve starts warm from the
// previous optimum (flow.Solver) instead of building and solving a new
// network. Its network is Build's with these differences, none of which
// changes the optimal cost or a price: nodes, racks and their arcs are
// added the first time they appear and never removed (a node monitor
// missing from a snapshot keeps its nodes with no supply and no wave
// capacity); every node monitor has its demand node and its D → C arc
// whether or not it has work and slots; each node monitor keeps as many
// wave arcs as it has ever needed, the ones it does not need this period
// with no capacity; and Build's uncapacitated arcs carry maxQueued, more
// than all the work the fleet can queue.
//
// Not safe for concurrent use: one goroutine (the coordinator's locality
// loop) owns a Pricer.
type Pricer struct {
	params Params
	net    *flow.Network
	solver *flow.Solver
	s, x   int
	racks  map[string]int // rack name → R node
	nodes  map[string]*pricedNode
	all    []*pricedNode // in creation order, retired ones too
	seen   []bool        // scratch: per entry of all, in this snapshot
}

// pricedNode is one node monitor's part of the network.
type pricedNode struct {
	name, rack string
	c, d       int   // its C and D nodes
	local      int   // D → C
	rackArc    int   // D → R
	coreArc    int   // D → X
	waves      []int // C → S, in wave order
	idx        int   // position in Pricer.all
}

// NewPricer returns a Pricer with no nodes yet.
func NewPricer(p Params) (*Pricer, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	pr := &Pricer{params: p, net: flow.New(0), racks: map[string]int{}, nodes: map[string]*pricedNode{}}
	pr.s = pr.net.AddNode()
	pr.x = pr.net.AddNode()
	pr.solver = flow.NewSolver(pr.net)
	return pr, nil
}

// Stats describes the last Price's solve.
func (pr *Pricer) Stats() flow.Stats { return pr.solver.Stats() }

// rack returns rack's R node, adding it (with its X → R arc) if new.
func (pr *Pricer) rack(name string) int {
	if r, ok := pr.racks[name]; ok {
		return r
	}
	r := pr.net.AddNode()
	pr.net.AddArc(pr.x, r, 0, maxQueued, 0)
	pr.racks[name] = r
	return r
}

// node returns l's part of the network, adding it if l's name is new or
// has moved to another rack (the old part is then left idle).
func (pr *Pricer) node(l NodeLoad) *pricedNode {
	if pn, ok := pr.nodes[l.Name]; ok && pn.rack == l.Rack {
		return pn
	}
	r := pr.rack(l.Rack)
	pn := &pricedNode{name: l.Name, rack: l.Rack, idx: len(pr.all)}
	pn.c = pr.net.AddNode()
	pn.d = pr.net.AddNode()
	pr.net.AddArc(r, pn.c, 0, maxQueued, 0)
	pn.local = pr.net.AddArc(pn.d, pn.c, 0, maxQueued, 0)
	pn.rackArc = pr.net.AddArc(pn.d, r, 0, maxQueued, pr.params.RackCost())
	pn.coreArc = pr.net.AddArc(pn.d, pr.x, 0, maxQueued, pr.params.CoreCost())
	pr.nodes[l.Name] = pn
	pr.all = append(pr.all, pn)
	pr.seen = append(pr.seen, false)
	return pn
}

// setSupply and setArc change the network only where the value differs,
// so that the solver's change log holds only real changes.
func (pr *Pricer) setSupply(v int, s int64) {
	if pr.net.Supply(v) != s {
		pr.net.SetSupply(v, s)
	}
}

func (pr *Pricer) setArc(i int, upper, cost int64) {
	a := pr.net.Arc(i)
	if a.Upper != upper {
		pr.net.SetArcBounds(i, 0, upper)
	}
	if a.Cost != cost {
		pr.net.SetArcCost(i, cost)
	}
}

// Price is one period: it brings the network up to date with the
// snapshot, re-solves it from the previous period's optimum, and reads
// the prices off it as Graph.Solve does. It returns the same Outcome as
// Compute on the same snapshot (Nodes and Arcs count the kept network),
// and the same errors for a bad snapshot, after which the network is as
// it was.
func (pr *Pricer) Price(nodes []NodeLoad) (Outcome, error) {
	sn, err := takeSnapshot(nodes, pr.params)
	if err != nil {
		return Outcome{}, err
	}
	clear(pr.seen)
	parts := make([]*pricedNode, len(sn.loads))
	for i, l := range sn.loads {
		pn := pr.node(l)
		parts[i] = pn
		pr.seen[pn.idx] = true
		pr.setSupply(pn.d, int64(l.Queued))
		ws := sn.waves(i)
		for k, w := range ws {
			if w.last {
				w.cap = maxQueued
			}
			if k == len(pn.waves) {
				pn.waves = append(pn.waves, pr.net.AddArc(pn.c, pr.s, 0, w.cap, w.cost))
				continue
			}
			pr.setArc(pn.waves[k], w.cap, w.cost)
		}
		for _, a := range pn.waves[len(ws):] {
			pr.setArc(a, 0, pr.net.Arc(a).Cost)
		}
	}
	for _, pn := range pr.all {
		if pr.seen[pn.idx] {
			continue
		}
		pr.setSupply(pn.d, 0)
		for _, a := range pn.waves {
			pr.setArc(a, 0, pr.net.Arc(a).Cost)
		}
	}
	pr.setSupply(pr.s, -sn.queued)

	sol, err := pr.solver.Solve()
	if err != nil {
		return Outcome{}, fmt.Errorf("locality: solving %v: %w", pr.net, err)
	}
	dist := distToSink(pr.net, pr.s, sol)
	price := func(v int) (int64, bool) {
		if dist[v] == unreached {
			return 0, false
		}
		return dist[v] - sol.Potential[v] + sol.Potential[pr.s], true
	}
	out := Outcome{Cost: sol.Cost, Nodes: pr.net.NumNodes(), Arcs: pr.net.NumArcs()}
	out.Prices = Prices{Node: make(map[string]int64, len(parts)), Rack: map[string]int64{},
		RackPerGB: pr.params.RackPerGB, CorePerGB: pr.params.CorePerGB}
	for i, pn := range parts {
		if sn.loads[i].Slots > 0 {
			if p, ok := price(pn.c); ok {
				out.Prices.Node[pn.name] = p
			}
		}
		if _, done := out.Prices.Rack[pn.rack]; !done {
			if p, ok := price(pr.racks[pn.rack]); ok {
				out.Prices.Rack[pn.rack] = p
			}
		}
		out.Local += sol.Flow[pn.local]
		out.Rack += sol.Flow[pn.rackArc]
		out.Core += sol.Flow[pn.coreArc]
	}
	if p, ok := price(pr.x); ok {
		out.Prices.Cluster = p
	}
	return out, nil
}
