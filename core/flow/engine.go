package flow

import (
	"fmt"
	"math"
	"slices"
)

// engine is the primal-dual state: a pseudoflow on the bound-shifted arcs
// that satisfies complementary slackness with pot at every moment, and the
// excess it leaves at each node. Residual arc 2i is arc i forward (cost c,
// room cap-x) and 2i+1 its reverse (cost -c, room x), where x = flow-lower.
type engine struct {
	head   []int32   // residual arc -> node it enters
	cost   []int64   // residual arc -> cost
	res    []int64   // residual arc -> residual capacity
	adj    [][]int32 // node -> residual arcs leaving it
	pot    []int64   // node potentials; reduced cost = cost + pot[tail] - pot[head]
	excess []int64   // node -> supply not yet routed (< 0: unmet demand)

	// Dijkstra scratch: a node's label is valid where its stamp == epoch.
	lab     []label
	epoch   uint32
	done    []bool
	settled []int32
	heap    radixHeap
	targets []int32 // deficits settled at the search's final distance
	// bound is the smallest tentative distance of a deficit in the current
	// search: the search stops at or below it, so relax skips labels above.
	// On warm Quincy searches most pushes were of such nodes (hubs fanning
	// out to hundreds of tasks).
	bound   int64
	touched []int32 // arcs a warm run augmented along, for Solver.refresh
	warm    bool    // set by run: log touched arcs
	dist    []int64 // scratch for exactPotentials

	// Live partition (warm runs only, see live.go): each adjacency list
	// keeps the arcs that may have room in front of the nlive[v] mark.
	partitioned bool
	nlive       []int32 // node -> length of its live prefix
	pos         []int32 // residual arc -> index in its tail's list

	// Dinic scratch.
	level []int32
	cur   []int32
	queue []int32

	phases int // Dijkstra phases run, for Stats

	// active lists the nodes that had excess when run began; excess only
	// shrinks during a run, so each phase filters it instead of scanning
	// every node.
	active []int32

	// anyArc makes blockingFlows use every residual arc, not only those of
	// zero reduced cost: a plain max flow, to find a feasible flow.
	anyArc bool
}

// newEngine builds the residual network of g from its validated view, with
// zero potentials: every negative-cost arc is saturated so that all residual
// arcs have a non-negative reduced cost. The per-arc and per-node arrays get
// room for spare more arcs and nodes: a Solver's warm solves append to them,
// and on the development machine reallocating a megabyte-sized array cost
// about 2 ms, a fifth of a warm solve's budget.
func newEngine(g *Network, c checked, spare int) *engine {
	n, m := len(g.supply), len(g.arcs)
	e := &engine{
		head:   make([]int32, 2*m, 2*(m+spare)),
		cost:   make([]int64, 2*m, 2*(m+spare)),
		res:    make([]int64, 2*m, 2*(m+spare)),
		pot:    make([]int64, n, n+spare),
		excess: slices.Grow(c.excess, spare),
	}
	deg := make([]int32, n)
	for _, a := range g.arcs {
		deg[a.From]++
		deg[a.To]++
	}
	// One backing array for all adjacency lists keeps them contiguous; a
	// list that grows later (warm start) simply reallocates on its own.
	back := make([]int32, 2*m)
	e.adj = make([][]int32, n)
	off := 0
	for v := range n {
		e.adj[v] = back[off : off : off+int(deg[v])]
		off += int(deg[v])
	}
	for i, a := range g.arcs {
		e.setArc(i, a, c.caps[i])
		e.adj[a.From] = append(e.adj[a.From], int32(2*i))
		e.adj[a.To] = append(e.adj[a.To], int32(2*i+1))
	}
	e.grow(n)
	return e
}

// setArc sets arc i's residual pair for capacity cp (Upper-Lower) and a
// flow x above its lower bound chosen by complementary slackness: full if
// the reduced cost is negative, else zero. It returns the flow it chose;
// the caller accounts for it in the excesses unless x was already counted.
func (e *engine) setArc(i int, a Arc, cp int64) int64 {
	f, r := 2*i, 2*i+1
	e.head[f], e.head[r] = int32(a.To), int32(a.From)
	e.cost[f], e.cost[r] = a.Cost, -a.Cost
	x := int64(0)
	if a.Cost+e.pot[a.From]-e.pot[a.To] < 0 {
		x = cp
	}
	e.res[f], e.res[r] = cp-x, x
	if x != 0 {
		e.excess[a.From] -= x
		e.excess[a.To] += x
	}
	return x
}

// grow sizes the per-node scratch arrays for n nodes.
func (e *engine) grow(n int) {
	for len(e.dist) < n {
		e.dist = append(e.dist, 0)
		e.lab = append(e.lab, label{})
		e.done = append(e.done, false)
		e.nlive = append(e.nlive, 0)
		e.level = append(e.level, -1)
		e.cur = append(e.cur, 0)
	}
}

// run routes all excess to the deficits, phase by phase. It returns
// ErrInfeasible (wrapped) if some excess cannot reach any deficit.
//
// A warm run (a Solver repairing a few changes) ships each phase's flow
// along the search's shortest-path tree only, and its searches skip arcs
// without room (live.go). On Quincy graphs a warm phase mostly ships a
// single unit, so a Dinic pass over the admissible graph, which is about
// as large as the searched region, would double a phase's cost for
// nothing. After its first phase, which ships what a change left tight at
// distance zero (a new task beside its job's unscheduled node), a warm run
// aims the potentials at the remaining deficits (goal.go); aiming before
// it instead cost 18% more forward arc scans on Quincy graphs. A cold
// primal-dual run, with most of the supply still unrouted, also saturates
// the admissible graph by blocking flows (dinic.go).
func (e *engine) run(warm bool) error {
	e.warm = warm
	e.touched = e.touched[:0]
	e.collectActive()
	aimAt := e.phases + 1 // aim before the second phase
	if warm && !e.partitioned {
		e.partition()
	}
	for {
		if warm && e.phases == aimAt {
			e.aimAtDeficits()
		}
		D, ok := e.dijkstra()
		if !ok {
			var left int64
			for _, x := range e.excess {
				if x > 0 {
					left += x
				}
			}
			if left == 0 {
				return nil
			}
			return fmt.Errorf("%w: %d units of supply cannot reach any demand", ErrInfeasible, left)
		}
		e.phases++
		// Shift the potentials of the settled nodes so that every arc on a
		// shortest path to the nearest deficit gets reduced cost zero and
		// no residual arc goes negative; unsettled nodes keep theirs.
		for _, v := range e.settled {
			e.pot[v] += e.lab[v].dist - D
		}
		shipped := e.augmentTree()
		if !warm && e.blockingFlows() {
			shipped = true
		}
		if !shipped {
			// Cannot happen while complementary slackness holds: the
			// first deficit's tree path is admissible and untouched.
			// Fail loudly rather than loop.
			return fmt.Errorf("flow: internal error: a shortest-path phase shipped no flow")
		}
	}
}

// label is a node's Dijkstra state, packed so that relaxing an arc touches
// one cache line of the head node's scratch.
type label struct {
	dist  int64  // tentative distance (reduced costs)
	stamp uint32 // the label is valid where stamp == engine.epoch
	pred  int32  // residual arc the node was reached by; -1 at a root
}

// dijkstra searches from every node with excess over residual arcs with
// their (non-negative) reduced costs. It stops once the first deficit node
// is settled, at distance D, and every other node at distance D too; the
// deficits among them go to e.targets (in settling order). It leaves the
// settled nodes in e.settled, their distances and tree arcs in e.lab. ok is
// false if no deficit is reachable (or there is no excess left).
func (e *engine) dijkstra() (D int64, ok bool) {
	e.newSearch()
	e.targets = e.targets[:0]
	e.bound = math.MaxInt64
	e.pruneActive()
	for _, v := range e.active {
		e.lab[v] = label{dist: 0, stamp: e.epoch, pred: -1}
		e.heap.push(0, v)
	}
	for e.heap.size > 0 {
		if ok && e.heap.min() > D {
			break
		}
		d, v := e.heap.pop()
		if e.done[v] || d > e.lab[v].dist {
			continue
		}
		e.done[v] = true
		e.settled = append(e.settled, v)
		if e.excess[v] < 0 {
			// Deficits are leaves: a path through one to another is
			// never needed, since the first could take the flow itself.
			ok, D = true, d
			e.targets = append(e.targets, v)
			continue
		}
		e.relax(v, d)
	}
	return D, ok
}

// newSearch invalidates every label (a new epoch) and clears the last
// search's settled marks and heap.
func (e *engine) newSearch() {
	e.epoch++
	if e.epoch == 0 { // wrapped: clear the stamps once every 2^32 searches
		for i := range e.lab {
			e.lab[i].stamp = 0
		}
		e.epoch = 1
	}
	for _, v := range e.settled {
		e.done[v] = false
	}
	e.settled = e.settled[:0]
	e.heap.reset()
}

// relax scans the arcs with room leaving v, settled at distance d, and
// lowers their heads' labels. On a partitioned engine it also moves the
// arcs it finds empty behind v's live mark (live.go), so later searches
// skip them.
func (e *engine) relax(v int32, d int64) {
	adj := e.adj[v]
	k := len(adj)
	if e.partitioned {
		k = int(e.nlive[v])
	}
	base := d + e.pot[v]
	for i := 0; i < k; {
		a := adj[i]
		if e.res[a] <= 0 {
			if e.partitioned {
				k--
				e.swapArcs(adj, i, k)
			} else {
				i++
			}
			continue
		}
		i++
		w := e.head[a]
		nd := base + e.cost[a] - e.pot[w]
		if nd > e.bound {
			continue // w cannot be settled before the search stops
		}
		if l := &e.lab[w]; l.stamp != e.epoch || nd < l.dist {
			*l = label{dist: nd, stamp: e.epoch, pred: a}
			e.heap.push(nd, w)
			if e.excess[w] < 0 {
				e.bound = nd
			}
		}
	}
	if e.partitioned {
		e.nlive[v] = int32(k)
	}
}

// augmentTree ships flow to each deficit the last search settled, along its
// tree path from the excess node at the root, as far as the root's excess,
// the deficit and the path's room allow. Tree arcs are tight after the
// potential shift, so this keeps complementary slackness. It reports
// whether it shipped anything; the first target always ships, since no
// earlier augmentation touched its path or root.
func (e *engine) augmentTree() bool {
	shipped := false
	for _, t := range e.targets {
		f, v := -e.excess[t], t
		for a := e.lab[v].pred; a >= 0; a = e.lab[v].pred {
			f = min(f, e.res[a])
			v = e.head[a^1]
		}
		f = min(f, e.excess[v])
		if f <= 0 {
			continue // root drained or path full: a later phase routes it
		}
		e.excess[v] -= f
		e.excess[t] += f
		for v := t; e.lab[v].pred >= 0; {
			a := e.lab[v].pred
			e.res[a] -= f
			e.res[a^1] += f
			e.revive(a ^ 1)
			if e.warm {
				e.touched = append(e.touched, a>>1)
			}
			v = e.head[a^1]
		}
		shipped = true
	}
	return shipped
}

// collectActive lists the nodes with excess.
func (e *engine) collectActive() {
	e.active = e.active[:0]
	for v, x := range e.excess {
		if x > 0 {
			e.active = append(e.active, int32(v))
		}
	}
}

// pruneActive drops nodes whose excess is gone from the active list.
func (e *engine) pruneActive() {
	k := 0
	for _, v := range e.active {
		if e.excess[v] > 0 {
			e.active[k] = v
			k++
		}
	}
	e.active = e.active[:k]
}
