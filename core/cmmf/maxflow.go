package cmmf

// capacity is a flow network's capacity type: float64 for divisible slots,
// int64 for whole ones.
type capacity interface{ ~int64 | ~float64 }

// network is a residual flow network solved by Dinic's algorithm: repeated
// breadth-first searches build a level graph from the source, and
// depth-first searches push blocking flows through it.
//
// Dinic suits the solver's networks (source → groups → types → sink): every
// augmenting path alternates group and type nodes, so its length, and with
// it the number of phases, is bounded by twice the number of types, which is
// small; and it resumes from whatever flow the network already carries, so
// the solver can raise or lower capacities between calls and pay only for
// the difference.
//
// Arcs are stored by node (CSR layout) with explicit reverse indices. Each
// arc has a tolerance, the same in both directions: a residual at or below
// it counts as zero, so that rounding residue is not mistaken for room. The
// divisible solver gives the arcs at machine types its tolerance in slots
// (see Tolerance) and the source arcs none, so that a small ask is never
// ignored; with int64 every tolerance is 0.
type network[C capacity] struct {
	start []int32 // arcs of node v are start[v] .. start[v+1]-1
	to    []int32
	rev   []int32
	res   []C
	tol   []C

	level []int32
	next  []int32 // current arc per node during a phase
	queue []int32
}

// arcSpec is an arc to be built: from → to with capacity cap, flow already
// on it, and tolerance tol.
type arcSpec[C capacity] struct {
	from, to       int32
	cap, flow, tol C
}

// build (re)makes g with n nodes and the given arcs, reusing g's memory. It
// returns, per spec, the index of the spec's forward arc, so the caller can
// read and change its flow later.
func (g *network[C]) build(n int, arcs []arcSpec[C], index []int32) []int32 {
	g.start = resize(g.start, n+1)
	clear(g.start)
	for _, a := range arcs {
		g.start[a.from+1]++
		g.start[a.to+1]++
	}
	for v := 1; v <= n; v++ {
		g.start[v] += g.start[v-1]
	}
	m := 2 * len(arcs)
	g.to = resize(g.to, m)
	g.rev = resize(g.rev, m)
	g.res = resize(g.res, m)
	g.tol = resize(g.tol, m)
	g.next = resize(g.next, n)
	copy(g.next, g.start[:n]) // next free slot per node while filling
	index = resize(index, len(arcs))
	for i, a := range arcs {
		f, r := g.next[a.from], g.next[a.to]
		g.next[a.from]++
		g.next[a.to]++
		g.to[f], g.rev[f], g.res[f], g.tol[f] = a.to, r, a.cap-a.flow, a.tol
		g.to[r], g.rev[r], g.res[r], g.tol[r] = a.from, f, a.flow, a.tol
		index[i] = f
	}
	g.level = resize(g.level, n)
	return index
}

// resize returns s with length n, reallocating only when it must.
func resize[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// flow is the flow on forward arc e.
func (g *network[C]) flow(e int32) C { return g.res[g.rev[e]] }

// move pushes d more units along arc e (negative d pulls flow back).
func (g *network[C]) move(e int32, d C) {
	g.res[e] -= d
	g.res[g.rev[e]] += d
}

// maxFlow augments the current flow from s to t until no augmenting path
// remains, and returns the amount added. The arcs out of s must have finite
// residuals: their sum bounds what one depth-first search may push.
//
// Each phase ends with a blocking flow, so the distance from s to t grows
// and there are fewer phases than nodes; the loop also stops there, as a
// guard. (What one phase pushes may round to nothing against the limit, so
// a phase that reports 0 is not taken to mean the last one.)
func (g *network[C]) maxFlow(s, t int32) C {
	var total C
	for phase := 0; phase < len(g.level) && g.bfs(s, t); phase++ {
		copy(g.next, g.start[:len(g.next)])
		var limit C
		for e := g.start[s]; e < g.start[s+1]; e++ {
			if g.res[e] > g.tol[e] {
				limit += g.res[e]
			}
		}
		total += g.push(s, t, limit)
	}
	return total
}

// bfs labels nodes with their distance from s over arcs with residual above
// tolerance, and reports whether t is reachable. Nodes at t's distance or beyond
// are not expanded: no shortest path goes through them.
func (g *network[C]) bfs(s, t int32) bool {
	for i := range g.level {
		g.level[i] = -1
	}
	g.level[s] = 0
	q := append(g.queue[:0], s)
	for h := 0; h < len(q); h++ {
		u := q[h]
		lu := g.level[u]
		if g.level[t] >= 0 && lu >= g.level[t] {
			break
		}
		for e := g.start[u]; e < g.start[u+1]; e++ {
			v := g.to[e]
			if g.level[v] < 0 && g.res[e] > g.tol[e] {
				g.level[v] = lu + 1
				q = append(q, v)
			}
		}
	}
	g.queue = q
	return g.level[t] >= 0
}

// push sends up to limit units from u to t along the level graph and returns
// how much it sent. It keeps a current arc per node (next), advanced past
// arcs that are saturated or lead to blocked nodes, so a phase costs
// O(arcs + paths × length) rather than restarting every search.
//
// What was sent is summed from what the arcs took, not computed as limit
// minus what is left: limit may be far larger (a source arc's whole ask)
// and the difference would round, unbalancing the flow at u.
func (g *network[C]) push(u, t int32, limit C) C {
	if u == t {
		return limit
	}
	var sent C
	left := limit
	end := g.start[u+1]
	for ; g.next[u] < end; g.next[u]++ {
		e := g.next[u]
		v := g.to[e]
		if g.res[e] <= g.tol[e] || g.level[v] != g.level[u]+1 {
			continue
		}
		// Every push either saturates an arc (want = res[e], and res[e]
		// becomes exactly 0) or exhausts what u may send (left becomes
		// exactly 0): the usual argument that Dinic terminates holds in
		// floating point too.
		want := min(left, g.res[e])
		if d := g.push(v, t, want); d > 0 {
			g.res[e] -= d
			g.res[g.rev[e]] += d
			sent += d
			left -= d
		}
		// Either u is exhausted (stay on this arc: it may have room left
		// for the next search), or this arc is saturated or leads nowhere.
		if left <= 0 {
			return sent
		}
	}
	return sent
}

// reachable marks the nodes reachable from s over arcs with residual above
// tolerance: after a maximum flow, the source side of the minimum cut closest to
// the source.
func (g *network[C]) reachable(s int32, mark []bool) []bool {
	mark = resize(mark, len(g.level))
	clear(mark)
	mark[s] = true
	q := append(g.queue[:0], s)
	for h := 0; h < len(q); h++ {
		u := q[h]
		for e := g.start[u]; e < g.start[u+1]; e++ {
			if v := g.to[e]; !mark[v] && g.res[e] > g.tol[e] {
				mark[v] = true
				q = append(q, v)
			}
		}
	}
	g.queue = q
	return mark
}

// reaching marks the nodes from which t is reachable over arcs with residual
// above tolerance. After a maximum flow, a node not marked cannot send one more
// unit to t without taking flow from another path: this is the saturation
// test of §5 for every node at once.
func (g *network[C]) reaching(t int32, mark []bool) []bool {
	mark = resize(mark, len(g.level))
	clear(mark)
	mark[t] = true
	q := append(g.queue[:0], t)
	for h := 0; h < len(q); h++ {
		u := q[h]
		for e := g.start[u]; e < g.start[u+1]; e++ {
			// Arc e is u → v; its reverse rev[e] is v → u.
			if v := g.to[e]; !mark[v] && g.res[g.rev[e]] > g.tol[e] {
				mark[v] = true
				q = append(q, v)
			}
		}
	}
	g.queue = q
	return mark
}
