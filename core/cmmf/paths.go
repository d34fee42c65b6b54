package cmmf

import "math/bits"

// typeGraph holds an integer flow by group and type, and finds augmenting
// paths for one slot at a time on types rather than on the whole network:
// from a full type, a path may continue to any type that some group holding
// a slot there may also use (that group moves one slot over, keeping its
// total). Each type keeps the groups holding its slots (hold), and each
// group a bitset of its usable types, so a search costs a few machine words
// per holder visited instead of a scan of every arc.
type typeGraph struct {
	in    *instance
	flows []int64 // per group and usable type: flows[off[g]+k]
	off   []int32
	load  []int64   // per type
	hold  [][]int32 // per type: groups with flow there
	hpos  []int32   // per flow slot: index in hold, or -1
	elig  []uint64  // per group: words bitset of usable types
	words int
	// dead types can never reach a free slot again: a search from them
	// found a closed set of full types, whose holders may use no other
	// type; no later path can enter such a set, so it stays full and closed.
	dead      []uint64
	seen      []uint64
	from, via []int32 // search tree: previous type and the group moved
	queue     []int32
}

func newTypeGraph(in *instance, off []int32) *typeGraph {
	nt := len(in.slots)
	w := (nt + 63) / 64
	tg := &typeGraph{
		in:    in,
		flows: make([]int64, off[len(in.groups)]),
		off:   off,
		load:  make([]int64, nt),
		hold:  make([][]int32, nt),
		hpos:  make([]int32, off[len(in.groups)]),
		elig:  make([]uint64, len(in.groups)*w),
		words: w,
		dead:  make([]uint64, w),
		seen:  make([]uint64, w),
		from:  make([]int32, nt),
		via:   make([]int32, nt),
	}
	for g, gr := range in.groups {
		for _, t := range gr.types {
			tg.elig[g*w+int(t>>6)] |= 1 << (t & 63)
		}
	}
	for i := range tg.hpos {
		tg.hpos[i] = -1
	}
	return tg
}

// isDead reports whether type t is dead.
func (tg *typeGraph) isDead(t int32) bool { return tg.dead[t>>6]&(1<<(t&63)) != 0 }

// groupDead reports whether every type group g may use is dead (or it may
// use none): then g can never grow.
func (tg *typeGraph) groupDead(g int32) bool {
	w := tg.words
	for k, e := range tg.elig[int(g)*w : int(g)*w+w] {
		if e&^tg.dead[k] != 0 {
			return false
		}
	}
	return true
}

// reindex rebuilds load and hold from flows, after flows changed wholesale.
func (tg *typeGraph) reindex() {
	clear(tg.load)
	for t := range tg.hold {
		tg.hold[t] = tg.hold[t][:0]
	}
	for g, gr := range tg.in.groups {
		for k, t := range gr.types {
			s := tg.off[g] + int32(k)
			tg.hpos[s] = -1
			if x := tg.flows[s]; x > 0 {
				tg.load[t] += x
				tg.addHolder(int32(g), t, s)
			}
		}
	}
}

// augment moves one more slot to group g along a residual path, if any.
// The search is breadth-first over types, skipping dead ones.
func (tg *typeGraph) augment(g int32) bool {
	in := tg.in
	w := tg.words
	clear(tg.seen)
	q := tg.queue[:0]
	found := int32(-1)
	for _, t := range in.groups[g].types {
		if tg.isDead(t) {
			continue
		}
		if tg.load[t] < in.slots[t] {
			found = t
			break
		}
		tg.seen[t>>6] |= 1 << (t & 63)
		tg.from[t] = -1
		q = append(q, t)
	}
	for head := 0; found < 0 && head < len(q); head++ {
		u := q[head]
		for _, hg := range tg.hold[u] {
			eh := tg.elig[int(hg)*w : int(hg)*w+w]
			for k := 0; found < 0 && k < w; k++ {
				fresh := eh[k] &^ (tg.seen[k] | tg.dead[k])
				for fresh != 0 {
					t := int32(k*64 + bits.TrailingZeros64(fresh))
					fresh &= fresh - 1
					tg.seen[k] |= 1 << (t & 63)
					tg.from[t], tg.via[t] = u, hg
					if tg.load[t] < in.slots[t] {
						found = t
						break
					}
					q = append(q, t)
				}
			}
			if found >= 0 {
				break
			}
		}
	}
	tg.queue = q
	if found >= 0 {
		tg.apply(g, found)
		return true
	}
	// Everything reached is full and closed: it is dead for good.
	for k := range w {
		tg.dead[k] |= tg.seen[k]
	}
	return false
}

// apply realises the path the search found to free type t: each type's
// holder moves one slot on to the next type, and g takes one on the first.
func (tg *typeGraph) apply(g, t int32) {
	tg.load[t]++
	for tg.from[t] >= 0 && tg.seen[t>>6]&(1<<(t&63)) != 0 {
		u, hg := tg.from[t], tg.via[t]
		tg.add(hg, t, 1)
		tg.add(hg, u, -1)
		t = u
	}
	tg.add(g, t, 1)
}

// add changes group g's flow on type t by d (±1), keeping hold current.
func (tg *typeGraph) add(g, t int32, d int64) {
	s := tg.slot(g, t)
	before := tg.flows[s]
	tg.flows[s] += d
	switch {
	case before == 0 && tg.flows[s] > 0:
		tg.addHolder(g, t, s)
	case before > 0 && tg.flows[s] == 0:
		h := tg.hold[t]
		k := tg.hpos[s]
		last := h[len(h)-1]
		h[k] = last
		tg.hpos[tg.slot(last, t)] = k
		tg.hold[t] = h[:len(h)-1]
		tg.hpos[s] = -1
	}
}

func (tg *typeGraph) addHolder(g, t, s int32) {
	tg.hpos[s] = int32(len(tg.hold[t]))
	tg.hold[t] = append(tg.hold[t], g)
}

// slot is the flow slot of group g on type t, which g may use: a binary
// search of g's sorted types.
func (tg *typeGraph) slot(g, t int32) int32 {
	types := tg.in.groups[g].types
	lo, hi := 0, len(types)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if types[m] < t {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return tg.off[g] + int32(lo)
}
