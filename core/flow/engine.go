package flow

import "fmt"

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

	// Dijkstra scratch, valid where stamp == epoch.
	dist    []int64
	stamp   []uint32
	epoch   uint32
	done    []bool
	settled []int32
	heap    nodeHeap

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
// arcs have a non-negative reduced cost.
func newEngine(g *Network, c checked) *engine {
	n, m := len(g.supply), len(g.arcs)
	e := &engine{
		head:   make([]int32, 2*m),
		cost:   make([]int64, 2*m),
		res:    make([]int64, 2*m),
		pot:    make([]int64, n),
		excess: c.excess,
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
		e.stamp = append(e.stamp, 0)
		e.done = append(e.done, false)
		e.level = append(e.level, -1)
		e.cur = append(e.cur, 0)
	}
}

// run routes all excess to the deficits, phase by phase. It returns
// ErrInfeasible (wrapped) if some excess cannot reach any deficit.
func (e *engine) run() error {
	e.collectActive()
	for {
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
			e.pot[v] += e.dist[v] - D
		}
		if !e.blockingFlows() {
			// Cannot happen while complementary slackness holds: the
			// shortest path just found is admissible. Fail loudly rather
			// than loop.
			return fmt.Errorf("flow: internal error: a shortest-path phase shipped no flow")
		}
	}
}

// dijkstra searches from every node with excess over residual arcs with
// their (non-negative) reduced costs, and stops at the first deficit node it
// settles, returning its distance D. It leaves the settled nodes in
// e.settled with their distances in e.dist. ok is false if no deficit is
// reachable (or there is no excess left).
func (e *engine) dijkstra() (D int64, ok bool) {
	e.epoch++
	if e.epoch == 0 { // wrapped: clear the stamps once every 2^32 searches
		clear(e.stamp)
		e.epoch = 1
	}
	for _, v := range e.settled {
		e.done[v] = false
	}
	e.settled = e.settled[:0]
	e.heap = e.heap[:0]
	e.pruneActive()
	for _, v := range e.active {
		e.stamp[v] = e.epoch
		e.dist[v] = 0
		e.heap.push(0, v)
	}
	for len(e.heap) > 0 {
		d, v := e.heap.pop()
		if e.done[v] || d > e.dist[v] {
			continue
		}
		e.done[v] = true
		e.settled = append(e.settled, v)
		if e.excess[v] < 0 {
			return d, true
		}
		pv := e.pot[v]
		for _, a := range e.adj[v] {
			if e.res[a] <= 0 {
				continue
			}
			w := e.head[a]
			nd := d + e.cost[a] + pv - e.pot[w]
			if e.stamp[w] != e.epoch || nd < e.dist[w] {
				e.stamp[w] = e.epoch
				e.dist[w] = nd
				e.heap.push(nd, w)
			}
		}
	}
	return 0, false
}

// blockingFlows ships flow from excess nodes to deficit nodes along arcs of
// zero reduced cost (the admissible graph) until no such path is left, by
// Dinic's method: BFS levels, then augmenting depth-first along them.
// It reports whether it shipped any flow.
func (e *engine) blockingFlows() bool {
	shipped := false
	for e.levels() {
		for _, v := range e.active {
			x := e.excess[v]
			for x > 0 {
				got := e.augment(v, x)
				if got == 0 {
					break
				}
				x -= got
				shipped = true
			}
			e.excess[v] = x
		}
	}
	return shipped
}

// levels labels nodes by BFS distance from the excess nodes in the
// admissible graph and reports whether some deficit node was reached.
func (e *engine) levels() bool {
	// Only the nodes the previous search labelled need clearing.
	for _, v := range e.queue {
		e.level[v] = -1
	}
	e.pruneActive()
	q := e.queue[:0]
	for _, v := range e.active {
		e.level[v] = 0
		q = append(q, v)
	}
	found := int32(-1) // level at which a deficit was first reached
	for i := 0; i < len(q); i++ {
		v := q[i]
		lv := e.level[v]
		e.cur[v] = 0
		if found >= 0 && lv >= found {
			continue // deeper nodes cannot lie on a shortest augmenting path
		}
		if e.excess[v] < 0 {
			found = lv
			continue
		}
		pv := e.pot[v]
		for _, a := range e.adj[v] {
			if e.res[a] <= 0 {
				continue
			}
			w := e.head[a]
			if e.level[w] >= 0 || (!e.anyArc && e.cost[a]+pv-e.pot[w] != 0) {
				continue
			}
			e.level[w] = lv + 1
			q = append(q, w)
		}
	}
	e.queue = q
	return found >= 0
}

// augment pushes up to limit units from v along increasing levels to a
// deficit node and returns how much it pushed.
func (e *engine) augment(v int32, limit int64) int64 {
	if x := e.excess[v]; x < 0 && e.level[v] > 0 {
		if -x < limit {
			limit = -x
		}
		e.excess[v] += limit
		return limit
	}
	pv, lv := e.pot[v], e.level[v]
	adj := e.adj[v]
	for ; int(e.cur[v]) < len(adj); e.cur[v]++ {
		a := adj[e.cur[v]]
		if e.res[a] <= 0 {
			continue
		}
		w := e.head[a]
		if e.level[w] != lv+1 || (!e.anyArc && e.cost[a]+pv-e.pot[w] != 0) {
			continue
		}
		room := min(limit, e.res[a])
		if got := e.augment(w, room); got > 0 {
			e.res[a] -= got
			e.res[a^1] += got
			return got
		}
	}
	e.level[v] = -2 // dead end for the rest of this round
	return 0
}

// nodeHeap is a binary min-heap of (distance, node) pairs with lazy deletion.
type nodeHeap []heapItem

type heapItem struct {
	d int64
	v int32
}

func (h *nodeHeap) push(d int64, v int32) {
	*h = append(*h, heapItem{d, v})
	s := *h
	i := len(s) - 1
	for i > 0 {
		p := (i - 1) / 2
		if s[p].d <= d {
			break
		}
		s[i] = s[p]
		i = p
	}
	s[i] = heapItem{d, v}
}

func (h *nodeHeap) pop() (int64, int32) {
	s := *h
	top := s[0]
	last := s[len(s)-1]
	s = s[:len(s)-1]
	*h = s
	if len(s) == 0 {
		return top.d, top.v
	}
	i, n := 0, len(s)
	for {
		c := 2*i + 1
		if c >= n {
			break
		}
		if c+1 < n && s[c+1].d < s[c].d {
			c++
		}
		if s[c].d >= last.d {
			break
		}
		s[i] = s[c]
		i = c
	}
	s[i] = last
	return top.d, top.v
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
