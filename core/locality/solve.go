package locality

import (
	"fmt"
	"math"

	"github.com/sparrowfleet/sparrow/core/flow"
)

// Outcome is a solved period: the prices and what the optimal flow did.
type Outcome struct {
	// Prices are the guidance (Version left 0 for the caller to set).
	Prices Prices
	// Cost is the optimal flow's total cost.
	Cost int64
	// Local, Rack and Core count the queued tasks the flow leaves on
	// their node, moves within their rack and moves across the core.
	Local, Rack, Core int64
	// Nodes and Arcs are the network's size.
	Nodes, Arcs int
}

// Compute builds and solves a period's graph: Build then Solve.
func Compute(nodes []NodeLoad, p Params) (Outcome, error) {
	g, err := Build(nodes, p)
	if err != nil {
		return Outcome{}, err
	}
	return g.Solve()
}

// Solve finds the min-cost flow and reads the prices off it.
//
// The price of a node v (C_m, R_l or X) is the marginal cost of one more
// task entering the network at v: the cost of a shortest path from v to
// the sink S in the optimal flow's residual network. Adding that unit
// along that path keeps the flow optimal (successive shortest paths), so
// the price is exactly how much the optimum grows by. The path may
// displace queued work: one more task on a hot node C_h can push one of
// h's own queued tasks through R_l to an idle rack-mate, so the hot
// node's price is at most ψ·input above its rack's.
//
// core/flow's potentials π give reduced costs c + π(u) − π(v) that are
// non-negative on every residual arc, and π(S) − π(v) is a lower bound
// on the path cost, tight only where the solver happened to settle v on
// a shortest path. So Solve runs one Dijkstra search from S over the
// reversed residual network with the reduced costs, and converts back:
// price(v) = dist'(v) − π(v) + π(S). A node that cannot reach S (a node
// without slots, a rack of such nodes) gets no price.
func (g *Graph) Solve() (Outcome, error) {
	sol, err := flow.Solve(g.Net)
	if err != nil {
		return Outcome{}, fmt.Errorf("locality: solving %v: %w", g.Net, err)
	}
	dist := distToSink(g.Net, g.S, sol)
	pot := sol.Potential
	price := func(v int) (int64, bool) {
		if dist[v] == unreached {
			return 0, false
		}
		return dist[v] - pot[v] + pot[g.S], true
	}
	out := Outcome{Cost: sol.Cost, Nodes: g.Net.NumNodes(), Arcs: g.Net.NumArcs()}
	out.Prices = Prices{Node: make(map[string]int64, len(g.Loads)), Rack: make(map[string]int64, len(g.Racks)),
		RackPerGB: g.params.RackPerGB, CorePerGB: g.params.CorePerGB}
	for i, l := range g.Loads {
		if g.Comp[i] < 0 {
			continue
		}
		if p, ok := price(g.Comp[i]); ok {
			out.Prices.Node[l.Name] = p
		}
	}
	for i, r := range g.Racks {
		if p, ok := price(g.RackNode[i]); ok {
			out.Prices.Rack[r] = p
		}
	}
	if p, ok := price(g.X); ok {
		out.Prices.Cluster = p
	}
	for _, a := range g.local {
		out.Local += sol.Flow[a]
	}
	for _, a := range g.rack {
		out.Rack += sol.Flow[a]
	}
	for _, a := range g.core {
		out.Core += sol.Flow[a]
	}
	return out, nil
}

const unreached = math.MaxInt64

// distToSink returns, for every node, the length of a shortest path to
// sink in sol's residual network under the reduced costs, which are
// non-negative there; unreached where there is none.
func distToSink(net *flow.Network, sink int, sol flow.Solution) []int64 {
	n, m := net.NumNodes(), net.NumArcs()
	pot := sol.Potential
	// in[v] lists residual arcs u -> v as (u, reduced cost), in CSR form.
	deg := make([]int32, n+1)
	type edge struct {
		from int32
		w    int64
	}
	for i := range m {
		a := net.Arc(i)
		if sol.Flow[i] < a.Upper {
			deg[a.To+1]++
		}
		if sol.Flow[i] > a.Lower {
			deg[a.From+1]++
		}
	}
	for v := range n {
		deg[v+1] += deg[v]
	}
	in := make([]edge, deg[n])
	fill := append([]int32(nil), deg[:n]...)
	for i := range m {
		a := net.Arc(i)
		rc := a.Cost + pot[a.From] - pot[a.To]
		if sol.Flow[i] < a.Upper { // forward residual a.From -> a.To
			in[fill[a.To]] = edge{int32(a.From), max(rc, 0)}
			fill[a.To]++
		}
		if sol.Flow[i] > a.Lower { // backward residual a.To -> a.From
			in[fill[a.From]] = edge{int32(a.To), max(-rc, 0)}
			fill[a.From]++
		}
	}
	dist := make([]int64, n)
	for v := range dist {
		dist[v] = unreached
	}
	dist[sink] = 0
	h := distHeap{{0, int32(sink)}}
	for len(h) > 0 {
		it := h.pop()
		if it.d > dist[it.v] {
			continue
		}
		for _, e := range in[deg[it.v]:deg[it.v+1]] {
			if d := it.d + e.w; d < dist[e.from] {
				dist[e.from] = d
				h.push(distItem{d, e.from})
			}
		}
	}
	return dist
}

type distItem struct {
	d int64
	v int32
}

// distHeap is a binary min-heap of tentative distances, with stale
// entries skipped when popped (lazy deletion).
type distHeap []distItem

func (h *distHeap) push(it distItem) {
	*h = append(*h, it)
	a := *h
	for i := len(a) - 1; i > 0; {
		p := (i - 1) / 2
		if a[p].d <= a[i].d {
			break
		}
		a[p], a[i] = a[i], a[p]
		i = p
	}
}

func (h *distHeap) pop() distItem {
	a := *h
	top := a[0]
	last := len(a) - 1
	a[0] = a[last]
	a = a[:last]
	for i := 0; ; {
		l, m := 2*i+1, i
		if l < len(a) && a[l].d < a[m].d {
			m = l
		}
		if r := l + 1; r < len(a) && a[r].d < a[m].d {
			m = r
		}
		if m == i {
			break
		}
		a[i], a[m] = a[m], a[i]
		i = m
	}
	*h = a
	return top
}
