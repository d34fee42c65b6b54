package cmmf

import (
	"cmp"
	"math"
	"slices"
)

// SolveInteger returns a CMMF allocation of whole slots, or p's first
// validation error.
//
// §5 leaves the indivisible case "out of scope" beyond saying that max flow
// computes it. With whole slots the allocation is not unique (Figure 4), so
// this solver returns the fairest one in the sense of §6: the sorted vector
// of allocation/weight is lexicographically largest (leximin). Such an
// allocation is CMMF by §4.2's definition: a subset that could reshuffle
// its slots to raise its minimum would raise the vector.
//
// It is the greedy rule "give the next slot to the user with the lowest
// level that can still use one", run exactly but in bulk. Every user's k-th
// slot has its turn at level (k-1)/weight; ties go to the smaller weight
// (leximin prefers raising it: its level rises more), then the lower index.
// A polymatroid exchange argument shows that each greedy step stays below
// some leximin-optimal allocation, so the greedy ends at one; a user that
// finds no augmenting path can never grow again. Rather than one slot at a
// time (a cost proportional to the slots), each round finds by Newton's
// method, over max flows with int64 capacities, the highest level below
// which every turn can be served at once, grants them all, then serves the
// turns tied at that level one by one along augmenting paths, at least one
// of which fails and freezes its user. The rounds are progressive filling
// again, on a step function.
//
// With equal weights the answer is within one slot of the divisible one
// (⌊x*⌋ ≤ y ≤ ⌈x*⌉: Frank and Murota's proximity theorem for integral base
// polyhedra). With unequal weights it need not be: leximin of
// allocation/weight can leave a heavy user with nothing when there are
// fewer slots than users, since someone's level is 0 either way and the
// next lowest is then highest if light users hold the slots. Exact ties in
// levels are decided on float64 values.
func SolveInteger(p *Problem) (*IntAllocation, error) {
	in, err := compile(p)
	if err != nil {
		return nil, err
	}
	r := newIntFiller(in)
	r.run()
	return r.allocation(), nil
}

// intFiller runs integer progressive filling.
type intFiller struct {
	in     *instance
	y      []int64 // per user
	frozen []bool
	gDead  []bool // group whose types are all dead (see typeGraph)
	off    []int32
	tg     *typeGraph
	level  float64 // turns below this level have all been served
	bulk   bulkNet
}

func newIntFiller(in *instance) *intFiller {
	off := make([]int32, len(in.groups)+1)
	for g, gr := range in.groups {
		off[g+1] = off[g] + int32(len(gr.types))
	}
	r := &intFiller{
		in:     in,
		y:      make([]int64, len(in.weight)),
		frozen: make([]bool, len(in.weight)),
		gDead:  make([]bool, len(in.groups)),
		off:    off,
		tg:     newTypeGraph(in, off),
	}
	r.bulk.specs = make([]arcSpec[int64], 0, int(off[len(in.groups)])+len(in.groups)+len(in.slots))
	for i, d := range in.demandInt {
		r.frozen[i] = d == 0
	}
	r.bury()
	return r
}

// run performs rounds until every user is frozen. Each round freezes at
// least one user.
func (r *intFiller) run() {
	for {
		active := 0
		for _, f := range r.frozen {
			if !f {
				active++
			}
		}
		if active == 0 {
			return
		}
		before := r.progress()
		r.level = r.bulkFill()
		r.tg.reindex()
		r.serveTies()
		r.bury()
		if r.progress() == before {
			// Cannot happen in exact integer arithmetic (the turns tied at
			// the round's level cannot all be served); a guard against a
			// hang if it did.
			for i := range r.frozen {
				r.frozen[i] = true
			}
		}
	}
}

// progress is a measure that every round must increase: slots granted
// plus users frozen.
func (r *intFiller) progress() int64 {
	var p int64
	for i, y := range r.y {
		p += y
		if r.frozen[i] {
			p++
		}
	}
	return p
}

// serveTies serves, one at a time in the greedy's order, the turns tied at
// the round's level.
func (r *intFiller) serveTies() {
	in := r.in
	if math.IsInf(r.level, 1) {
		return
	}
	var ties []int32
	for i, y := range r.y {
		if !r.frozen[i] && float64(y)/in.weight[i] == r.level {
			ties = append(ties, int32(i))
		}
	}
	slices.SortFunc(ties, func(a, b int32) int {
		if c := cmp.Compare(in.weight[a], in.weight[b]); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	for _, i := range ties {
		g := in.group[i]
		if r.gDead[g] {
			continue
		}
		if !r.tg.augment(g) {
			r.bury()
			continue
		}
		r.y[i]++
		if r.y[i] == in.demandInt[i] {
			r.frozen[i] = true
		}
	}
}

// bury marks groups whose types are all dead and freezes their users.
func (r *intFiller) bury() {
	for g := range r.in.groups {
		if r.gDead[g] || !r.tg.groupDead(int32(g)) {
			continue
		}
		r.gDead[g] = true
		for _, i := range r.in.groups[g].members {
			r.frozen[i] = true
		}
	}
}

// allocation splits each group's slots among its members: members may all
// use all the group's types, so any split with the right row totals is a
// valid flow; this one fills members in index order, type by type.
func (r *intFiller) allocation() *IntAllocation {
	in := r.in
	n := len(in.weight)
	a := &IntAllocation{
		Total:  make([]int64, n),
		Matrix: matrix[int64](n, len(in.slots)),
	}
	for g, gr := range in.groups {
		m := 0
		need := int64(0)
		if len(gr.members) > 0 {
			need = r.y[gr.members[0]]
		}
		for k, t := range gr.types {
			x := r.tg.flows[r.off[g]+int32(k)]
			for x > 0 && m < len(gr.members) {
				if need == 0 {
					m++
					if m < len(gr.members) {
						need = r.y[gr.members[m]]
					}
					continue
				}
				d := min(x, need)
				a.Matrix[gr.members[m]][t] += d
				x -= d
				need -= d
			}
		}
	}
	for i := range a.Total {
		for _, x := range a.Matrix[i] {
			a.Total[i] += x
		}
	}
	return a
}
