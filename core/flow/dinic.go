package flow

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
