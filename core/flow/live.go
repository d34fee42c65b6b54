package flow

// The live partition lets a warm search skip arcs without room. On Quincy
// graphs the cluster aggregator X has an arc to every task and each rack
// one to every task that prefers it, but only the few hundred that carry
// flow have a residual reverse arc; a search settling X used to read all
// ~22,000. A partitioned engine keeps, in each adjacency list, every arc
// with room in front of the nlive[v] mark (plus some that have since run
// out, dropped lazily when relax next scans the list) and the rest
// behind it. Only warm runs maintain it: cold code paths reorder nothing
// and never run on a partitioned engine, since a Solver starts over with a
// new engine.

// partition sorts every adjacency list into its live prefix and dead tail.
func (e *engine) partition() {
	n := len(e.adj)
	e.nlive = e.nlive[:0]
	for range n {
		e.nlive = append(e.nlive, 0)
	}
	if cap(e.pos) < len(e.res) {
		e.pos = make([]int32, len(e.res), cap(e.res)) // room as newEngine left
	}
	e.pos = e.pos[:len(e.res)]
	for v, adj := range e.adj {
		k := 0
		for i, a := range adj {
			if e.res[a] > 0 {
				adj[k], adj[i] = a, adj[k]
				k++
			}
		}
		for i, a := range adj {
			e.pos[a] = int32(i)
		}
		e.nlive[v] = int32(k)
	}
	e.partitioned = true
}

// swapArcs swaps entries i and j of a partitioned adjacency list, keeping
// pos in step.
func (e *engine) swapArcs(adj []int32, i, j int) {
	a, b := adj[i], adj[j]
	adj[i], adj[j] = b, a
	e.pos[b], e.pos[a] = int32(i), int32(j)
}

// revive moves residual arc a, which has just gained room, into its tail's
// live prefix. It swaps a with the first dead arc, so the live prefix only
// grows at its end and a scan in progress over it is not disturbed.
func (e *engine) revive(a int32) {
	if !e.partitioned {
		return
	}
	v := e.head[a^1]
	p, k := e.pos[a], e.nlive[v]
	if p < k {
		return
	}
	adj := e.adj[v]
	b := adj[k]
	adj[k], adj[p] = a, b
	e.pos[a], e.pos[b] = k, p
	e.nlive[v] = k + 1
}

// link appends residual arc a to its tail v's list, for arcs added to a
// network after the engine was built; on a partitioned engine it extends
// pos and puts a in the live prefix if it has room.
func (e *engine) link(v int, a int32) {
	e.adj[v] = append(e.adj[v], a)
	if !e.partitioned {
		return
	}
	for len(e.pos) <= int(a) {
		e.pos = append(e.pos, 0)
	}
	e.pos[a] = int32(len(e.adj[v]) - 1)
	if e.res[a] > 0 {
		e.revive(a)
	}
}
