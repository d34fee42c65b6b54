package flow

// scaled is the residual network laid out for cost scaling: the residual
// arcs leaving node v are positions first[v] to first[v+1]-1 of flat
// arrays, with costs already multiplied by n+1 and rev giving each arc's
// partner. The engine's layout (adjacency lists of arc ids, arcs 2i and
// 2i+1 paired) suits warm solves, which add arcs; but a scan of a node's
// arcs there reads res, head and cost at scattered ids. On Quincy graphs
// the aggregator X has ~110,000 arcs, nearly all without room, and
// reading them there was most of a cold solve's time (pprof: the res test
// in the push loop alone about a third); here they are contiguous.
type scaled struct {
	first  []int32 // node -> its first arc; first[n] = number of arcs
	head   []int32 // arc -> node it enters
	cost   []int64 // arc -> cost × (n+1)
	res    []int64 // arc -> residual capacity
	rev    []int32 // arc -> its reverse arc
	pot    []int64 // the engine's potentials (shared, scaled)
	excess []int64 // the engine's excesses (shared)
	cur    []int32 // node -> current arc

	// updateAfter is the number of relabels between global updates
	// (tests lower it to exercise them on small graphs).
	updateAfter int

	// Global update scratch (priceupdate.go).
	rank       []int32 // node -> rank (ε steps to the nearest deficit)
	done       []bool  // node -> its rank is final
	next, prev []int32 // node -> neighbours in its rank's bucket list
	bhead      []int32 // rank -> first node of its bucket, or -1
}

// newScaled copies e's residual network into tail-sorted order, keeping
// each node's arcs in its adjacency order.
func newScaled(e *engine) *scaled {
	n, m := len(e.pot), len(e.res)
	scale := int64(n + 1)
	s := &scaled{
		first:  make([]int32, n+1),
		head:   make([]int32, m),
		cost:   make([]int64, m),
		res:    make([]int64, m),
		rev:    make([]int32, m),
		pot:    e.pot,
		excess: e.excess,
		cur:    make([]int32, n),
		rank:   make([]int32, n),
		done:   make([]bool, n),
		next:   make([]int32, n),
		prev:   make([]int32, n),
	}
	posOf := make([]int32, m) // engine arc id -> position
	p := int32(0)
	for v, adj := range e.adj {
		s.first[v] = p
		for _, a := range adj {
			posOf[a] = p
			s.head[p] = e.head[a]
			s.cost[p] = e.cost[a] * scale
			s.res[p] = e.res[a]
			p++
		}
	}
	s.first[n] = p
	for _, adj := range e.adj {
		for _, a := range adj {
			s.rev[posOf[a]] = posOf[a^1]
		}
	}
	return s
}

// store copies the residual capacities back into the engine, whose
// adjacency lists give each position's arc id in order.
func (s *scaled) store(e *engine) {
	p := 0
	for _, adj := range e.adj {
		for _, a := range adj {
			e.res[a] = s.res[p]
			p++
		}
	}
}
