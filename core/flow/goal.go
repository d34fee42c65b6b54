package flow

// aimAtDeficits lowers every node's potential by its reduced distance to
// the nearest deficit, found by one Dijkstra search backwards from all
// deficits that stops once every excess node is settled; nodes it did not
// settle are lowered by the distance it stopped at.
//
// Why: the forward searches of a warm run explore every node closer to the
// excess than the nearest deficit. With potentials fresh from the previous
// optimum, or flattened around the excess by earlier phases, that region
// is most of a Quincy graph even when the nearest deficit is only a few
// units away (ties are everywhere). After this shift each excess node's
// nearest deficit is at reduced distance zero and arcs leading away from
// the deficits cost more (the potential acts as an A* heuristic), so a
// forward search stays close to the shortest paths it needs. Measured on
// Quincy graphs at 2,500 computers after 1% of tasks changed: forward
// searches settled about 21,000 nodes per re-solve instead of 190,000, for
// a backward search of about 6,000 (stopping when 95% or 75% of the excess
// was settled instead made the forward searches 1.5 and 9 times larger;
// aiming again between phases did not pay). The backward search scans
// whole adjacency lists, since the live partition (live.go) tracks arcs
// with room out of a node, not into it: about 200,000 entries per re-solve,
// X's ~22,000 among them (X was settled once per re-solve).
//
// It keeps every residual arc's reduced cost non-negative: with b(v) the
// capped distance, b(u) <= rc(u,w) + b(w) for every arc u->w with room,
// which is the new reduced cost rc(u,w) - b(u) + b(w) >= 0.
func (e *engine) aimAtDeficits() {
	e.newSearch()
	for v, x := range e.excess {
		if x < 0 {
			e.lab[v] = label{dist: 0, stamp: e.epoch, pred: -1}
			e.heap.push(0, int32(v))
		}
	}
	e.pruneActive()
	left := len(e.active) // excess nodes not yet settled
	var K int64
	for e.heap.size > 0 && left > 0 {
		d, w := e.heap.pop()
		if e.done[w] || d > e.lab[w].dist {
			continue
		}
		e.done[w] = true
		e.settled = append(e.settled, w)
		K = d
		if e.excess[w] > 0 {
			left--
		}
		// Arcs u->w with room are the partners of w's own arcs.
		base := d - e.pot[w]
		for _, b := range e.adj[w] {
			a := b ^ 1
			if e.res[a] <= 0 {
				continue
			}
			u := e.head[b]
			nd := base + e.cost[a] + e.pot[u]
			if l := &e.lab[u]; l.stamp != e.epoch || nd < l.dist {
				*l = label{dist: nd, stamp: e.epoch, pred: a}
				e.heap.push(nd, u)
			}
		}
	}
	for v := range e.pot {
		b := K
		if e.done[v] {
			b = e.lab[v].dist
		}
		e.pot[v] -= b
	}
}
