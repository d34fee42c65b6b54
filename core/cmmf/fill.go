package cmmf

import (
	"cmp"
	"math"
	"slices"
)

// Solve returns the divisible weighted CMMF allocation of p, or p's first
// validation error.
func Solve(p *Problem) (*Allocation, error) {
	in, err := compile(p)
	if err != nil {
		return nil, err
	}
	f := newFiller(in)
	f.run()
	return f.allocation(), nil
}

// Node numbering of the solvers' networks: source, sink, then groups, then
// types.
const (
	source int32 = 0
	sink   int32 = 1
)

// filler runs progressive filling (§5) over an instance.
//
// Each round raises the level λ of every active user together: user i asks
// for min(demand_i, weight_i·λ), frozen users keep their totals. The round's
// level is the largest λ at which the network source → group (capacity:
// its members' asks) → type (∞) → sink (the type's slots) carries every
// ask. Newton's method finds it from above without bisection: start from
// the level at which all live slots would be used; while the flow falls
// short, the minimum cut names a set of groups whose asks exceed the slots
// they can reach, and the next λ is the level at which exactly that cut is
// tight (solveLevel). Each step lowers λ and the cuts are nested, so this
// ends after at most as many steps as nodes, and in practice after a few:
// at the §7.4 scale, 15 max flows for 8 rounds.
//
// At the round's level, a group from which the sink cannot be reached in
// the residual network cannot grow without taking slots from someone at or
// below its level: its active users are saturated and freeze. Users whose
// demand is met freeze too. A saturated group uses only types that are
// full and used only by saturated groups, so both leave the network for
// good and later rounds are smaller.
type filler struct {
	in      *instance
	active  []bool
	nActive int
	value   []float64 // frozen users' totals
	order   []int32   // users by demand/weight, ascending
	level   float64   // the last round's level
	rounds  []Round

	gFixed  []float64 // per group: sum of frozen members' totals
	gLive   []bool
	tLive   []bool
	flowOff []int32   // group g's flow to its k-th type is flows[flowOff[g]+k]
	flows   []float64 // carried between rounds; final once the group retires

	// The current round's network.
	net      network[float64]
	specs    []arcSpec[float64]
	arcIdx   []int32
	flowSlot []int32 // per group→type spec: its index in flows
	netG     []int32 // groups in the network (some may have retired): p is node 2+p
	netT     []int32 // types in the network: q is node typeBase+q
	gNode    []int32 // group → node, for groups in the network
	typeBase int32
	srcBase  int // spec index of netG[0]'s source arc
	sinkBase int // spec index of netT[0]'s sink arc
	nGT      int // number of group→type specs (they come first)
	retired  int // arc ends of retired nodes still in the network
	lastCut  []bool
	tight    []bool // see newton
	tightAll bool
	mark     []bool
	asks     []capped
	suffix   []float64
}

func newFiller(in *instance) *filler {
	n, ng, nt := len(in.weight), len(in.groups), len(in.slots)
	f := &filler{
		in:      in,
		active:  make([]bool, n),
		nActive: n,
		value:   make([]float64, n),
		order:   make([]int32, n),
		gFixed:  make([]float64, ng),
		gLive:   make([]bool, ng),
		tLive:   make([]bool, nt),
		flowOff: make([]int32, ng+1),
		gNode:   make([]int32, ng),
	}
	for i := range f.active {
		f.active[i] = true
		f.order[i] = int32(i)
	}
	slices.SortStableFunc(f.order, func(a, b int32) int {
		return cmp.Compare(in.demand[a]/in.weight[a], in.demand[b]/in.weight[b])
	})
	for g := range in.groups {
		f.gLive[g] = true
		f.flowOff[g+1] = f.flowOff[g] + int32(len(in.groups[g].types))
	}
	for t := range f.tLive {
		f.tLive[t] = true
	}
	f.flows = make([]float64, f.flowOff[ng])
	f.specs = make([]arcSpec[float64], 0, len(f.flows)+ng+nt)
	f.flowSlot = make([]int32, 0, len(f.flows))
	return f
}

// run performs rounds until every user is frozen. Every round freezes at
// least one user, so there are at most as many rounds as users (in
// practice about as many as distinct levels, which is at most the number of
// types plus the number of distinct demands).
//
// Retired groups and types stay in the network, as dead ends that no
// augmenting path can use, until they account for a quarter of its arcs;
// only then is it rebuilt without them, since a rebuild costs about as much
// as a max flow.
func (f *filler) run() {
	f.rebuild()
	for f.nActive > 0 {
		if 4*f.retired > len(f.net.to) {
			f.rebuild()
		}
		f.level = f.newton()
		f.freeze(f.level)
	}
}

// rebuild makes the network of live groups and live types, carrying their
// flows over from the last round. Flows into types that retired are
// dropped: they are within tolerance (see freeze).
func (f *filler) rebuild() {
	in := f.in
	f.netG, f.netT = f.netG[:0], f.netT[:0]
	for g, live := range f.gLive {
		if live {
			f.gNode[g] = int32(2 + len(f.netG))
			f.netG = append(f.netG, int32(g))
		}
	}
	f.typeBase = int32(2 + len(f.netG))
	tNode := make([]int32, len(in.slots))
	for t, live := range f.tLive {
		if live {
			tNode[t] = f.typeBase + int32(len(f.netT))
			f.netT = append(f.netT, int32(t))
		}
	}
	load := make([]float64, len(in.slots))
	f.specs, f.flowSlot = f.specs[:0], f.flowSlot[:0]
	inf := math.Inf(1)
	for _, g := range f.netG {
		for k, t := range in.groups[g].types {
			slot := f.flowOff[g] + int32(k)
			if !f.tLive[t] {
				f.flows[slot] = 0
				continue
			}
			x := f.flows[slot]
			load[t] += x
			f.specs = append(f.specs, arcSpec[float64]{from: f.gNode[g], to: tNode[t], cap: inf, flow: x, tol: typeTol(in.slots[t])})
			f.flowSlot = append(f.flowSlot, slot)
		}
	}
	f.nGT = len(f.specs)
	f.srcBase = len(f.specs)
	for _, g := range f.netG {
		var out float64
		for k, t := range in.groups[g].types {
			if f.tLive[t] {
				out += f.flows[f.flowOff[g]+int32(k)]
			}
		}
		f.specs = append(f.specs, arcSpec[float64]{from: source, to: f.gNode[g], cap: out, flow: out})
	}
	f.sinkBase = len(f.specs)
	for _, t := range f.netT {
		f.specs = append(f.specs, arcSpec[float64]{from: tNode[t], to: sink, cap: float64(in.slots[t]), flow: load[t], tol: typeTol(in.slots[t])})
	}
	n := int(f.typeBase) + len(f.netT)
	f.arcIdx = f.net.build(n, f.specs, f.arcIdx)
	f.retired = 0
}

// newton returns the round's level: the largest λ, at least the last
// round's, at which every live group's ask fits, leaving the network
// carrying a maximum flow at that level. It records the cut whose equation
// gave the level (tight, or tightAll for the whole network): that cut is
// full at the level, so its active users are saturated whatever rounding
// residue the residual search of freeze may see.
func (f *filler) newton() float64 {
	// Any set of groups, with the types they may use, bounds the level
	// from above; the whole network is the first Newton iterate.
	lambda := f.levelOf(nil)
	f.tight, f.tightAll = f.tight[:0], lambda >= f.level
	lambda = math.Max(lambda, f.level)
	f.lastCut = f.lastCut[:0]
	maxSteps := len(f.net.level) + 2 // one cut per step, and cuts are nested
	for step := 0; ; step++ {
		f.setAsks(lambda)
		f.net.maxFlow(source, sink)
		short := false
		for p := range f.netG {
			a := f.arcIdx[f.srcBase+p]
			short = short || f.net.res[a] > Tolerance*f.net.flow(a)
		}
		if !short {
			return lambda
		}
		if step >= maxSteps || lambda <= f.level {
			f.tight, f.tightAll = f.tight[:0], false
			return lambda
		}
		f.mark = f.net.reachable(source, f.mark)
		f.lastCut = append(f.lastCut[:0], f.mark...)
		next := f.levelOf(f.mark)
		if !(next < lambda) {
			// In exact arithmetic a violated cut always lowers λ; here the
			// shortfall is rounding, so λ (and its tight cut) stands.
			return lambda
		}
		f.tightAll = false
		f.tight = f.tight[:0]
		if next > f.level {
			f.tight = append(f.tight, f.mark...)
		}
		lambda = math.Max(next, f.level)
	}
}

// levelOf solves the Newton step for the cut whose source side is marked
// (nil: the whole network): the level at which its groups' asks equal the
// slots of its types less its frozen users' totals.
func (f *filler) levelOf(mark []bool) float64 {
	in := f.in
	var room float64
	for q, t := range f.netT {
		if mark == nil || mark[f.typeBase+int32(q)] {
			room += float64(in.slots[t])
		}
	}
	for p, g := range f.netG {
		if mark == nil || mark[2+p] {
			room -= f.gFixed[g]
		}
	}
	f.asks = f.asks[:0]
	for _, i := range f.order {
		g := in.group[i]
		if f.active[i] && f.gLive[g] && (mark == nil || mark[f.gNode[g]]) {
			f.asks = append(f.asks, capped{demand: in.demand[i], weight: in.weight[i]})
		}
	}
	var lambda float64
	lambda, f.suffix = solveLevel(f.asks, room, f.suffix)
	return lambda
}

// setAsks sets each live group's source capacity to its members' asks at
// level lambda. Where a group already carries more, the excess is pulled
// back along its arcs (a bipartite flow decomposes trivially: each arc's
// flow goes straight on to the sink), so the network keeps a valid flow to
// resume from.
func (f *filler) setAsks(lambda float64) {
	in := f.in
	g0 := &f.net
	for p, g := range f.netG {
		ask := f.gFixed[g]
		for _, i := range in.groups[g].members {
			if f.active[i] {
				ask += min(in.demand[i], in.weight[i]*lambda)
			}
		}
		a := f.arcIdx[f.srcBase+p]
		if excess := g0.flow(a) - ask; excess > 0 {
			f.pullBack(f.gNode[g], excess)
			g0.res[g0.rev[a]] = ask
		}
		g0.res[a] = ask - g0.flow(a)
	}
}

// pullBack removes up to excess units of the flow leaving group node u.
func (f *filler) pullBack(u int32, excess float64) {
	g := &f.net
	for e := g.start[u]; e < g.start[u+1] && excess > 0; e++ {
		v := g.to[e]
		if v < f.typeBase {
			continue // the reverse of u's source arc
		}
		d := min(g.flow(e), excess)
		if d <= 0 {
			continue
		}
		g.move(e, -d)
		g.move(f.arcIdx[f.sinkBase+int(v-f.typeBase)], -d)
		excess -= d
	}
}

// freeze ends a round at level lambda: it freezes saturated users and users
// whose demand is met, records the round, saves the flows, and retires the
// saturated groups and the full types they use.
func (f *filler) freeze(lambda float64) {
	in := f.in
	f.mark = f.net.reaching(sink, f.mark)
	var frozen []int
	for p, g := range f.netG {
		u := 2 + p
		saturated := !f.mark[u] || f.tightAll || (len(f.tight) > 0 && f.tight[u])
		for _, i := range in.groups[g].members {
			if !f.active[i] {
				continue
			}
			// A demand is met when the ask reaches it, up to rounding of
			// the level (relative to the demand: a small demand is not
			// swallowed by a tolerance scaled to the cluster).
			switch d, ask := in.demand[i], in.weight[i]*lambda; {
			case !math.IsInf(d, 1) && d-ask <= Tolerance*math.Max(1, d):
				frozen = append(frozen, f.freezeUser(i, in.demand[i]))
			case saturated:
				frozen = append(frozen, f.freezeUser(i, ask))
			}
		}
	}
	if len(frozen) == 0 {
		// Only if rounding pinned λ at the last round's level: the last
		// violated cut is then as good as tight, and freezing its users
		// keeps the rounds finite.
		frozen = f.freezeCut(lambda)
	}
	slices.Sort(frozen)
	f.rounds = append(f.rounds, Round{Level: lambda, Frozen: frozen})

	for j := 0; j < f.nGT; j++ {
		f.flows[f.flowSlot[j]] = f.net.flow(f.arcIdx[j])
	}
	for p, g := range f.netG {
		if u := 2 + p; !f.mark[u] && f.gLive[g] {
			f.gLive[g] = false
			f.retired += int(f.net.start[u+1] - f.net.start[u])
		}
	}
	for q, t := range f.netT {
		if u := f.typeBase + int32(q); !f.mark[u] && f.tLive[t] {
			f.tLive[t] = false
			f.retired += int(f.net.start[u+1] - f.net.start[u])
		}
	}
}

// freezeCut freezes the active users of the groups in the round's last
// violated cut, or every active user if there was none.
func (f *filler) freezeCut(lambda float64) []int {
	in := f.in
	var frozen []int
	for p, g := range f.netG {
		if len(f.lastCut) > 0 && !f.lastCut[2+p] {
			continue
		}
		for _, i := range in.groups[g].members {
			if f.active[i] {
				frozen = append(frozen, f.freezeUser(i, min(in.demand[i], in.weight[i]*lambda)))
			}
		}
	}
	if len(frozen) == 0 && len(f.lastCut) > 0 {
		f.lastCut = f.lastCut[:0]
		return f.freezeCut(lambda)
	}
	return frozen
}

// freezeUser fixes user i's total at v and returns i.
func (f *filler) freezeUser(i int32, v float64) int {
	f.active[i] = false
	f.nActive--
	f.value[i] = v
	f.gFixed[f.in.group[i]] += v
	return int(i)
}

// allocation splits each group's flows among its members in proportion to
// their totals (all members may use all the group's types).
func (f *filler) allocation() *Allocation {
	in := f.in
	n := len(in.weight)
	a := &Allocation{
		Total:  make([]float64, n),
		Levels: make([]float64, n),
		Matrix: matrix[float64](n, len(in.slots)),
		Rounds: f.rounds,
	}
	for g, gr := range in.groups {
		var sum float64
		for _, i := range gr.members {
			sum += f.value[i]
		}
		if sum <= 0 {
			continue
		}
		for k, t := range gr.types {
			x := f.flows[f.flowOff[g]+int32(k)]
			for _, i := range gr.members {
				a.Matrix[i][t] = x * (f.value[i] / sum)
			}
		}
	}
	for i := range a.Total {
		for _, x := range a.Matrix[i] {
			a.Total[i] += x
		}
		a.Levels[i] = a.Total[i] / in.weight[i]
	}
	return a
}

// typeTol is the tolerance, in slots, of the arcs at a machine type with
// the given slots: room or flow there is a sum of flows of at most that
// size, and its rounding is far below this (see Tolerance).
func typeTol(slots int64) float64 {
	return Tolerance * math.Max(1, float64(slots))
}
