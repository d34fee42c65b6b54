package racksim

import "math"

// Network carries flows of bytes over links of fixed capacity, sharing each
// link's bandwidth max-min fairly among the flows that cross it (progressive
// filling: the most contended link fixes the rate of its flows, their rates
// are taken out of every other link they cross, and so on). Rates are
// recomputed whenever a flow starts or ends, so a flow's rate is piecewise
// constant between those events.
//
// Network is not safe for concurrent use; the simulator owns it.
type Network struct {
	capacity []float64 // bytes per second, per link
	flows    []netFlow
	free     []int // reusable flow slots
	active   int
	now      float64 // time the remaining bytes refer to
	dirty    bool    // rates need recomputing

	// scratch for recompute
	rem      []float64
	cnt      []int32
	onLink   [][]int32
	used     []int32
	inUsed   []bool
	fixedGen []uint32
	gen      uint32
}

type netFlow struct {
	links     []int
	bytes     float64
	remaining float64
	rate      float64
	live      bool
}

// NewNetwork returns a network of links with the given capacities in bytes
// per second.
func NewNetwork(capacity []float64) *Network {
	n := len(capacity)
	return &Network{
		capacity: append([]float64(nil), capacity...),
		rem:      make([]float64, n),
		cnt:      make([]int32, n),
		onLink:   make([][]int32, n),
		inUsed:   make([]bool, n),
	}
}

// Add starts a flow of bytes over links at time now (not before the last
// call's time) and returns its id. A flow over no links never completes;
// the simulator always gives at least one.
func (n *Network) Add(now float64, links []int, bytes float64) int {
	n.Advance(now)
	f := netFlow{links: links, bytes: bytes, remaining: bytes, live: true}
	var id int
	if k := len(n.free); k > 0 {
		id = n.free[k-1]
		n.free = n.free[:k-1]
		n.flows[id] = f
	} else {
		id = len(n.flows)
		n.flows = append(n.flows, f)
		n.fixedGen = append(n.fixedGen, 0)
	}
	n.active++
	n.dirty = true
	return id
}

// Remove ends flow id at time now, finished or not, and returns the bytes
// it carried.
func (n *Network) Remove(now float64, id int) float64 {
	n.Advance(now)
	f := &n.flows[id]
	if !f.live {
		return 0
	}
	moved := f.bytes - max(f.remaining, 0)
	f.live = false
	f.links = nil
	n.free = append(n.free, id)
	n.active--
	n.dirty = true
	return moved
}

// Rate returns flow id's current rate in bytes per second.
func (n *Network) Rate(id int) float64 {
	n.recompute()
	return n.flows[id].rate
}

// Active returns the number of flows in progress.
func (n *Network) Active() int { return n.active }

// Advance moves the network's clock to now, draining every flow at its
// current rate.
func (n *Network) Advance(now float64) {
	if now <= n.now {
		return
	}
	n.recompute()
	dt := now - n.now
	for i := range n.flows {
		if f := &n.flows[i]; f.live {
			f.remaining -= f.rate * dt
		}
	}
	n.now = now
}

// done reports whether a flow has (up to rounding) carried all its bytes.
func (f *netFlow) done() bool { return f.remaining <= 1e-9*f.bytes+1e-3 }

// Next returns the earliest time a flow completes, or +Inf if none is in
// progress.
func (n *Network) Next() float64 {
	n.recompute()
	t := math.Inf(1)
	for i := range n.flows {
		f := &n.flows[i]
		if !f.live {
			continue
		}
		if f.done() {
			return n.now
		}
		if f.rate > 0 {
			t = min(t, n.now+f.remaining/f.rate)
		}
	}
	return t
}

// Finished removes and returns, in id order, the flows that have completed
// by time now.
func (n *Network) Finished(now float64) []int {
	n.Advance(now)
	var out []int
	for i := range n.flows {
		if f := &n.flows[i]; f.live && f.done() {
			f.remaining = 0
			out = append(out, i)
		}
	}
	for _, id := range out {
		n.Remove(now, id)
	}
	return out
}

// recompute sets every live flow's max-min fair rate by progressive
// filling.
func (n *Network) recompute() {
	if !n.dirty {
		return
	}
	n.dirty = false
	n.gen++
	for _, l := range n.used {
		n.cnt[l] = 0
		n.onLink[l] = n.onLink[l][:0]
		n.inUsed[l] = false
	}
	n.used = n.used[:0]
	unfixed := 0
	for i := range n.flows {
		f := &n.flows[i]
		if !f.live {
			continue
		}
		f.rate = 0
		unfixed++
		for _, l := range f.links {
			if !n.inUsed[l] {
				n.inUsed[l] = true
				n.used = append(n.used, int32(l))
				n.rem[l] = n.capacity[l]
			}
			n.cnt[l]++
			n.onLink[l] = append(n.onLink[l], int32(i))
		}
	}
	for unfixed > 0 {
		best, bl := math.Inf(1), int32(-1)
		for _, l := range n.used {
			if c := n.cnt[l]; c > 0 {
				if s := n.rem[l] / float64(c); s < best {
					best, bl = s, l
				}
			}
		}
		if bl < 0 {
			break // flows over no links
		}
		best = max(best, 0)
		for _, id := range n.onLink[bl] {
			if n.fixedGen[id] == n.gen {
				continue
			}
			n.fixedGen[id] = n.gen
			f := &n.flows[id]
			f.rate = best
			unfixed--
			for _, l := range f.links {
				n.rem[l] -= best
				n.cnt[l]--
			}
		}
	}
}
