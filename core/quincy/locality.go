package quincy

import (
	"cmp"
	"math/bits"
	"slices"
)

// amount is a number of input bytes held by one computer or one rack.
type amount struct {
	id    int
	bytes int64
}

// locality summarises where a task's input is (§2.3): D, the bytes on each
// computer that holds some (d_m) and in each rack that holds some (D_l).
// A block counts once per computer and once per rack however many replicas
// sit there, because a task reads each block once, from the nearest
// replica.
type locality struct {
	total int64    // D
	comps []amount // d_m > 0, sorted by computer
	racks []amount // D_l > 0, sorted by rack
}

// pair is the Appendix's byte pair: bytes read across a rack switch (ℛ)
// and across the core switch (𝒳). The two are disjoint: a block read from
// the rack crosses only the rack switch, one read from another rack is
// counted only as core traffic (notes §1, "recon. of the byte counts").
type pair struct {
	rack, core int64
}

// topology is what the cost model needs of a cluster, precomputed once.
type topology struct {
	comps     []Computer
	rackSize  []int // P_l, computers per rack
	rackSlots []int // slots per rack
	nonEmpty  int   // racks with at least one computer
}

func newTopology(c *Cluster) *topology {
	t := &topology{
		comps:     c.Computers,
		rackSize:  make([]int, c.Racks),
		rackSlots: make([]int, c.Racks),
	}
	for _, comp := range c.Computers {
		t.rackSize[comp.Rack]++
		t.rackSlots[comp.Rack] += comp.slots()
	}
	for _, n := range t.rackSize {
		if n > 0 {
			t.nonEmpty++
		}
	}
	return t
}

// rackOf returns computer m's rack.
func (tp *topology) rackOf(m int) int { return tp.comps[m].Rack }

// summarize aggregates a task's blocks by computer and by rack. It sorts
// (computer, block) entries instead of using maps so that tasks reading
// hundreds of blocks stay O(B log B) and the result is deterministic.
func (tp *topology) summarize(in []Block) locality {
	var loc locality
	var comps, racks []amount
	for _, b := range in {
		if b.Bytes <= 0 {
			continue
		}
		loc.total = satAdd(loc.total, b.Bytes)
		first := len(comps)
		for _, m := range b.Replicas {
			dup := false
			for _, a := range comps[first:] {
				if a.id == m {
					dup = true
					break
				}
			}
			if !dup {
				comps = append(comps, amount{m, b.Bytes})
			}
		}
		firstRack := len(racks)
		for _, a := range comps[first:] {
			l := tp.rackOf(a.id)
			dup := false
			for _, r := range racks[firstRack:] {
				if r.id == l {
					dup = true
					break
				}
			}
			if !dup {
				racks = append(racks, amount{l, b.Bytes})
			}
		}
	}
	loc.comps = merge(comps)
	loc.racks = merge(racks)
	return loc
}

// merge sorts amounts by id and sums those with equal ids.
func merge(a []amount) []amount {
	if len(a) == 0 {
		return nil
	}
	slices.SortFunc(a, func(x, y amount) int { return cmp.Compare(x.id, y.id) })
	out := a[:1]
	for _, x := range a[1:] {
		if last := &out[len(out)-1]; last.id == x.id {
			last.bytes = satAdd(last.bytes, x.bytes)
		} else {
			out = append(out, x)
		}
	}
	return out
}

// find returns the bytes recorded for id, or 0.
func find(a []amount, id int) int64 {
	i, ok := slices.BinarySearchFunc(a, id, func(x amount, id int) int { return cmp.Compare(x.id, id) })
	if !ok {
		return 0
	}
	return a[i].bytes
}

// onComputer is the exact pair (ℛ_m^C, 𝒳_m^C) for running on computer m
// in rack l: blocks in the rack but not on m cross the rack switch, blocks
// outside the rack cross the core switch.
func (loc *locality) onComputer(tp *topology, m int) pair {
	dl := find(loc.racks, tp.rackOf(m))
	return pair{rack: dl - find(loc.comps, m), core: loc.total - dl}
}

// minInRack is the least d_m over rack l's computers: 0 unless every
// computer of the rack holds some of the input.
func (loc *locality) minInRack(tp *topology, l int) int64 {
	n, least := 0, int64(-1)
	for _, a := range loc.comps {
		if tp.rackOf(a.id) != l {
			continue
		}
		n++
		if least < 0 || a.bytes < least {
			least = a.bytes
		}
	}
	if n < tp.rackSize[l] || least < 0 {
		return 0
	}
	return least
}

// inRack is the exact rack bound (ℛ_l^R, 𝒳_l^R): the pair on rack l's
// least favourable computer, the one holding the least input.
func (loc *locality) inRack(tp *topology, l int) pair {
	dl := find(loc.racks, l)
	return pair{rack: dl - loc.minInRack(tp, l), core: loc.total - dl}
}

// worst is (ℛ^X, 𝒳^X), the pair on the cluster's least favourable
// computer: the one maximising ψℛ + ξ𝒳 (one computer's pair, not a
// componentwise maximum; notes §1). Only racks holding input and one rack
// holding none (if any exists) are candidates: every computer of an empty
// rack reads all of D across the core. Ties go to the larger core count,
// the conservative choice.
func (loc *locality) worst(tp *topology, psi, xi int64, gb int64) pair {
	var best pair
	bestCost := int64(-1)
	consider := func(p pair) {
		c := dataCost(p, psi, xi, gb)
		if c > bestCost || (c == bestCost && p.core > best.core) {
			best, bestCost = p, c
		}
	}
	for _, r := range loc.racks {
		consider(loc.inRack(tp, r.id))
	}
	if len(loc.racks) < tp.nonEmpty {
		consider(pair{rack: 0, core: loc.total})
	}
	return best
}

// dataCost prices a pair: ψℛ + ξ𝒳 per GB, each term rounded down.
func dataCost(p pair, psi, xi, gb int64) int64 {
	return satAdd(mulDiv(p.rack, psi, gb), mulDiv(p.core, xi, gb))
}

// preferred reports whether bytes exceed the fraction perMille/1000 of
// total (§2.3: "more than a fraction δ"), in exact integers.
func preferred(bytes, total, perMille int64) bool {
	if bytes <= 0 {
		return false
	}
	// bytes*1000 > perMille*total, without overflow for any int64 sizes.
	bh, bl := mul128(bytes, 1000)
	th, tl := mul128(total, perMille)
	return bh > th || (bh == th && bl > tl)
}

func mul128(a, b int64) (hi, lo uint64) {
	return bits.Mul64(uint64(a), uint64(b))
}

// Reads splits the input a task would read if it ran on computer m into
// bytes read from m's own disks, across m's rack switch and across the core
// switch (the three parts of §5.2's DT), reading each block from its
// nearest replica. The simulator uses it to account data transfer.
func (c *Cluster) Reads(t *Task, m int) (local, rack, core int64) {
	tp := &topology{comps: c.Computers}
	loc := tp.summarize(t.Input)
	p := loc.onComputer(tp, m)
	return loc.total - p.rack - p.core, p.rack, p.core
}
