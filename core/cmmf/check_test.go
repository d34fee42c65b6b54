package cmmf

import (
	"math"
	"testing"
)

// This file checks answers against the definitions, independently of the
// solver's code: feasibility (a valid flow within demands and slots), Pareto
// efficiency (no user short of its demand has an augmenting path) and CMMF
// optimality in its exchange form (no path moves slots from a user to one
// with a lower level, which would raise the lower one: the §4.2 definition
// for the two users and the machines moved between them).

// eligibility returns, per user, the set of usable type indices.
func eligibility(p *Problem) []map[int]bool {
	idx := map[string]int{}
	for t, mt := range p.Types {
		idx[mt.Name] = t
	}
	el := make([]map[int]bool, len(p.Users))
	for i, u := range p.Users {
		el[i] = map[int]bool{}
		for _, name := range u.Types {
			el[i][idx[name]] = true
		}
	}
	return el
}

// holders lists, per type, the users holding more than tol(type) of it.
func holders(p *Problem, x [][]float64, tol func(t int) float64) [][]int {
	h := make([][]int, len(p.Types))
	for j := range p.Users {
		for t, v := range x[j] {
			if v > tol(t) {
				h[t] = append(h[t], j)
			}
		}
	}
	return h
}

// exchangeReach returns the types user i can take slots from, moving other
// users between types (each keeps its total) along their holdings.
func exchangeReach(p *Problem, el []map[int]bool, hold [][]int, i int) []bool {
	reach := make([]bool, len(p.Types))
	var queue []int
	for t := range el[i] {
		reach[t] = true
		queue = append(queue, t)
	}
	for len(queue) > 0 {
		t := queue[0]
		queue = queue[1:]
		for _, j := range hold[t] {
			if j == i {
				continue
			}
			for t2 := range el[j] {
				if !reach[t2] {
					reach[t2] = true
					queue = append(queue, t2)
				}
			}
		}
	}
	return reach
}

// checkFlow checks x (users × types) and its totals against p, to a
// tolerance of rel times each quantity (at least one slot's worth): the
// common part of checkDivisible and checkInteger. It returns the problem's
// eligibility for further checks.
func checkFlow(t *testing.T, p *Problem, x [][]float64, total []float64, rel float64) []map[int]bool {
	t.Helper()
	el := eligibility(p)
	tol := func(v float64) float64 { return rel * math.Max(1, math.Abs(v)) }
	load := make([]float64, len(p.Types))
	for i, u := range p.Users {
		var sum float64
		for ti, v := range x[i] {
			ts := tol(float64(p.Types[ti].Slots))
			if v < -ts || (v > ts && !el[i][ti]) || math.IsNaN(v) {
				t.Errorf("user %s: %v slots of %s", u.Name, v, p.Types[ti].Name)
			}
			sum += v
			load[ti] += v
		}
		if math.Abs(sum-total[i]) > tol(total[i]) {
			t.Errorf("user %s: total %v, row sum %v", u.Name, total[i], sum)
		}
		if u.Demand != Unlimited && total[i] > float64(u.Demand)+tol(float64(u.Demand)) {
			t.Errorf("user %s: total %v over demand %d", u.Name, total[i], u.Demand)
		}
	}
	for ti, mt := range p.Types {
		if load[ti] > float64(mt.Slots)+tol(float64(mt.Slots)) {
			t.Errorf("type %s: %v slots given, %d exist", mt.Name, load[ti], mt.Slots)
		}
	}
	return el
}

// checkDivisible checks a divisible answer: a valid flow, Pareto efficient,
// and with no exchange from a higher level to a lower one, to 1e-9 of each
// quantity plus an absolute slack: the solver counts room below 1e-12 of a
// type's slots as none (see Tolerance), and exchanges can carry that to any
// user; float64 sums also round at the size of the total. A level inherits
// its user's error divided by its weight.
func checkDivisible(t *testing.T, p *Problem, a *Allocation) {
	t.Helper()
	const rel = 1e-9
	el := checkFlow(t, p, a.Matrix, a.Total, rel)
	var total, largest float64 = 0, 1
	for _, mt := range p.Types {
		total += float64(mt.Slots)
		largest = math.Max(largest, float64(mt.Slots))
	}
	big := largest + 1e-4*total // rel*big: the absolute slack in slots
	typeTol := func(ti int) float64 { return rel * math.Max(1, float64(p.Types[ti].Slots)) }
	load := make([]float64, len(p.Types))
	for i := range p.Users {
		for ti, v := range a.Matrix[i] {
			load[ti] += v
		}
		if want := a.Total[i] / p.Users[i].Weight; !near(a.Levels[i], want) {
			t.Errorf("user %s: level %v, total/weight %v", p.Users[i].Name, a.Levels[i], want)
		}
	}
	hold := holders(p, a.Matrix, typeTol)
	for i, u := range p.Users {
		reach := exchangeReach(p, el, hold, i)
		short := u.Demand == Unlimited || a.Total[i] < float64(u.Demand)-rel*(math.Max(1, float64(u.Demand))+big)
		if !short {
			continue
		}
		for ti, ok := range reach {
			if !ok {
				continue
			}
			// Room below the type's tolerance, or below the user's own
			// (its total is a sum, rounded at its size), is rounding.
			if free := float64(p.Types[ti].Slots) - load[ti]; free > typeTol(ti)+rel*math.Max(1, a.Total[i])+rel*big {
				t.Errorf("not Pareto efficient: user %s (total %v) can reach %v free slots of %s",
					u.Name, a.Total[i], free, p.Types[ti].Name)
			}
			// A level inherits its user's error in slots over its weight.
			slots := typeTol(ti) + rel*big
			for _, j := range hold[ti] {
				gap := a.Levels[j] - a.Levels[i]
				slack := rel*math.Max(1, a.Levels[j]) + slots/u.Weight + slots/p.Users[j].Weight
				if j != i && gap > slack {
					t.Errorf("not CMMF: user %s (level %v) can take %s from user %s (level %v)",
						u.Name, a.Levels[i], p.Types[ti].Name, p.Users[j].Name, a.Levels[j])
				}
			}
		}
	}
}

// checkInteger checks an integer answer: a valid flow, Pareto efficient,
// and with no single-slot exchange that improves the leximin vector of
// allocation/weight.
func checkInteger(t *testing.T, p *Problem, a *IntAllocation) {
	t.Helper()
	x := make([][]float64, len(a.Matrix))
	total := make([]float64, len(a.Total))
	for i, row := range a.Matrix {
		x[i] = make([]float64, len(row))
		for ti, v := range row {
			x[i][ti] = float64(v)
		}
		total[i] = float64(a.Total[i])
	}
	el := checkFlow(t, p, x, total, 0)
	load := make([]int64, len(p.Types))
	for i := range a.Matrix {
		for ti, v := range a.Matrix[i] {
			load[ti] += v
		}
	}
	hold := holders(p, x, func(int) float64 { return 0.5 })
	for i, u := range p.Users {
		reach := exchangeReach(p, el, hold, i)
		short := a.Total[i] < u.Demand
		wi := u.Weight
		for ti, ok := range reach {
			if !ok {
				continue
			}
			if short && load[ti] < p.Types[ti].Slots {
				t.Errorf("not Pareto efficient: user %s (%d) can reach a free slot of %s", u.Name, a.Total[i], p.Types[ti].Name)
			}
			if !short {
				continue
			}
			for _, j := range hold[ti] {
				if j == i {
					continue
				}
				wj := p.Users[j].Weight
				before := sortedPair(float64(a.Total[i])/wi, float64(a.Total[j])/wj)
				after := sortedPair(float64(a.Total[i]+1)/wi, float64(a.Total[j]-1)/wj)
				if lexLess(before[:], after[:]) {
					t.Errorf("not CMMF: moving a slot of %s from %s (%d) to %s (%d) raises the leximin vector",
						p.Types[ti].Name, p.Users[j].Name, a.Total[j], u.Name, a.Total[i])
				}
			}
		}
	}
}

func sortedPair(a, b float64) [2]float64 {
	if a > b {
		a, b = b, a
	}
	return [2]float64{a, b}
}

// lexLess reports whether a < b lexicographically. Levels of integer
// allocations are compared exactly, as the solver compares them: a slot
// out of 10^12 matters.
func lexLess(a, b []float64) bool {
	for k := range a {
		if a[k] != b[k] {
			return a[k] < b[k]
		}
	}
	return false
}
