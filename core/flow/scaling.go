package flow

import (
	"fmt"
	"math/bits"
)

// scalingAlpha is the factor by which cost scaling divides ε each round,
// chosen by measurement on Quincy-shaped graphs (4, 6, 8, 16, 32 tried).
const scalingAlpha = 8

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
// ε-optimality by push-relabel (FIFO order, current-arc pointers). The
// engine's potentials are then left scaled; exactPotentials fixes them.
func (e *engine) costScaling(maxAbs int64) {
	clear(e.pot)
	e.refineFrom(max(1, maxAbs*int64(len(e.pot)+1)) * scalingAlpha)
}

// refineFrom runs the scaling rounds from ε = eps/scalingAlpha down to 1
// on potentials already scaled by n+1.
func (e *engine) refineFrom(eps int64) {
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
