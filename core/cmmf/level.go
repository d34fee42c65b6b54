package cmmf

import "math"

// capped is an active user as the level equation sees it: at level λ it
// asks for min(demand, weight·λ) slots.
type capped struct {
	demand, weight float64
}

// breakpoint is the level at which c's demand is met (+Inf if never).
func (c capped) breakpoint() float64 { return c.demand / c.weight }

// solveLevel returns the largest λ ≥ 0 with
//
//	Σ_i min(demand_i, weight_i·λ) ≤ room,
//
// for users sorted by breakpoint; this is the Newton step of a round: room
// is a cut's slots minus its frozen users' totals, and the answer is the
// level at which the cut becomes tight. The left side is continuous,
// non-decreasing and piecewise linear with a kink at each breakpoint, so
// one sweep finds the piece where it crosses room and solves that piece's
// linear equation exactly.
//
// If every user's demand fits in room the left side never exceeds it; the
// answer is then the largest breakpoint (every demand met), or +Inf if
// there are no users. suffix is scratch space.
func solveLevel(users []capped, room float64, suffix []float64) (float64, []float64) {
	n := len(users)
	if n == 0 {
		return math.Inf(1), suffix
	}
	// suffix[k] = Σ_{j≥k} weight_j, summed from the end rather than by
	// subtraction so that it carries no cancellation error.
	suffix = resize(suffix, n+1)
	suffix[n] = 0
	for k := n - 1; k >= 0; k-- {
		suffix[k] = suffix[k+1] + users[k].weight
	}
	room = math.Max(room, 0)
	var met float64 // Σ demand of users 0..k-1, whose demands are met
	for k, u := range users {
		b := u.breakpoint()
		if math.IsInf(b, 1) || met+b*suffix[k] > room {
			// The crossing lies in the piece where users k.. are uncapped.
			return math.Max(0, (room-met)/suffix[k]), suffix
		}
		met += u.demand
	}
	return users[n-1].breakpoint(), suffix
}

// stepper is an active user as the integer level equation sees it: below
// level K it has asked for every slot whose turn comes below K. Its k-th
// slot's turn is at level (k-1)/weight, its level before receiving it,
// computed in float64 exactly as serveTies compares levels, so that
// both agree on ties.
type stepper struct {
	y, demand int64 // slots held, and the most it may hold
	weight    float64
}

// asked is how many slots s has asked for below level k: the number of
// m ≥ 0 with m/weight < k, at least s.y and at most s.demand.
func (s stepper) asked(k float64) int64 {
	if s.weight*k >= float64(s.demand) {
		// At or past the turn of its last slot (this also covers k = +Inf
		// and keeps the float-to-int conversion below in range).
		if float64(s.demand-1)/s.weight < k {
			return s.demand
		}
	}
	m := max(int64(math.Ceil(s.weight*k))-1, 0)
	// m/weight rounds, so the estimate may be one off either way; division
	// by a positive number is monotone, so stepping settles it.
	for m > 0 && float64(m-1)/s.weight >= k {
		m--
	}
	for float64(m)/s.weight < k {
		m++
	}
	return min(s.demand, max(s.y, m))
}

// askedSum is Σ asked(k), stopping early once it exceeds limit.
func askedSum(users []stepper, k float64, limit int64) int64 {
	var sum int64
	for _, s := range users {
		sum += s.asked(k)
		if sum > limit {
			break
		}
	}
	return sum
}

// solveStep returns the largest level k in [lo, hi) with
//
//	Σ_i asked_i(k) ≤ room,
//
// given that lo satisfies it and hi does not: the integer counterpart of
// solveLevel, for a left side that is a step function. The answer is a
// turn (some m/weight_i): just above it a user's next slot is asked for.
// Bisection on the float64's bits finds it exactly in at most 64 steps
// (non-negative floats order like their bit patterns).
func solveStep(users []stepper, room int64, lo, hi float64) float64 {
	a, b := math.Float64bits(lo), math.Float64bits(hi)
	for b-a > 1 {
		mid := a + (b-a)/2
		if askedSum(users, math.Float64frombits(mid), room) <= room {
			a = mid
		} else {
			b = mid
		}
	}
	return math.Float64frombits(a)
}
