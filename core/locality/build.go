package locality

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/sparrowfleet/sparrow/core/flow"
	"github.com/sparrowfleet/sparrow/core/quincy"
)

// NodeLoad is one node monitor's state in a period's snapshot, as its
// report to the coordinator gives it.
type NodeLoad struct {
	// Name is the node monitor's gossip member name, the key of
	// Prices.Node.
	Name string
	// Rack is the node's "rack" attribute ("" is a rack of its own name:
	// every rackless node shares one unnamed rack).
	Rack string
	// Slots is how many tasks the node runs at once; a node without
	// slots takes no work and gets no price.
	Slots int
	// Running and Queued are the tasks running and the reservations
	// queued there (summed over users); Params.ProbeRatio turns
	// reservations into tasks.
	Running, Queued int
	// TaskMillis is the node's recent mean task run time in milliseconds
	// (0: none finished yet, so the cluster's mean stands in).
	TaskMillis int64
}

// Params are the locality graph's cost weights, in core/quincy's cost
// units (quincy.CostUnit per paper unit).
type Params struct {
	// WaitPerSecond is ω: the cost of a task waiting one second in a
	// queue (paper: 0.5 per second, so CostUnit/2).
	WaitPerSecond int64
	// RackPerGB is ψ, the cost of reading 10⁹ bytes across a rack switch
	// (paper: 1, so CostUnit).
	RackPerGB int64
	// CorePerGB is ξ, the cost of reading 10⁹ bytes across the core
	// switch (paper: 2, so 2·CostUnit; QFPX's 20 for a constrained core).
	CorePerGB int64
	// InputBytes is a task's input size, the bytes that move when it runs
	// away from the node holding them. Reports do not carry per-task
	// sizes, so one default stands for every queued task.
	InputBytes int64
	// MaxWaves bounds the wave arcs per node (see Build); past the last
	// one, a node's marginal wait stops growing.
	MaxWaves int
	// DefaultTaskMillis is the task run time assumed while no node has
	// measured one.
	DefaultTaskMillis int64
	// ProbeRatio is how many reservations a task queues (the schedulers'
	// probe ratio, Sparrow's d). Only one of a task's reservations runs
	// it; the others find nothing to run and cost a round trip, so a
	// node's queued reservations divided by d (rounded up) estimate the
	// tasks that will run there. 0 or 1 counts reservations as tasks.
	ProbeRatio float64
}

// GB is the number of bytes in the gigabyte of ψ and ξ.
const GB = 1_000_000_000

// DefaultParams returns Quincy's weights (§6: ω = 0.5 per second, ψ = 1
// and ξ = 2 per GB), a 128 MiB input per task (an HDFS block), 32 waves,
// 100 ms tasks until measured (Sparrow's sub-second tasks) and the
// schedulers' default probe ratio of 2.
func DefaultParams() Params {
	return Params{
		ProbeRatio:        2,
		WaitPerSecond:     quincy.CostUnit / 2,
		RackPerGB:         quincy.CostUnit,
		CorePerGB:         2 * quincy.CostUnit,
		InputBytes:        128 << 20,
		MaxWaves:          32,
		DefaultTaskMillis: 100,
	}
}

// maxWeight bounds every weight, the input size and a task's length.
// maxCost caps an arc's cost (2³⁶ units are over four years of waiting at
// ω = 500 per second) and maxQueued the total queued work, so that a
// flow's cost, at most maxQueued·maxCost, fits in int64; maxSlots bounds
// a node's slots (and maxQueued its running tasks) so that positions in
// its waves, up to maxCost·maxSlots, fit too.
const (
	maxWeight = 1 << 40
	maxCost   = 1 << 36
	maxQueued = 1 << 26
	maxSlots  = 1 << 20
)

// capCost returns k·c capped at maxCost, for k, c >= 0. The cap keeps a
// node's wave costs non-decreasing, so the flow still fills them in order.
func capCost(k, c int64) int64 {
	if c == 0 || k == 0 {
		return 0
	}
	if k > maxCost/c {
		return maxCost
	}
	return k * c
}

// Validate checks that the weights are usable.
func (p Params) Validate() error {
	for _, w := range []struct {
		name string
		v    int64
	}{{"wait weight", p.WaitPerSecond}, {"rack cost per GB", p.RackPerGB}, {"core cost per GB", p.CorePerGB},
		{"input bytes", p.InputBytes}, {"default task millis", p.DefaultTaskMillis}} {
		if w.v < 0 || w.v > maxWeight {
			return fmt.Errorf("locality: %s %d outside [0, %d]", w.name, w.v, int64(maxWeight))
		}
	}
	if p.MaxWaves < 1 || p.MaxWaves > 1<<16 {
		return fmt.Errorf("locality: max waves %d outside [1, 65536]", p.MaxWaves)
	}
	if p.ProbeRatio != 0 && !(p.ProbeRatio >= 1 && p.ProbeRatio <= 100) {
		return fmt.Errorf("locality: probe ratio %v: want 0 or a number in [1, 100]", p.ProbeRatio)
	}
	return nil
}

// tasks estimates the tasks behind queued reservations (ProbeRatio).
func (p Params) tasks(reservations int) int {
	if p.ProbeRatio <= 1 || reservations <= 0 {
		return reservations
	}
	return int(math.Ceil(float64(reservations) / p.ProbeRatio))
}

// RackCost is ψ·InputBytes: what running a task elsewhere in its rack
// costs in transfer.
func (p Params) RackCost() int64 { return min(mulDivRound(p.RackPerGB, p.InputBytes, GB), maxCost) }

// CoreCost is ξ·InputBytes: what running a task in another rack costs.
func (p Params) CoreCost() int64 { return min(mulDivRound(p.CorePerGB, p.InputBytes, GB), maxCost) }

// mulDivRound is a·b/d rounded to nearest, for a, b ≤ 2⁴⁰ and d > 0
// (the product fits in 2⁸⁰, so it goes through float64 only when large).
func mulDivRound(a, b, d int64) int64 {
	if a == 0 || b == 0 {
		return 0
	}
	if a <= (1<<62)/b {
		return (a*b + d/2) / d
	}
	return int64(float64(a)*float64(b)/float64(d) + 0.5)
}

// ErrNoCapacity is returned when queued work has no node with slots to go
// to.
var ErrNoCapacity = errors.New("locality: queued work but no node has slots")

// Graph is a period's locality network: Quincy's graph (Appendix) adapted
// to a fleet that does not preempt and whose tasks are already queued.
//
// Each node m with queued work has a demand node D_m supplying its queued
// count. D_m → C_m costs 0 (the task runs where it is queued, next to its
// input), D_m → R_l (m's rack) costs ψ·input and D_m → X costs ξ·input.
// X → R_l → C_m are Quincy's aggregators, free and uncapacitated. C_m → S
// is a bundle of parallel wave arcs: the k-th wave after the running work
// holds the next slots_m tasks, each waiting k task lengths, so it costs
// k·ω·taskSeconds with capacity slots_m (wave 0 only the free slots). The
// costs grow with k, so the flow fills waves in order and a node's
// marginal wait grows with its queue; the last wave is uncapacitated.
// S demands all the queued work.
type Graph struct {
	Net *flow.Network
	// Loads are the snapshot's nodes in name order, Queued in tasks
	// (Params.ProbeRatio applied); Comp[i] is load i's
	// C node and Demand[i] its D node (-1 without queued work). A node
	// without slots has Comp[i] = -1 too.
	Loads  []NodeLoad
	Comp   []int
	Demand []int
	// Racks are the rack names in order, RackNode[i] rack i's R node.
	Racks    []string
	RackNode []int
	// X and S are the cluster aggregator and the sink.
	X, S int
	// WaveCost[i] is load i's cost per wave, ω times its task length.
	WaveCost []int64
	// local, rack and core index the demand arcs by kind, for Outcome;
	// localArc[i] is load i's D → C arc (-1: none).
	local, rack, core []int
	localArc          []int
	params            Params
}

// Build makes a period's locality graph from a snapshot of the fleet.
// Nodes are ordered by name (duplicates are an error), so the same
// snapshot in any order builds the same network.
func Build(nodes []NodeLoad, p Params) (*Graph, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	sn, err := takeSnapshot(nodes, p)
	if err != nil {
		return nil, err
	}
	loads, queued := sn.loads, sn.queued
	g := &Graph{Loads: loads, params: p, Comp: make([]int, len(loads)), Demand: make([]int, len(loads)),
		WaveCost: make([]int64, len(loads)), localArc: make([]int, len(loads))}
	net := flow.New(0)
	g.Net = net
	g.S = net.AddNode()
	g.X = net.AddNode()
	rackIdx := map[string]int{}
	for _, l := range loads {
		if _, ok := rackIdx[l.Rack]; !ok {
			rackIdx[l.Rack] = 0
			g.Racks = append(g.Racks, l.Rack)
		}
	}
	slices.Sort(g.Racks)
	for i, r := range g.Racks {
		rackIdx[r] = i
		g.RackNode = append(g.RackNode, net.AddNode())
		net.AddArc(g.X, g.RackNode[i], 0, flow.Infinity, 0)
	}
	rackCost, coreCost := p.RackCost(), p.CoreCost()
	copy(g.WaveCost, sn.waveCost)
	for i, l := range loads {
		g.Comp[i], g.Demand[i], g.localArc[i] = -1, -1, -1
		r := g.RackNode[rackIdx[l.Rack]]
		if l.Slots > 0 {
			c := net.AddNode()
			g.Comp[i] = c
			net.AddArc(r, c, 0, flow.Infinity, 0)
			for _, w := range sn.waves(i) {
				if w.last {
					w.cap = flow.Infinity
				}
				net.AddArc(c, g.S, 0, w.cap, w.cost)
			}
		}
		if l.Queued > 0 {
			d := net.AddNode()
			g.Demand[i] = d
			net.SetSupply(d, int64(l.Queued))
			if g.Comp[i] >= 0 {
				g.localArc[i] = net.AddArc(d, g.Comp[i], 0, flow.Infinity, 0)
				g.local = append(g.local, g.localArc[i])
			}
			g.rack = append(g.rack, net.AddArc(d, r, 0, flow.Infinity, rackCost))
			g.core = append(g.core, net.AddArc(d, g.X, 0, flow.Infinity, coreCost))
		}
	}
	net.SetSupply(g.S, -queued)
	return g, nil
}

// snapshot is a period's node loads checked, in name order, with their
// queued reservations turned into tasks (Params.ProbeRatio), and what the
// waves need: each node's cost per wave and the cost past which waves
// are not added.
type snapshot struct {
	params   Params
	loads    []NodeLoad
	queued   int64   // tasks queued in the whole fleet
	waveCost []int64 // per load: ω times its task length (0 without slots)
	limit    int64   // no wave costing more than this is added
}

// takeSnapshot checks a period's node loads: names unique, counts
// non-negative and within the bounds that keep costs in int64, and some
// node with slots if any work is queued.
func takeSnapshot(nodes []NodeLoad, p Params) (snapshot, error) {
	loads := slices.Clone(nodes)
	slices.SortFunc(loads, func(a, b NodeLoad) int { return strings.Compare(a.Name, b.Name) })
	var queued int64
	var measured, sum int64 // nodes that measured a task length, and their sum
	capacity := false
	for i, l := range loads {
		if i > 0 && loads[i-1].Name == l.Name {
			return snapshot{}, fmt.Errorf("locality: node %q twice in the snapshot", l.Name)
		}
		if l.Running < 0 || l.Queued < 0 || l.TaskMillis < 0 {
			return snapshot{}, fmt.Errorf("locality: node %q has negative counts (running %d, queued %d, task ms %d)", l.Name, l.Running, l.Queued, l.TaskMillis)
		}
		if l.Slots > maxSlots || l.Running > maxQueued {
			return snapshot{}, fmt.Errorf("locality: node %q has %d slots and %d running, over %d and %d", l.Name, l.Slots, l.Running, maxSlots, maxQueued)
		}
		l.Queued = p.tasks(l.Queued)
		loads[i].Queued = l.Queued
		queued += int64(l.Queued)
		if l.Slots > 0 {
			capacity = true
		}
		if l.TaskMillis > 0 {
			measured++
			sum += min(l.TaskMillis, maxWeight)
		}
	}
	if queued > maxQueued {
		return snapshot{}, fmt.Errorf("locality: %d tasks queued, over the %d the graph's costs can sum without overflow", queued, int64(maxQueued))
	}
	if queued > 0 && !capacity {
		return snapshot{}, ErrNoCapacity
	}
	fallback := p.DefaultTaskMillis
	if measured > 0 {
		fallback = sum / measured
	}
	sn := snapshot{params: p, loads: loads, queued: queued, waveCost: make([]int64, len(loads))}
	for i, l := range loads {
		if l.Slots > 0 {
			ms := l.TaskMillis
			if ms == 0 {
				ms = fallback
			}
			sn.waveCost[i] = min(mulDivRound(p.WaitPerSecond, min(ms, maxWeight), 1000), maxCost)
		}
	}
	// No task pays more than ξ·input plus the level at which the fleet
	// has a place for every queued task and two more (the oracle's and
	// slack): it would rather cross the core to a free place at that
	// level. Waves costing more are never used, except the first of them,
	// which prices one more task exactly.
	sn.limit = p.CoreCost() + sn.fillLevel(queued+2)
	return sn, nil
}

// wave is one C → S wave arc: its capacity and cost; the last takes any
// amount of work (uncapacitated).
type wave struct {
	cap, cost int64
	last      bool
}

// waves lists the C → S wave arcs of load i (none without slots): position
// p in the node's line (0 the first task after the running ones) starts in
// wave (Running+p)/Slots. Waves are listed until they hold one task more
// than the cluster's queued work (so the marginal cost of one more task is
// exact), a wave costs more than the limit, or MaxWaves are in.
func (sn *snapshot) waves(i int) []wave { return sn.appendWaves(nil, i) }

// appendWaves appends load i's waves (see waves) to out.
func (sn *snapshot) appendWaves(out []wave, i int) []wave {
	l := sn.loads[i]
	if l.Slots <= 0 {
		return out
	}
	s, r, waveCost := int64(l.Slots), int64(l.Running), sn.waveCost[i]
	k := r / s
	var held int64
	for n := 0; ; n++ {
		capK := (k+1)*s - max(k*s, r)
		last := n == sn.params.MaxWaves-1 || held+capK > sn.queued || capCost(k, waveCost) > sn.limit
		out = append(out, wave{cap: capK, cost: capCost(k, waveCost), last: last})
		if last {
			return out
		}
		held += capK
		k++
	}
}

// fillLevel returns the least cost L at which the fleet's waves costing
// at most L hold want tasks (maxCost if they never do).
func (sn *snapshot) fillLevel(want int64) int64 {
	places := func(level int64) int64 {
		var n int64
		for i, l := range sn.loads {
			if l.Slots <= 0 {
				continue
			}
			s, r, c := int64(l.Slots), int64(l.Running), sn.waveCost[i]
			if c == 0 {
				return want // free waves hold anything
			}
			k := level / c // the last wave within the level
			if k >= maxQueued || (k+1)*s-r >= want {
				return want
			}
			n += max(0, (k+1)*s-r)
			if n >= want {
				return want
			}
		}
		return n
	}
	lo, hi := int64(0), int64(maxCost)
	for lo < hi {
		mid := lo + (hi-lo)/2
		if places(mid) >= want {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo
}
