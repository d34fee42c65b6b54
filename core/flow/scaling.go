package flow

import (
	"fmt"
	"math/bits"
)

// scalingAlpha is the factor by which cost scaling divides ε each round,
// chosen by measurement on Quincy-shaped graphs (4, 6, 8, 16, 32 tried).
const scalingAlpha = 8

// updateEvery is how many relabels per node a refine round does between
// global price updates (priceupdate.go). Measured at 12,500 computers
// (CPU time of the rounds): every 1, 2 and 4n relabels 1.42-1.50 s, 1.41-1.49 s,
// 1.36-1.39 s; an extra update at the start of each round 1.64-1.83 s.
const updateEvery = 4

// canScale reports whether cost scaling's scaled costs and potentials fit
// in int64: costs are multiplied by n+1, and in each round a node's
// potential falls by at most a small multiple of n·ε·α (Goldberg), which
// over all rounds sums to under 64·(n+1)²·max|cost| for α ≤ 16.
func canScale(n int, maxAbs int64) bool {
	k := uint64(n + 1)
	h, l := bits.Mul64(uint64(maxAbs)+1, k*k)
	return h == 0 && l < limit/64
}

// feasible routes all excess to the deficits by a plain max flow (Dinic on
// every residual arc), ignoring costs. It returns ErrInfeasible (wrapped)
// if some excess cannot be routed.
func (e *engine) feasible() error {
	e.anyArc = true
	e.collectActive()
	e.blockingFlows()
	e.anyArc = false
	var left int64
	for _, x := range e.excess {
		if x > 0 {
			left += x
		}
	}
	if left != 0 {
		return fmt.Errorf("%w: %d units of supply cannot reach any demand", ErrInfeasible, left)
	}
	return nil
}

// costScaling turns the engine's feasible flow into an optimal one by
// Goldberg's cost scaling: costs are scaled by n+1 so that ε = 1 means
// optimal, and each round divides ε by scalingAlpha and restores
// ε-optimality by push-relabel (FIFO order, current-arc pointers). On
// networks of csrMinArcs residual arcs or more the rounds run on a
// tail-sorted copy of the residual network (csr.go) with global price
// updates (priceupdate.go) after every updateAfter relabels (0: every
// updateEvery·n; tests pass small numbers, which also force the copy),
// and its flows are copied back at the end. The engine's potentials are
// then left scaled; exactPotentials fixes them.
func (e *engine) costScaling(maxAbs int64, updateAfter int) {
	clear(e.pot)
	eps := max(1, maxAbs*int64(len(e.pot)+1)) * scalingAlpha
	if updateAfter <= 0 && len(e.res) < csrMinArcs {
		e.refineAdj(eps)
		return
	}
	s := newScaled(e)
	s.updateAfter = updateAfter
	if updateAfter <= 0 {
		s.updateAfter = max(1, updateEvery*len(e.pot))
	}
	s.refineFrom(eps)
	s.store(e)
}

// csrMinArcs is the size (in residual arcs) from which cost scaling copies
// the network into the tail-sorted layout. Below it the copy's fresh
// memory cost more than it saved: at 243 computers (33,890 residual arcs)
// a cold solve in the benchmark CLI took 7.7-7.9 ms with the copy and
// 7.1-7.2 ms without (4 runs alternating), though a steady-state Go
// benchmark, reusing memory, favoured the copy; at 2,500 computers
// (351,702) the copy won everywhere (120-123 ms against 144-158 ms).
const csrMinArcs = 1 << 16

// refineFrom runs the scaling rounds from ε = eps/scalingAlpha down to 1
// on potentials already scaled by n+1.
func (s *scaled) refineFrom(eps int64) {
	n := len(s.pot)
	first, head, cost, res, rev := s.first, s.head, s.cost, s.res, s.rev
	pot, excess, cur := s.pot, s.excess, s.cur
	queue := make([]int32, 0, n)
	inQ := make([]bool, n)
	relabels, nextUpdate := 0, s.updateAfter
	for eps > 1 {
		eps = max(1, eps/scalingAlpha)
		// Saturate every residual arc that is now too negative; this may
		// leave excesses and deficits, which push-relabel then removes.
		for v := range n {
			pv := pot[v]
			for a := first[v]; a < first[v+1]; a++ {
				if r := res[a]; r > 0 && cost[a]+pv-pot[head[a]] < 0 {
					res[a] = 0
					res[rev[a]] += r
					excess[v] -= r
					excess[head[a]] += r
				}
			}
		}
		queue = queue[:0]
		for v := range n {
			cur[v] = first[v]
			if excess[v] > 0 {
				queue = append(queue, int32(v))
				inQ[v] = true
			}
		}
		// FIFO of active nodes: pop from head, compacting now and then so
		// the backing array stays about n long.
		qh := 0
		for qh < len(queue) {
			v := queue[qh]
			qh++
			if qh >= n {
				queue = queue[:copy(queue, queue[qh:])]
				qh = 0
			}
			inQ[v] = false
			// Discharge v: push along admissible arcs, relabel when none.
			for excess[v] > 0 {
				pv := pot[v]
				a, end := cur[v], first[v+1]
				for ; a < end; a++ {
					if res[a] <= 0 {
						continue
					}
					w := head[a]
					if cost[a]+pv-pot[w] >= 0 {
						continue
					}
					d := min(excess[v], res[a])
					res[a] -= d
					res[rev[a]] += d
					excess[v] -= d
					excess[w] += d
					if excess[w] > 0 && !inQ[w] {
						inQ[w] = true
						queue = append(queue, w)
					}
					if excess[v] == 0 {
						break
					}
				}
				cur[v] = a
				if excess[v] == 0 {
					break
				}
				// Relabel: lower p(v) as far as ε-optimality allows.
				best := int64(-1) << 62
				for a := first[v]; a < end; a++ {
					if res[a] > 0 {
						best = max(best, pot[head[a]]-cost[a])
					}
				}
				pot[v] = best - eps
				cur[v] = first[v]
				if relabels++; relabels >= nextUpdate {
					nextUpdate += s.updateAfter
					s.globalUpdate(eps)
				}
			}
		}
	}
}

// refineAdj is refineFrom on the engine's own layout, without global
// updates: small networks use it (see csrMinArcs).
func (e *engine) refineAdj(eps int64) {
	n := len(e.pot)
	scale := int64(n + 1)
	queue := make([]int32, 0, n)
	inQ := make([]bool, n)
	for eps > 1 {
		eps = max(1, eps/scalingAlpha)
		// Saturate every residual arc that is now too negative; this may
		// leave excesses and deficits, which push-relabel then removes.
		for v := range n {
			pv := e.pot[v]
			for _, a := range e.adj[v] {
				if r := e.res[a]; r > 0 && e.cost[a]*scale+pv-e.pot[e.head[a]] < 0 {
					e.res[a] = 0
					e.res[a^1] += r
					e.excess[v] -= r
					e.excess[e.head[a]] += r
				}
			}
		}
		queue = queue[:0]
		for v := range n {
			e.cur[v] = 0
			if e.excess[v] > 0 {
				queue = append(queue, int32(v))
				inQ[v] = true
			}
		}
		// FIFO of active nodes: pop from head, compacting now and then so
		// the backing array stays about n long.
		head := 0
		for head < len(queue) {
			v := queue[head]
			head++
			if head >= n {
				queue = queue[:copy(queue, queue[head:])]
				head = 0
			}
			inQ[v] = false
			// Discharge v: push along admissible arcs, relabel when none.
			for e.excess[v] > 0 {
				adj := e.adj[v]
				pv := e.pot[v]
				i := e.cur[v]
				for ; int(i) < len(adj); i++ {
					a := adj[i]
					if e.res[a] <= 0 {
						continue
					}
					w := e.head[a]
					if e.cost[a]*scale+pv-e.pot[w] >= 0 {
						continue
					}
					d := min(e.excess[v], e.res[a])
					e.res[a] -= d
					e.res[a^1] += d
					e.excess[v] -= d
					e.excess[w] += d
					if e.excess[w] > 0 && !inQ[w] {
						inQ[w] = true
						queue = append(queue, w)
					}
					if e.excess[v] == 0 {
						break
					}
				}
				e.cur[v] = i
				if e.excess[v] == 0 {
					break
				}
				// Relabel: lower p(v) as far as ε-optimality allows.
				best := int64(-1) << 62
				for _, a := range adj {
					if e.res[a] > 0 {
						best = max(best, e.pot[e.head[a]]-e.cost[a]*scale)
					}
				}
				e.pot[v] = best - eps
				e.cur[v] = 0
			}
		}
	}
}

// exactPotentials replaces the scaled, 1/(n+1)-optimal potentials that cost
// scaling leaves by exact ones: scaled down, they leave reduced costs of at
// least -1 on residual arcs, and a label-correcting shortest-path pass from
// a virtual source repairs those to complementary slackness.
func (e *engine) exactPotentials() {
	n := len(e.pot)
	scale := int64(n + 1)
	for v := range n {
		p := e.pot[v]
		q := p / scale
		if p%scale != 0 && p < 0 {
			q-- // floor
		}
		e.pot[v] = q
	}
	d := e.dist[:n]
	clear(d)
	inQ := e.done[:n]
	queue := make([]int32, 0, n)
	for v := range n {
		queue = append(queue, int32(v))
		inQ[v] = true
	}
	for len(queue) > 0 {
		v := queue[0]
		queue = queue[1:]
		inQ[v] = false
		dv := d[v] + e.pot[v]
		for _, a := range e.adj[v] {
			if e.res[a] <= 0 {
				continue
			}
			w := e.head[a]
			if nd := dv + e.cost[a] - e.pot[w]; nd < d[w] {
				d[w] = nd
				if !inQ[w] {
					inQ[w] = true
					queue = append(queue, w)
				}
			}
		}
		if len(queue) == 0 || cap(queue) > 4*n {
			queue = append(make([]int32, 0, n), queue...)
		}
	}
	for v := range n {
		e.pot[v] += d[v]
		inQ[v] = false
	}
}
