package locality

import (
	"fmt"
	"math"
	"math/bits"
	"time"
)

// Level is how far from its preferred nodes a task may run. Levels only
// ever widen over a task's life: Node, then Rack, then Cluster.
type Level int

// The levels, narrowest first, so that a wider level compares greater.
const (
	// NodeLevel: only the task's preferred nodes (and preferred racks,
	// if it named any), as the client asked.
	NodeLevel Level = iota
	// RackLevel: also any node in the racks of its preferred nodes and in
	// its preferred racks; the input crosses a rack switch.
	RackLevel
	// ClusterLevel: any node; the input crosses the core switch.
	ClusterLevel
)

// String names the level as metrics and logs label it.
func (l Level) String() string {
	switch l {
	case NodeLevel:
		return "node"
	case RackLevel:
		return "rack"
	case ClusterLevel:
		return "cluster"
	}
	return fmt.Sprintf("level(%d)", int(l))
}

// Unknown is the cost of a level the prices say nothing about: none of the
// task's preferred nodes, or none of its racks, has a price. It is larger
// than any cost Choose computes from prices, so such a level never wins.
const Unknown int64 = math.MaxInt64

// Costs are what one task would cost at each level under a set of prices,
// in the prices' units: the marginal cost of one more task at the cheapest
// place of that level plus moving the task's input there.
type Costs struct {
	// Node is the lowest price among the task's priced preferred nodes,
	// or Unknown.
	Node int64
	// Rack is ψ·GB of input plus the lowest price among the task's priced
	// racks, or Unknown.
	Rack int64
	// Cluster is ξ·GB of input plus the cluster price.
	Cluster int64
}

// Of returns the cost of level l.
func (c Costs) Of(l Level) int64 {
	switch l {
	case NodeLevel:
		return c.Node
	case RackLevel:
		return c.Rack
	}
	return c.Cluster
}

// Choose picks where a task with preferences should be offered now: the
// level with the lowest cost under p. A tie goes to the wider level: the
// coordinator's flow caps a busy node's price at its rack's price plus
// ψ·input (one more task there would push a queued one to a rack-mate),
// so equality is exactly how the prices say the node is full and the
// marginal task is better served elsewhere; while the node has room its
// price is strictly lower and the task stays. nodes are the gossip member names
// of the task's live preferred nodes; racks are the racks those nodes are
// in together with the task's preferred racks; inputBytes is how much the
// task reads.
//
// ok is false when the prices say nothing about the task's preferred
// nodes (none of them is priced): there is no evidence that waiting for
// them is too dear, so the caller keeps its own rule (Sparrow's delay)
// rather than trusting a comparison against Unknown. The caller also never
// narrows a task that is already wider than the level returned.
func Choose(p Prices, nodes, racks []string, inputBytes int64) (l Level, c Costs, ok bool) {
	c = Costs{Node: Unknown, Rack: Unknown}
	for _, n := range nodes {
		if v, priced := p.Node[n]; priced && v < c.Node {
			c.Node = v
		}
	}
	rackMin := Unknown
	for _, r := range racks {
		if v, priced := p.Rack[r]; priced && v < rackMin {
			rackMin = v
		}
	}
	if rackMin != Unknown {
		c.Rack = satAdd(Transfer(p.RackPerGB, inputBytes), rackMin)
	}
	c.Cluster = satAdd(Transfer(p.CorePerGB, inputBytes), p.Cluster)
	if c.Node == Unknown {
		return NodeLevel, c, false
	}
	l = NodeLevel
	if c.Rack != Unknown && c.Rack <= c.Of(l) {
		l = RackLevel
	}
	if c.Cluster != Unknown && c.Cluster <= c.Of(l) {
		l = ClusterLevel
	}
	return l, c, true
}

// Transfer is the cost of moving inputBytes at perGB per GB (10⁹ bytes),
// rounded to nearest as the coordinator's graph rounds it (Params.RackCost),
// exact for any inputs, and saturating at Unknown rather than
// overflowing. Negative inputs count as zero.
func Transfer(perGB, inputBytes int64) int64 {
	if perGB <= 0 || inputBytes <= 0 {
		return 0
	}
	hi, lo := bits.Mul64(uint64(perGB), uint64(inputBytes))
	var carry uint64
	lo, carry = bits.Add64(lo, GB/2, 0)
	hi += carry
	if hi >= GB {
		return Unknown // the quotient would not fit in 64 bits
	}
	q, _ := bits.Div64(hi, lo, GB)
	if q > math.MaxInt64 {
		return Unknown
	}
	return int64(q)
}

// satAdd adds two costs, saturating at Unknown.
func satAdd(a, b int64) int64 {
	if a == Unknown || b == Unknown {
		return Unknown
	}
	s := a + b
	switch {
	case a > 0 && b > 0 && s < 0:
		return Unknown
	case a < 0 && b < 0 && s >= 0:
		return math.MinInt64
	}
	return s
}

// DelayLevel is the level Sparrow-style delay relaxation has reached for
// a task with threshold delay that has waited elapsed since submission:
// NodeLevel before one delay, RackLevel before two, ClusterLevel from
// then on. A non-positive delay never relaxes (strict preferences).
func DelayLevel(elapsed, delay time.Duration) Level {
	if delay <= 0 || elapsed < delay {
		return NodeLevel
	}
	if elapsed < 2*delay {
		return RackLevel
	}
	return ClusterLevel
}

// DelayStep is how long after submission a task at level l widens by
// delay to the next level: one delay to leave NodeLevel, two to leave
// RackLevel. It is meaningless at ClusterLevel, which has no next level.
func DelayStep(l Level, delay time.Duration) time.Duration {
	return delay * time.Duration(l+1)
}
