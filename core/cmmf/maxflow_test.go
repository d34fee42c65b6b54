package cmmf

import (
	"math"
	"math/rand/v2"
	"testing"
)

// bruteMinCut is the minimum s-t cut of a small graph, by enumerating every
// set of nodes on the source side (nodes 0 = s and 1 = t).
func bruteMinCut[C capacity](n int, arcs []arcSpec[C]) C {
	best := C(-1)
	for set := 0; set < 1<<(n-2); set++ {
		side := func(v int32) bool { return v == 0 || (v >= 2 && set&(1<<(v-2)) != 0) }
		var cut C
		for _, a := range arcs {
			if side(a.from) && !side(a.to) {
				cut += a.cap
			}
		}
		if best < 0 || cut < best {
			best = cut
		}
	}
	return best
}

func randomArcs[C capacity](rng *rand.Rand, n int, capOf func() C) []arcSpec[C] {
	var arcs []arcSpec[C]
	for range rng.IntN(3 * n) {
		u, v := int32(rng.IntN(n)), int32(rng.IntN(n))
		if u == v || u == 1 || v == 0 {
			continue
		}
		arcs = append(arcs, arcSpec[C]{from: u, to: v, cap: capOf()})
	}
	return arcs
}

// TestMaxFlowMinCut checks Dinic against brute-force minimum cuts (max-flow
// min-cut theorem) on random graphs, with int64 and float64 capacities,
// from zero and from a flow already half-way.
func TestMaxFlowMinCut(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	for c := range 300 {
		n := 2 + rng.IntN(7)
		ia := randomArcs(rng, n, func() int64 { return int64(rng.IntN(10)) })
		var gi network[int64]
		gi.build(n, ia, nil)
		if got, want := gi.maxFlow(0, 1), bruteMinCut(n, ia); got != want {
			t.Fatalf("case %d int64: max flow %d, min cut %d", c, got, want)
		}
		// A maximum flow has nothing left to add.
		if more := gi.maxFlow(0, 1); more != 0 {
			t.Fatalf("case %d: second run added %d", c, more)
		}

		fa := randomArcs(rng, n, func() float64 { return 10 * rng.Float64() })
		for k := range fa {
			fa[k].tol = 1e-12 * math.Max(1, fa[k].cap)
		}
		var gf network[float64]
		idx := gf.build(n, fa, nil)
		got, want := gf.maxFlow(0, 1), bruteMinCut(n, fa)
		if math.Abs(got-want) > 1e-9 {
			t.Fatalf("case %d float64: max flow %v, min cut %v", c, got, want)
		}
		checkNetFlow(t, &gf, n, fa, idx, got)

		// Warm start: rebuild carrying half of each arc's flow (still a
		// valid flow), and finish from there.
		for k := range fa {
			fa[k].flow = gf.flow(idx[k]) / 2
		}
		var gw network[float64]
		idx = gw.build(n, fa, nil)
		var start float64 // no arc enters the source
		for _, a := range fa {
			if a.from == 0 {
				start += a.flow
			}
		}
		if warm := start + gw.maxFlow(0, 1); math.Abs(warm-want) > 1e-9 {
			t.Fatalf("case %d: warm start reaches %v, min cut %v", c, warm, want)
		}
	}
}

// checkFlow checks that the flow on every arc is within its capacity, is
// conserved at every inner node, and leaves the source as total.
func checkNetFlow(t *testing.T, g *network[float64], n int, arcs []arcSpec[float64], idx []int32, total float64) {
	t.Helper()
	net := make([]float64, n)
	for k, a := range arcs {
		f := g.flow(idx[k])
		if f < -1e-9 || f > a.cap+1e-9 {
			t.Fatalf("arc %d→%d: flow %v, capacity %v", a.from, a.to, f, a.cap)
		}
		net[a.from] -= f
		net[a.to] += f
	}
	for v := 2; v < n; v++ {
		if math.Abs(net[v]) > 1e-9 {
			t.Fatalf("node %d: flow in minus out %v", v, net[v])
		}
	}
	if math.Abs(-net[0]-total) > 1e-9 {
		t.Fatalf("source sends %v, max flow %v", -net[0], total)
	}
}

// TestMaxFlowCuts checks reachable and reaching after a maximum flow: the
// source side carries no residual arc to the sink side, and the nodes that
// reach the sink are exactly those not cut off from it.
func TestMaxFlowCuts(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for range 200 {
		n := 2 + rng.IntN(7)
		arcs := randomArcs(rng, n, func() int64 { return int64(rng.IntN(5)) })
		var g network[int64]
		g.build(n, arcs, nil)
		flow := g.maxFlow(0, 1)
		src := g.reachable(0, nil)
		if src[1] {
			t.Fatal("sink reachable after a maximum flow")
		}
		var cut int64
		for _, a := range arcs {
			if src[a.from] && !src[a.to] {
				cut += a.cap
			}
		}
		if cut != flow {
			t.Fatalf("source side cut %d, flow %d", cut, flow)
		}
		to := g.reaching(1, nil)
		if to[0] {
			t.Fatal("source reaches the sink after a maximum flow")
		}
		var cut2 int64
		for _, a := range arcs {
			if !to[a.from] && to[a.to] {
				cut2 += a.cap
			}
		}
		if cut2 != flow {
			t.Fatalf("sink side cut %d, flow %d", cut2, flow)
		}
	}
}
