package cmmf

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// bruteLeximin returns the best sorted vector of total/weight over every
// integer allocation of p, by enumerating users' totals and checking each
// vector with Hall's condition (every set of users fits in the slots of the
// types its members may use). For tiny problems only.
func bruteLeximin(p *Problem) []float64 {
	el := eligibility(p)
	n := len(p.Users)
	hi := make([]int64, n)
	for i, u := range p.Users {
		for t := range el[i] {
			hi[i] += p.Types[t].Slots
		}
		hi[i] = min(hi[i], u.Demand)
	}
	room := make([]int64, 1<<n) // slots usable by each set of users
	for s := 1; s < 1<<n; s++ {
		seen := map[int]bool{}
		for i := range n {
			if s&(1<<i) != 0 {
				for t := range el[i] {
					if !seen[t] {
						seen[t] = true
						room[s] += p.Types[t].Slots
					}
				}
			}
		}
	}
	var best []float64
	y := make([]int64, n)
	var walk func(i int)
	walk = func(i int) {
		if i == n {
			for s := 1; s < 1<<n; s++ {
				var sum int64
				for j := range n {
					if s&(1<<j) != 0 {
						sum += y[j]
					}
				}
				if sum > room[s] {
					return
				}
			}
			v := sortedLevels(p, y)
			if best == nil || lexLess(best, v) {
				best = v
			}
			return
		}
		for y[i] = 0; y[i] <= hi[i]; y[i]++ {
			walk(i + 1)
		}
	}
	walk(0)
	return best
}

func sortedLevels(p *Problem, y []int64) []float64 {
	v := make([]float64, len(y))
	for i, x := range y {
		v[i] = float64(x) / p.Users[i].Weight
	}
	slices.Sort(v)
	return v
}

// TestIntegerAgainstBruteForce checks SolveInteger's answer on random tiny
// instances: its sorted level vector is the best over all integer
// allocations; with equal weights every user is within one slot of the
// divisible answer (⌊x*⌋ ≤ y ≤ ⌈x*⌉, Frank and Murota's proximity for
// integral base polyhedra, which the rounding relies on).
func TestIntegerAgainstBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(12, 2))
	cases := 400
	if testing.Short() {
		cases = 100
	}
	for c := range cases {
		weighted := c%2 == 1
		p := smallProblem(rng, weighted)
		a, err := SolveInteger(p)
		if err != nil {
			t.Fatal(err)
		}
		checkInteger(t, p, a)
		want := bruteLeximin(p)
		if got := sortedLevels(p, a.Total); lexLess(got, want) {
			t.Errorf("case %d: sorted levels %v, brute force %v\n%+v", c, got, want, p)
		}
		if weighted {
			continue
		}
		div, err := Solve(p)
		if err != nil {
			t.Fatal(err)
		}
		for i, x := range div.Total {
			lo, hi := int64(math.Floor(x+1e-9)), int64(math.Ceil(x-1e-9))
			if a.Total[i] < lo || a.Total[i] > hi {
				t.Errorf("case %d: user %d gets %d, divisible %v", c, i, a.Total[i], x)
			}
		}
	}
}

// greedyReference is the integer rule SolveInteger implements, run the slow
// and obvious way: repeatedly give one slot to the user first in the order
// (level, weight, index) among those that can still grow, where "can grow"
// is Hall's condition checked over every set of users.
func greedyReference(p *Problem) []int64 {
	el := eligibility(p)
	n := len(p.Users)
	room := make([]int64, 1<<n)
	for s := 1; s < 1<<n; s++ {
		seen := map[int]bool{}
		for i := range n {
			if s&(1<<i) != 0 {
				for t := range el[i] {
					if !seen[t] {
						seen[t] = true
						room[s] += p.Types[t].Slots
					}
				}
			}
		}
	}
	y := make([]int64, n)
	fits := func() bool {
		for s := 1; s < 1<<n; s++ {
			var sum int64
			for i := range n {
				if s&(1<<i) != 0 {
					sum += y[i]
				}
			}
			if sum > room[s] {
				return false
			}
		}
		return true
	}
	stuck := make([]bool, n)
	for {
		best := -1
		for i, u := range p.Users {
			if stuck[i] || y[i] >= u.Demand {
				continue
			}
			if best < 0 {
				best = i
				continue
			}
			li, lb := float64(y[i])/u.Weight, float64(y[best])/p.Users[best].Weight
			if li < lb || (li == lb && u.Weight < p.Users[best].Weight) {
				best = i
			}
		}
		if best < 0 {
			return y
		}
		y[best]++
		if !fits() {
			y[best]--
			stuck[best] = true
		}
	}
}

// TestIntegerMatchesGreedy checks that the bulk rounds of SolveInteger
// grant exactly what the one-slot-at-a-time greedy grants, on instances
// with many slots per user so that the bulk steps do most of the work.
func TestIntegerMatchesGreedy(t *testing.T) {
	rng := rand.New(rand.NewPCG(12, 3))
	cases := 300
	if testing.Short() {
		cases = 60
	}
	for c := range cases {
		p := smallProblem(rng, c%3 != 0)
		for ti := range p.Types {
			p.Types[ti].Slots *= int64(1 + rng.IntN(40))
		}
		for i := range p.Users {
			if p.Users[i].Demand != Unlimited {
				p.Users[i].Demand *= int64(1 + rng.IntN(40))
			}
		}
		a, err := SolveInteger(p)
		if err != nil {
			t.Fatal(err)
		}
		if want := greedyReference(p); !slices.Equal(a.Total, want) {
			t.Errorf("case %d: %v, greedy %v\n%+v", c, a.Total, want, p)
		}
		checkInteger(t, p, a)
	}
}
