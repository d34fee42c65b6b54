package cmmf

import "math"

// bulkNet is the integer rounds' flow network: source → live group
// (capacity: its members' asks) → live type (unbounded) → sink (the type's
// slots), in int64 so that every flow is whole. Dead groups and types (see
// typeGraph) are left out: they form closed, full sets that no path can
// use.
type bulkNet struct {
	net      network[int64]
	specs    []arcSpec[int64]
	idx      []int32
	slotOf   []int32 // per group→type spec: its flow slot
	liveG    []int32 // live group p is node 2+p
	gNode    []int32
	typeBase int32
	nLiveT   int
	srcBase  int
	sinkBase int
	mark     []bool
	users    []stepper
}

// bulkFill grants at once every turn below the highest level at which all
// of them can be served, and returns that level (+Inf if every demand can
// be met). It is a round of progressive filling with step-function asks:
// Newton's method over minimum cuts, as in filler.newton, with solveStep
// in place of solveLevel.
func (r *intFiller) bulkFill() float64 {
	b := &r.bulk
	r.buildBulk()
	lo := r.level
	room, users := r.cut(nil)
	k := math.Inf(1)
	if askedSum(users, k, room) > room {
		k = solveStep(users, room, lo, k)
	}
	maxSteps := len(b.net.level) + 2 // cuts are nested: one per step
	for step := 0; ; step++ {
		r.setCaps(k)
		b.net.maxFlow(source, sink)
		var short int64
		for p := range b.liveG {
			short += b.net.res[b.idx[b.srcBase+p]]
		}
		if short == 0 {
			break
		}
		if step >= maxSteps {
			// Cannot happen (each step's cut is new); if it did, fall back
			// to the level the round started from, which is feasible.
			k = lo
			r.setCaps(k)
			b.net.maxFlow(source, sink)
			break
		}
		b.mark = b.net.reachable(source, b.mark)
		room, users := r.cut(b.mark)
		k = solveStep(users, room, lo, k)
	}
	for j, s := range b.slotOf {
		r.tg.flows[s] = b.net.flow(b.idx[j])
	}
	for _, g := range b.liveG {
		for _, i := range r.in.groups[g].members {
			if !r.frozen[i] {
				r.y[i] = r.stepper(i).asked(k)
				r.frozen[i] = r.y[i] == r.in.demandInt[i]
			}
		}
	}
	return k
}

func (r *intFiller) stepper(i int32) stepper {
	return stepper{y: r.y[i], demand: r.in.demandInt[i], weight: r.in.weight[i]}
}

// buildBulk makes the network of live groups and types, carrying the
// current flows.
func (r *intFiller) buildBulk() {
	b, in, tg := &r.bulk, r.in, r.tg
	b.liveG = b.liveG[:0]
	b.gNode = resize(b.gNode, len(in.groups))
	for g, dead := range r.gDead {
		if !dead {
			b.gNode[g] = int32(2 + len(b.liveG))
			b.liveG = append(b.liveG, int32(g))
		}
	}
	b.typeBase = int32(2 + len(b.liveG))
	tNode := make([]int32, len(in.slots))
	b.nLiveT = 0
	for t := range in.slots {
		if !tg.isDead(int32(t)) {
			tNode[t] = b.typeBase + int32(b.nLiveT)
			b.nLiveT++
		}
	}
	b.specs, b.slotOf = b.specs[:0], b.slotOf[:0]
	for _, g := range b.liveG {
		for k, t := range in.groups[g].types {
			if tg.isDead(t) {
				continue // no live group holds a slot there
			}
			s := r.off[g] + int32(k)
			b.specs = append(b.specs, arcSpec[int64]{from: b.gNode[g], to: tNode[t], cap: MaxTotalSlots + 1, flow: tg.flows[s]})
			b.slotOf = append(b.slotOf, s)
		}
	}
	b.srcBase = len(b.specs)
	for _, g := range b.liveG {
		var out int64
		for _, i := range in.groups[g].members {
			out += r.y[i]
		}
		b.specs = append(b.specs, arcSpec[int64]{from: source, to: b.gNode[g], cap: out, flow: out})
	}
	b.sinkBase = len(b.specs)
	for t := range in.slots {
		if !tg.isDead(int32(t)) {
			b.specs = append(b.specs, arcSpec[int64]{from: tNode[t], to: sink, cap: in.slots[t], flow: tg.load[t]})
		}
	}
	b.idx = b.net.build(int(b.typeBase)+b.nLiveT, b.specs, b.idx)
}

// cut returns, for the cut whose source side is marked (nil: all live
// nodes), the slots its users may still be granted (its types' slots less
// its frozen users' holdings) and its active users.
func (r *intFiller) cut(mark []bool) (int64, []stepper) {
	b, in := &r.bulk, r.in
	var room int64
	q := 0
	for t := range in.slots {
		if r.tg.isDead(int32(t)) {
			continue
		}
		if mark == nil || mark[b.typeBase+int32(q)] {
			room += in.slots[t]
		}
		q++
	}
	b.users = b.users[:0]
	for p, g := range b.liveG {
		if mark != nil && !mark[2+p] {
			continue
		}
		for _, i := range in.groups[g].members {
			if r.frozen[i] {
				room -= r.y[i]
			} else {
				b.users = append(b.users, r.stepper(i))
			}
		}
	}
	return room, b.users
}

// setCaps sets each live group's source capacity to its members' asks at
// level k, pulling back flow where a group carries more.
func (r *intFiller) setCaps(k float64) {
	b, in := &r.bulk, r.in
	g0 := &b.net
	for p, g := range b.liveG {
		var ask int64
		for _, i := range in.groups[g].members {
			if r.frozen[i] {
				ask += r.y[i]
			} else {
				ask += r.stepper(i).asked(k)
			}
		}
		a := b.idx[b.srcBase+p]
		if excess := g0.flow(a) - ask; excess > 0 {
			u := b.gNode[g]
			for e := g0.start[u]; e < g0.start[u+1] && excess > 0; e++ {
				v := g0.to[e]
				if v < b.typeBase {
					continue
				}
				d := min(g0.flow(e), excess)
				if d <= 0 {
					continue
				}
				g0.move(e, -d)
				g0.move(b.idx[b.sinkBase+int(v-b.typeBase)], -d)
				excess -= d
			}
			g0.res[g0.rev[a]] = ask
		}
		g0.res[a] = ask - g0.flow(a)
	}
}
