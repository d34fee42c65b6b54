package flow

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestRadixHeapOrder pushes keys never below the last one popped, as
// Dijkstra does, and checks that pops come out in order and that nothing
// is lost or invented.
func TestRadixHeapOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 1))
	var h radixHeap
	for round := range 200 {
		h.reset()
		var want, got []int64
		last := int64(0)
		for range 1 + rng.IntN(300) {
			// Spread keys over small gaps and huge ones, to cross buckets.
			for range rng.IntN(4) {
				d := last + rng.Int64N(1<<uint(rng.IntN(62)))
				h.push(d, int32(len(want)))
				want = append(want, d)
			}
			if h.size > 0 && rng.IntN(3) > 0 {
				if m := h.min(); m < last {
					t.Fatalf("round %d: min %d below last pop %d", round, m, last)
				}
				d, _ := h.pop()
				got = append(got, d)
				last = d
			}
		}
		for h.size > 0 {
			d, _ := h.pop()
			if d < last {
				t.Fatalf("round %d: popped %d after %d", round, d, last)
			}
			got = append(got, d)
			last = d
		}
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Fatalf("round %d: popped %v, pushed %v", round, got, want)
		}
	}
}

// TestWarmEngineInvariants runs warm solves on random networks under random
// changes and checks, after each, the live partition (every arc with room
// in its tail's live prefix, pos in step with the lists) and, on a fresh
// change, that aimAtDeficits leaves no residual arc with a negative
// reduced cost.
func TestWarmEngineInvariants(t *testing.T) {
	rng := rand.New(rand.NewPCG(12, 2))
	warm, aimed := 0, 0
	for inst := range 600 {
		g := randomInternal(rng, 2+rng.IntN(30))
		s := NewSolver(g)
		for round := range 8 {
			if round > 0 {
				changeInternal(rng, g)
				// Odd rounds check aiming on the changed engine, which uses
				// up the change log, so the next round starts cold.
				if round%2 == 1 && s.e != nil && s.applyChanges() {
					s.e.aimAtDeficits()
					checkSlackness(t, s.e, inst, round)
					aimed++
					s.e = nil // applyChanges consumed the log: start over
				}
			}
			if _, err := s.Solve(); err != nil {
				continue
			}
			if !s.stats.Warm {
				continue
			}
			warm++
			checkLive(t, s.e, inst, round)
		}
	}
	if warm == 0 || aimed == 0 {
		t.Fatalf("%d warm solves and %d aims checked", warm, aimed)
	}
	t.Logf("%d warm solves and %d aims checked", warm, aimed)
}

// changeInternal changes g as a scheduler's next round might: supply moved
// between nodes, a new node with supply and arcs, a bound or a cost.
func changeInternal(rng *rand.Rand, g *Network) {
	n := g.NumNodes()
	switch rng.IntN(4) {
	case 0:
		u, v, d := rng.IntN(n), rng.IntN(n), int64(rng.IntN(5))
		g.SetSupply(u, g.Supply(u)+d)
		g.SetSupply(v, g.Supply(v)-d)
	case 1:
		w := g.AddNode()
		u := rng.IntN(w)
		g.SetSupply(w, 2)
		g.SetSupply(u, g.Supply(u)-2)
		g.AddArc(w, rng.IntN(w), 0, 3, int64(rng.IntN(40))-5)
		g.AddArc(rng.IntN(w), w, 0, 3, int64(rng.IntN(40))-5)
	case 2:
		if g.NumArcs() > 0 {
			g.SetArcBounds(rng.IntN(g.NumArcs()), 0, int64(rng.IntN(15)))
		}
	case 3:
		if g.NumArcs() > 0 {
			g.SetArcCost(rng.IntN(g.NumArcs()), int64(rng.IntN(70))-20)
		}
	}
}

func checkLive(t *testing.T, e *engine, inst, round int) {
	t.Helper()
	if !e.partitioned {
		t.Fatalf("instance %d round %d: warm engine not partitioned", inst, round)
	}
	for v, adj := range e.adj {
		for i, a := range adj {
			if int(e.pos[a]) != i {
				t.Fatalf("instance %d round %d: node %d arc %d at %d, pos says %d", inst, round, v, a, i, e.pos[a])
			}
			if i >= int(e.nlive[v]) && e.res[a] > 0 {
				t.Fatalf("instance %d round %d: node %d arc %d has room %d behind the live mark", inst, round, v, a, e.res[a])
			}
		}
	}
}

func checkSlackness(t *testing.T, e *engine, inst, round int) {
	t.Helper()
	for v, adj := range e.adj {
		for _, a := range adj {
			if rc := e.cost[a] + e.pot[v] - e.pot[e.head[a]]; e.res[a] > 0 && rc < 0 {
				t.Fatalf("instance %d round %d: arc %d from %d has room %d and reduced cost %d after aiming", inst, round, a, v, e.res[a], rc)
			}
		}
	}
}
