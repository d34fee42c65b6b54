package flow

import (
	"errors"
	"fmt"
	"math/bits"
)

// ErrInfeasible reports that no flow meets every supply, demand and arc
// bound. Solve wraps it with the amount of supply it could not route.
var ErrInfeasible = errors.New("flow: infeasible problem: no flow meets all supplies, demands and arc bounds")

// ErrInvalid reports a malformed network: an arc with a node out of range or
// a lower bound above its upper bound, supplies that do not sum to zero, or
// numbers so large that costs or potentials could overflow int64.
var ErrInvalid = errors.New("flow: invalid network")

// ErrUnbounded reports a cycle of negative total cost whose arcs are all
// uncapacitated (Upper >= Infinity): the cost has no lower bound.
var ErrUnbounded = errors.New("flow: unbounded problem: a negative-cost cycle of uncapacitated arcs")

// Infinity is the smallest upper bound that means "uncapacitated". Such an
// arc is given the largest capacity any optimal flow can need (the total
// supply plus every finite capacity) when it is solved.
const Infinity int64 = 1 << 60

// limit bounds every magnitude the solver computes with (costs times flows,
// potentials, supplies), leaving headroom below MaxInt64 for sums of two.
const limit = 1 << 61

// checked is the validated, bound-shifted view of a network that the
// solver runs on: caps are Upper-Lower with Infinity resolved, and excess
// starts at the supplies adjusted for the shipped lower bounds.
type checked struct {
	caps   []int64
	excess []int64
	maxAbs int64 // largest |cost| on an arc of positive capacity
	hasInf bool  // some arc was uncapacitated
}

// validate checks g and returns the transformed capacities and excesses.
func validate(g *Network) (checked, error) {
	n := len(g.supply)
	var c checked
	c.caps = make([]int64, len(g.arcs))
	c.excess = append([]int64(nil), g.supply...)
	var sum, absSupply uint64
	var neg bool
	for v, s := range g.supply {
		if s <= -limit || s >= limit {
			return c, fmt.Errorf("%w: node %d: supply %d is too large (limit ±2^61)", ErrInvalid, v, s)
		}
		sum += uint64(s)
		if s > 0 {
			absSupply += uint64(s)
		}
	}
	if int64(sum) != 0 {
		return c, fmt.Errorf("%w: supplies sum to %d, not 0", ErrInvalid, int64(sum))
	}
	var finite uint64 // sum of finite capacities, for resolving Infinity
	for i, a := range g.arcs {
		if a.From < 0 || a.From >= n || a.To < 0 || a.To >= n {
			return c, fmt.Errorf("%w: arc %d: node %d->%d out of range 0..%d", ErrInvalid, i, a.From, a.To, n-1)
		}
		if a.Lower > a.Upper {
			return c, fmt.Errorf("%w: arc %d (%d->%d): lower bound %d above upper bound %d", ErrInvalid, i, a.From, a.To, a.Lower, a.Upper)
		}
		if a.Lower <= -limit || a.Lower >= limit || a.Upper <= -limit || a.Cost <= -limit || a.Cost >= limit {
			return c, fmt.Errorf("%w: arc %d (%d->%d): bound or cost too large (limit ±2^61)", ErrInvalid, i, a.From, a.To)
		}
		if a.Upper >= Infinity {
			c.hasInf = true
			if a.Cost < 0 {
				neg = true
			}
			continue
		}
		cp := a.Upper - a.Lower
		c.caps[i] = cp
		finite += uint64(cp)
		if finite >= limit {
			return c, fmt.Errorf("%w: arc capacities sum past 2^61", ErrInvalid)
		}
		if a.Lower != 0 {
			c.excess[a.From] -= a.Lower
			c.excess[a.To] += a.Lower
			if c.excess[a.From] <= -limit || c.excess[a.To] >= limit {
				return c, fmt.Errorf("%w: arc %d: lower bound pushes a node's supply past 2^61", ErrInvalid, i)
			}
		}
	}
	if c.hasInf {
		if neg {
			if err := negativeInfiniteCycle(g); err != nil {
				return c, err
			}
		}
		// Any optimal flow decomposes into paths, each carrying supply, and
		// cycles, each through some finite arc; so no uncapacitated arc needs
		// more than the total supply plus the finite capacities.
		big := absSupply + finite
		for _, a := range g.arcs {
			if a.Upper < Infinity {
				continue
			}
			lb := a.Lower
			if lb < 0 {
				lb = 0
			}
			big += uint64(lb)
		}
		// Twice that, plus one, so that an optimal flow never needs to
		// saturate an uncapacitated arc and complementary slackness can
		// hold against the true (infinite) bound.
		big = 2*big + 1
		if big >= limit {
			return c, fmt.Errorf("%w: supplies and capacities too large to bound the uncapacitated arcs", ErrInvalid)
		}
		for i, a := range g.arcs {
			if a.Upper < Infinity {
				continue
			}
			c.caps[i] = int64(big)
			if a.Lower != 0 {
				c.excess[a.From] -= a.Lower
				c.excess[a.To] += a.Lower
			}
		}
	}
	// Overflow: the total |cost| x capacity bounds every partial cost sum,
	// and n x max|cost| bounds every potential the shortest paths produce.
	var hi, lo uint64
	for i, a := range g.arcs {
		cost := a.Cost
		if cost < 0 {
			cost = -cost
		}
		if c.caps[i] == 0 && a.Lower == 0 {
			continue
		}
		if cost > c.maxAbs {
			c.maxAbs = cost
		}
		fl := uint64(c.caps[i])
		if a.Lower < 0 {
			fl += uint64(-a.Lower)
		} else {
			fl += uint64(a.Lower)
		}
		h, l := bits.Mul64(uint64(cost), fl)
		var carry uint64
		lo, carry = bits.Add64(lo, l, 0)
		hi += h + carry
		if hi != 0 || lo >= limit {
			return c, fmt.Errorf("%w: sum of |cost| x capacity passes 2^61, costs could overflow int64", ErrInvalid)
		}
	}
	if h, l := bits.Mul64(uint64(c.maxAbs), uint64(n+1)); h != 0 || l >= limit {
		return c, fmt.Errorf("%w: %d nodes x max |cost| %d passes 2^61, potentials could overflow int64", ErrInvalid, n, c.maxAbs)
	}
	return c, nil
}

// negativeInfiniteCycle looks for a negative cycle among the uncapacitated
// arcs with Bellman-Ford, and returns ErrUnbounded if there is one.
func negativeInfiniteCycle(g *Network) error {
	n := len(g.supply)
	d := make([]int64, n) // all zero: a virtual source to every node
	for round := 0; round <= n; round++ {
		changed := false
		for _, a := range g.arcs {
			if a.Upper < Infinity {
				continue
			}
			if nd := d[a.From] + a.Cost; nd < d[a.To] {
				d[a.To] = nd
				changed = true
			}
		}
		if !changed {
			return nil
		}
	}
	return ErrUnbounded
}
