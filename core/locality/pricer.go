package locality

import (
	"cmp"
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Pricer prices locality period after period. For every snapshot it
// returns Compute's optimal cost and prices (how a tie splits the queued
// work between staying, moving in the rack and crossing the core may
// differ), but it solves the network with a method specialised to its
// shape, and it keeps each rack's part of the solution from one period to
// the next, working out again only the racks whose node monitors'
// reports changed.
//
// The shape: a queued task of node m ends on some node m' with slots, for
// free if m' = m, for a = min(ψ, ξ)·input elsewhere in m's rack (D → R →
// C, or D → X → R → C where crossing the core is the cheaper route) and
// for b = ξ·input in another rack; and m' charges its waves, a convex
// piecewise-linear function of the number of tasks it ends with. The
// optimum is thus a separable convex allocation over a two-level tree,
// which a greedy solves exactly:
//
//   - Node m's cost as a function of the net number δ ≥ -queued(m) of tasks
//     its rack gives it is its waves' cost of queued(m) + δ tasks plus a
//     for each of its own it gives up; its slopes, unit by unit, do not
//     decrease.
//   - A rack's cost as a function of the net number t ≥ -queued(rack) of
//     tasks it takes from the rest of the fleet is the merge of its nodes'
//     slopes, started where the rack gives all its work up, less b − a on
//     each of the first queued(rack) units (each is a task the rack no
//     longer sends across the core). Its slopes do not decrease either.
//   - The fleet starts with every queued task crossing the core (b each)
//     and takes the cheapest units of all racks' slopes, as many as there
//     are queued tasks; each rack takes a prefix of its slopes, and each
//     node the prefix of its own that falls in its rack's.
//
// Price turns the units taken into an optimal flow of Build's network and
// reads the prices off it as Graph.Solve does: the price of a node of the
// network is the length of a shortest path from it to the sink in the
// flow's residual network. That network has negative arcs (the reverse of
// a move) and no negative cycle, so a Bellman-Ford sweep over its node
// kinds finds the lengths; it settles in a few rounds because a shortest
// path there visits at most two racks.
//
// Not safe for concurrent use: one goroutine (the coordinator's locality
// loop) owns a Pricer.
type Pricer struct {
	params    Params
	psi, xi   int64 // ψ·input and ξ·input, the D → R and D → X costs
	a, spread int64 // a move within a rack costs a, across the core a + spread
	racks     map[string]*rackFn
	period    uint64
	stats     PricerStats

	// This period's racks in name order, and per snapshot position (name
	// order) the load's rack and its place in the optimal flow.
	active []*rackFn
	rackOf []int32
	local  []int64 // D → C: own tasks that stay
	down   []int64 // R → C: tasks the node takes from its rack
	inRack []int64 // D → R
	core   []int64 // D → X
	next   []int64 // the cost of the next task on the node (its first wave with room)
	distC  []int64 // shortest path lengths to the sink from C, D, R and X
	distD  []int64
	distR  []int64
	distX  int64
	taken  []int64 // scratch: units taken per member of a rack
	wv     []wave  // scratch: one load's waves
}

// PricerStats describe the last Price.
type PricerStats struct {
	// Racks is how many racks the snapshot had; Rebuilt how many of them
	// had their cost function brought up to date because a node monitor
	// in them changed, joined or left (all of them in a Pricer's first
	// period); Changed how many node monitors' slopes were replaced in
	// racks whose members stayed the same.
	Racks, Rebuilt, Changed int
	// Rounds is how many Bellman-Ford rounds the prices took to settle.
	Rounds int
}

// rackFn is one rack's part of the solution: the node monitors' inputs its
// cost function was built from and the function.
type rackFn struct {
	name string
	// in are the inputs of segs; staged collects this period's, swapped
	// in when they differ.
	in, staged rackInputs
	seen       uint64 // the last period the rack was in
	// base are the members' unit slopes as runs merged in non-decreasing
	// order (nil until first built); queued is the rack's queued tasks;
	// segs are its cost function's unit slopes, base with spread taken off
	// the first queued units, and cum[k] the units in segs[:k+1].
	base   []seg
	queued int64
	segs   []seg
	cum    []int64
	// Scratch for update.
	changed              []bool
	fresh, spare, spare2 []seg
	// This period: the members' snapshot positions (name order), the units
	// taken and the flow X → R.
	loads []int32
	take  int64
	fromX int64
}

// rackInputs are what a rack's cost function depends on: per member in
// name order, its name, queued tasks and waves (wv[off[j]:off[j+1]]; none
// without slots).
type rackInputs struct {
	names  []string
	queued []int64
	off    []int32
	wv     []wave
}

func (ri *rackInputs) reset() {
	ri.names, ri.queued, ri.off, ri.wv = ri.names[:0], ri.queued[:0], append(ri.off[:0], 0), ri.wv[:0]
}

func (ri *rackInputs) add(name string, queued int64, ws []wave) {
	ri.names = append(ri.names, name)
	ri.queued = append(ri.queued, queued)
	ri.wv = append(ri.wv, ws...)
	ri.off = append(ri.off, int32(len(ri.wv)))
}

func (ri *rackInputs) waves(j int) []wave { return ri.wv[ri.off[j]:ri.off[j+1]] }

func (ri *rackInputs) equal(o *rackInputs) bool {
	return slices.Equal(ri.names, o.names) && slices.Equal(ri.queued, o.queued) &&
		slices.Equal(ri.off, o.off) && slices.Equal(ri.wv, o.wv)
}

// seg is a run of n units of a rack's cost function at one slope, all of
// one member: recv, tasks more than its own queued ones; otherwise its own
// queued tasks that stay.
type seg struct {
	slope  int64
	n      int64
	member int32
	recv   bool
}

// cmpSeg orders runs by slope; at equal slopes a node keeps its own work
// before it takes other nodes' (so a tie favours locality, and each
// node's units come in its own order), then by member.
func cmpSeg(x, y seg) int {
	if c := cmp.Compare(x.slope, y.slope); c != 0 {
		return c
	}
	if x.recv != y.recv {
		if x.recv {
			return 1
		}
		return -1
	}
	return cmp.Compare(x.member, y.member)
}

// unbounded stands for the uncapacitated last wave's units: more than the
// fleet can queue, so no selection runs out of them.
const unbounded = maxQueued + 1

// NewPricer returns a Pricer with no racks yet.
func NewPricer(p Params) (*Pricer, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	psi, xi := p.RackCost(), p.CoreCost()
	a := min(psi, xi)
	return &Pricer{params: p, psi: psi, xi: xi, a: a, spread: xi - a, racks: map[string]*rackFn{}}, nil
}

// Stats describes the last Price.
func (pr *Pricer) Stats() PricerStats { return pr.stats }

// Price is one period: it brings the racks' cost functions up to date with
// the snapshot, chooses the optimal allocation, and reads the prices off
// the optimal flow. It returns what Compute returns on the same snapshot
// (see Pricer) and the same errors for a bad snapshot, after which the
// Pricer is as it was.
func (pr *Pricer) Price(nodes []NodeLoad) (Outcome, error) {
	sn, err := takeSnapshot(nodes, pr.params)
	if err != nil {
		return Outcome{}, err
	}
	pr.period++
	pr.stats = PricerStats{}
	pr.gather(&sn)
	pr.choose(sn.queued)
	out := pr.place(&sn)
	rounds, err := pr.settle(&sn)
	pr.stats.Rounds = rounds
	if err != nil {
		return Outcome{}, err
	}
	pr.read(&sn, &out)
	return out, nil
}

// gather sorts the snapshot's loads into their racks, rebuilds the cost
// function of every rack whose inputs changed, and forgets racks that are
// gone.
func (pr *Pricer) gather(sn *snapshot) {
	pr.active = pr.active[:0]
	pr.rackOf = resize(pr.rackOf, len(sn.loads))
	for i, l := range sn.loads {
		r := pr.racks[l.Rack]
		if r == nil {
			r = &rackFn{name: l.Rack}
			pr.racks[l.Rack] = r
		}
		if r.seen != pr.period {
			r.seen = pr.period
			r.staged.reset()
			r.loads = r.loads[:0]
			pr.active = append(pr.active, r)
		}
		pr.wv = sn.appendWaves(pr.wv[:0], i)
		r.staged.add(l.Name, int64(l.Queued), pr.wv)
		r.loads = append(r.loads, int32(i))
	}
	for name, r := range pr.racks {
		if r.seen != pr.period {
			delete(pr.racks, name)
		}
	}
	slices.SortFunc(pr.active, func(x, y *rackFn) int { return strings.Compare(x.name, y.name) })
	for k, r := range pr.active {
		for _, i := range r.loads {
			pr.rackOf[i] = int32(k)
		}
		if r.base == nil || !r.in.equal(&r.staged) {
			pr.stats.Changed += r.update(pr.a, pr.spread)
			pr.stats.Rebuilt++
		}
	}
	pr.stats.Racks = len(pr.active)
}

// update brings the rack's cost function up to date with its staged
// inputs. When the same node monitors are in the rack, only the runs of
// those whose queue or waves changed are taken out of the merged slopes
// and their new runs merged in; otherwise the slopes are merged anew.
// It returns how many members' slopes it replaced, or len(members) when
// it merged them anew.
func (r *rackFn) update(a, spread int64) int {
	r.in, r.staged = r.staged, r.in // staged now holds the previous inputs
	changed := len(r.in.names)
	if r.base != nil && slices.Equal(r.in.names, r.staged.names) {
		r.changed = resize(r.changed, len(r.in.names))
		changed = 0
		fresh := r.fresh[:0]
		for j := range r.in.names {
			r.changed[j] = r.in.queued[j] != r.staged.queued[j] || !slices.Equal(r.in.waves(j), r.staged.waves(j))
			if r.changed[j] {
				fresh = r.appendRuns(fresh, j, a)
				changed++
			}
		}
		slices.SortFunc(fresh, cmpSeg)
		kept := r.spare[:0]
		for _, s := range r.base {
			if !r.changed[s.member] {
				kept = append(kept, s)
			}
		}
		merged := mergeRuns(r.spare2[:0], kept, fresh)
		r.base, r.spare, r.spare2, r.fresh = merged, kept, r.base, fresh
	} else {
		all := r.spare[:0]
		for j := range r.in.names {
			all = r.appendRuns(all, j, a)
		}
		slices.SortFunc(all, cmpSeg)
		r.base, r.spare = all, r.base
	}
	r.adjust(spread)
	return changed
}

// appendRuns appends member j's runs of slopes to out, in its own order
// (which is non-decreasing): its queued tasks that stay, at its waves'
// costs less a, then the tasks it could take, at its waves' costs.
func (r *rackFn) appendRuns(out []seg, j int, a int64) []seg {
	q := r.in.queued[j]
	var pos int64 // tasks on the node before the wave's
	for _, w := range r.in.waves(j) {
		n := w.cap
		if w.last {
			n = unbounded
		}
		if pos < q {
			k := min(n, q-pos)
			out = append(out, seg{slope: w.cost - a, n: k, member: int32(j)})
			pos, n = pos+k, n-k
		}
		if w.last {
			n = unbounded
		}
		if n > 0 {
			out = append(out, seg{slope: w.cost, n: n, member: int32(j), recv: true})
			pos += n
		}
	}
	return out
}

// mergeRuns appends the merge of two sorted lists of runs to out.
func mergeRuns(out, x, y []seg) []seg {
	for len(x) > 0 && len(y) > 0 {
		if cmpSeg(y[0], x[0]) < 0 {
			out, y = append(out, y[0]), y[1:]
		} else {
			out, x = append(out, x[0]), x[1:]
		}
	}
	return append(append(out, x...), y...)
}

// adjust derives the rack's cost function from the merged slopes: spread
// off the first queued units (splitting the run that straddles them), and
// the running unit counts.
func (r *rackFn) adjust(spread int64) {
	r.queued = 0
	for _, q := range r.in.queued {
		r.queued += q
	}
	r.segs = r.segs[:0]
	left := r.queued
	for _, s := range r.base {
		if left > 0 && spread > 0 {
			if s.n > left {
				head := s
				head.n, head.slope = left, s.slope-spread
				r.segs = append(r.segs, head)
				s.n -= left
				left = 0
			} else {
				left -= s.n
				s.slope -= spread
			}
		}
		r.segs = append(r.segs, s)
	}
	r.cum = r.cum[:0]
	var sum int64
	for _, s := range r.segs {
		sum += s.n
		r.cum = append(r.cum, sum)
	}
	if r.base == nil {
		r.base = []seg{} // built, with no units: a rack without slots
	}
}

// upTo counts the rack's units whose slope is at most v.
func (r *rackFn) upTo(v int64) int64 {
	k := sort.Search(len(r.segs), func(k int) bool { return r.segs[k].slope > v })
	if k == 0 {
		return 0
	}
	return r.cum[k-1]
}

// choose takes the queued cheapest units of all racks' slopes: every unit
// below the level of the last one taken, and of the units at that level
// as many as are missing, rack by rack in name order.
func (pr *Pricer) choose(queued int64) {
	for _, r := range pr.active {
		r.take = 0
	}
	if queued == 0 {
		return
	}
	total := func(v int64) int64 {
		var n int64
		for _, r := range pr.active {
			n += r.upTo(v)
		}
		return n
	}
	// Slopes lie in [-b, maxCost] (a wave costs 0 to maxCost), and the
	// last waves' units at or below maxCost outnumber the queued work.
	lo, hi := -(pr.a + pr.spread), int64(maxCost)
	for lo < hi {
		mid := lo + (hi-lo)/2
		if total(mid) >= queued {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	left := queued
	for _, r := range pr.active {
		r.take = r.upTo(lo - 1)
		left -= r.take
	}
	for _, r := range pr.active {
		if left == 0 {
			break
		}
		extra := min(r.upTo(lo)-r.take, left)
		r.take += extra
		left -= extra
	}
}

// place turns the units taken into an optimal flow of Build's network:
// per load, its own tasks that stay, those it gives up and those it takes
// (a node never does both); per rack, moves within it (through R, or
// through X when that is cheaper) and tasks it sends across the core or
// takes from it. It returns the Outcome with the flow's cost and counts.
func (pr *Pricer) place(sn *snapshot) Outcome {
	n := len(sn.loads)
	pr.local, pr.down = resize(pr.local, n), resize(pr.down, n)
	pr.inRack, pr.core = resize(pr.inRack, n), resize(pr.core, n)
	pr.next = resize(pr.next, n)
	out := Outcome{Nodes: 2 + len(pr.active), Arcs: len(pr.active)}
	for _, r := range pr.active {
		pr.taken = resize(pr.taken, len(r.loads))
		clear(pr.taken)
		left := r.take
		for _, s := range r.segs {
			if left == 0 {
				break
			}
			k := min(s.n, left)
			pr.taken[s.member] += k
			left -= k
		}
		var up, down int64
		for j, i := range r.loads {
			q, t := r.in.queued[j], pr.taken[j]
			pr.local[i] = min(t, q)
			pr.down[i] = t - pr.local[i]
			pr.core[i] = q - pr.local[i] // given up; split below
			up += pr.core[i]
			down += pr.down[i]
		}
		moves := min(up, down) // within the rack; the rest crosses the core
		r.fromX = down - moves
		if pr.psi > pr.xi {
			r.fromX += moves // a move within the rack goes through X
		}
		for _, i := range r.loads {
			pr.inRack[i] = 0
			if pr.psi <= pr.xi {
				pr.inRack[i] = min(pr.core[i], moves)
				pr.core[i] -= pr.inRack[i]
				moves -= pr.inRack[i]
			}
		}
		for j, i := range r.loads {
			ws := r.in.waves(j)
			load := pr.local[i] + pr.down[i]
			var pos int64
			for _, w := range ws {
				k := load - pos
				if !w.last {
					k = min(k, w.cap)
				}
				out.Cost += k * w.cost
				pos += k
				if k < w.cap || w.last {
					pr.next[i] = w.cost
					break
				}
			}
			out.Cost += pr.inRack[i]*pr.psi + pr.core[i]*pr.xi
			out.Local += pr.local[i]
			out.Rack += pr.inRack[i]
			out.Core += pr.core[i]
			l := sn.loads[i]
			if l.Slots > 0 {
				out.Nodes++
				out.Arcs += 1 + len(ws) // R → C and the waves
			}
			if l.Queued > 0 {
				out.Nodes++
				out.Arcs += 2 // D → R, D → X
				if l.Slots > 0 {
					out.Arcs++ // D → C
				}
			}
		}
	}
	return out
}

// settle finds, for every node of the network, the length of a shortest
// path to the sink in the residual network of place's flow (unreached
// where there is none), by Bellman-Ford rounds over the node kinds. Its
// residual arcs: C → S at the cost of the node's first wave with room;
// R → C, X → R, D → C, D → R (ψ) and D → X (ξ) always (uncapacitated);
// and the reverse of every arc with flow: C → R, R → X, C → D, R → D (−ψ)
// and X → D (−ξ). An optimal flow leaves no negative cycle, so the rounds
// end; they are bounded all the same, and running past the bound is an
// error.
func (pr *Pricer) settle(sn *snapshot) (int, error) {
	n := len(sn.loads)
	pr.distC, pr.distD = resize(pr.distC, n), resize(pr.distD, n)
	pr.distR = resize(pr.distR, len(pr.active))
	for _, d := range [][]int64{pr.distC, pr.distD, pr.distR} {
		for k := range d {
			d[k] = unreached
		}
	}
	distX := int64(unreached)
	lower := func(d *int64, v int64) bool {
		if v < *d {
			*d = v
			return true
		}
		return false
	}
	bound := 2*(n+len(pr.active)) + 4
	for round := 1; ; round++ {
		if round > bound {
			return round, fmt.Errorf("locality: prices did not settle in %d rounds", bound)
		}
		changed := false
		for i, l := range sn.loads {
			r := pr.rackOf[i]
			if l.Slots > 0 {
				v := pr.next[i]
				if pr.down[i] > 0 {
					v = min(v, pr.distR[r])
				}
				if pr.local[i] > 0 {
					v = min(v, pr.distD[i])
				}
				changed = lower(&pr.distC[i], v) || changed
			}
			if l.Queued > 0 {
				v := min(plus(pr.distR[r], pr.psi), plus(distX, pr.xi))
				if l.Slots > 0 {
					v = min(v, pr.distC[i])
				}
				changed = lower(&pr.distD[i], v) || changed
			}
		}
		for i, l := range sn.loads {
			r := pr.rackOf[i]
			if l.Slots > 0 {
				changed = lower(&pr.distR[r], pr.distC[i]) || changed
			}
			if pr.inRack[i] > 0 {
				changed = lower(&pr.distR[r], plus(pr.distD[i], -pr.psi)) || changed
			}
			if pr.core[i] > 0 {
				changed = lower(&distX, plus(pr.distD[i], -pr.xi)) || changed
			}
		}
		for k, r := range pr.active {
			if r.fromX > 0 {
				changed = lower(&pr.distR[k], distX) || changed
			}
			changed = lower(&distX, pr.distR[k]) || changed
		}
		if !changed {
			pr.distX = distX
			return round, nil
		}
	}
}

// plus adds c to a path length, leaving unreached as it is.
func plus(d, c int64) int64 {
	if d == unreached {
		return unreached
	}
	return d + c
}

// read fills out's prices from settle's path lengths.
func (pr *Pricer) read(sn *snapshot, out *Outcome) {
	out.Prices = Prices{Node: make(map[string]int64, len(sn.loads)), Rack: make(map[string]int64, len(pr.active)),
		RackPerGB: pr.params.RackPerGB, CorePerGB: pr.params.CorePerGB}
	for i, l := range sn.loads {
		if l.Slots > 0 && pr.distC[i] != unreached {
			out.Prices.Node[l.Name] = pr.distC[i]
		}
	}
	for k, r := range pr.active {
		if pr.distR[k] != unreached {
			out.Prices.Rack[r.name] = pr.distR[k]
		}
	}
	if pr.distX != unreached {
		out.Prices.Cluster = pr.distX
	}
}

// resize returns s with length n, reusing its array when it is long
// enough.
func resize[T any](s []T, n int) []T {
	if cap(s) >= n {
		return s[:n]
	}
	return make([]T, n)
}
