package cmmf

import (
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
)

// perMachine expands every machine type of p into single-slot types, as the
// paper states its examples before coalescing (§5 "Optimization").
func perMachine(p *Problem) *Problem {
	q := &Problem{}
	parts := map[string][]string{}
	for _, mt := range p.Types {
		for k := range mt.Slots {
			name := fmt.Sprintf("%s#%d", mt.Name, k)
			q.Types = append(q.Types, MachineType{Name: name, Slots: 1})
			parts[mt.Name] = append(parts[mt.Name], name)
		}
	}
	for _, u := range p.Users {
		v := u
		v.Types = nil
		for _, name := range u.Types {
			v.Types = append(v.Types, parts[name]...)
		}
		q.Users = append(q.Users, v)
	}
	return q
}

// TestCoalescing checks that coalescing machines into types changes
// nothing: the per-type answer equals the per-machine one (divisible
// levels; integer sorted levels).
func TestCoalescing(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	for c := range 200 {
		p := smallProblem(rng, c%2 == 1)
		q := perMachine(p)
		a, err := Solve(p)
		if err != nil {
			t.Fatal(err)
		}
		b, err := Solve(q)
		if err != nil {
			t.Fatal(err)
		}
		for i := range p.Users {
			if !near(a.Levels[i], b.Levels[i]) {
				t.Errorf("case %d: user %d level %v per type, %v per machine", c, i, a.Levels[i], b.Levels[i])
			}
		}
		ia, err := SolveInteger(p)
		if err != nil {
			t.Fatal(err)
		}
		ib, err := SolveInteger(q)
		if err != nil {
			t.Fatal(err)
		}
		if x, y := sortedLevels(p, ia.Total), sortedLevels(q, ib.Total); !slices.Equal(x, y) {
			t.Errorf("case %d: integer sorted levels %v per type, %v per machine", c, x, y)
		}
	}
}

// TestWeightScaling checks that multiplying every weight by the same
// factor changes no allocation (factors are powers of two, so that integer
// ties are decided identically).
func TestWeightScaling(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for c := range 200 {
		p := smallProblem(rng, true)
		a, _ := Solve(p)
		ia, _ := SolveInteger(p)
		f := []float64{0.5, 2, 8}[c%3]
		for i := range p.Users {
			p.Users[i].Weight *= f
		}
		b, _ := Solve(p)
		ib, _ := SolveInteger(p)
		for i := range p.Users {
			if !near(a.Total[i], b.Total[i]) {
				t.Errorf("case %d: weights ×%v move user %d from %v to %v", c, f, i, a.Total[i], b.Total[i])
			}
		}
		if !slices.Equal(ia.Total, ib.Total) {
			t.Errorf("case %d: weights ×%v move the integer answer from %v to %v", c, f, ia.Total, ib.Total)
		}
	}
}

// TestSharingIncentive is Theorem 2: if every user contributes k_i
// machines it can use, has weight k_i and unlimited demand, it gets
// exactly k_i.
func TestSharingIncentive(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 9))
	for c := range 200 {
		p := &Problem{}
		n := 1 + rng.IntN(6)
		for i := range n {
			p.Types = append(p.Types, MachineType{Name: fmt.Sprintf("own%d", i), Slots: int64(1 + rng.IntN(5))})
		}
		for i := range n {
			u := User{Name: fmt.Sprintf("u%d", i), Weight: float64(p.Types[i].Slots), Demand: Unlimited, Types: []string{p.Types[i].Name}}
			for j := range n {
				if j != i && rng.IntN(2) == 0 {
					u.Types = append(u.Types, p.Types[j].Name)
				}
			}
			p.Users = append(p.Users, u)
		}
		a, _ := Solve(p)
		ia, _ := SolveInteger(p)
		for i := range p.Users {
			k := p.Types[i].Slots
			if !near(a.Total[i], float64(k)) || ia.Total[i] != k {
				t.Errorf("case %d: user %d contributed %d, gets %v (integer %d)", c, i, k, a.Total[i], ia.Total[i])
			}
		}
	}
}

// TestStrategyProof is Theorem 3: a user that misreports the types it can
// use gets no more of the ones it can use (divisible, unlimited demands as
// in the theorem's setting).
func TestStrategyProof(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 10))
	for c := range 300 {
		p := smallProblem(rng, c%2 == 1)
		for i := range p.Users {
			p.Users[i].Demand = Unlimited
		}
		if len(p.Users) == 0 {
			continue
		}
		truth, _ := Solve(p)
		liar := rng.IntN(len(p.Users))
		usable := map[int]bool{}
		for t := range eligibility(p)[liar] {
			usable[t] = true
		}
		lie := *p
		lie.Users = slices.Clone(p.Users)
		lie.Users[liar].Types = nil
		for _, mt := range p.Types {
			if rng.IntN(2) == 0 {
				lie.Users[liar].Types = append(lie.Users[liar].Types, mt.Name)
			}
		}
		got, _ := Solve(&lie)
		var useful float64
		for t := range usable {
			useful += got.Matrix[liar][t]
		}
		if useful > truth.Total[liar]+1e-9 {
			t.Errorf("case %d: user %d gets %v useful slots by lying, %v truthfully\n%+v\nlie %v",
				c, liar, useful, truth.Total[liar], p, lie.Users[liar].Types)
		}
	}
}

// TestDeterministic checks that solving twice gives the same answer, bit
// for bit: the coordinator and the simulator must agree.
func TestDeterministic(t *testing.T) {
	p := randomSubsets(rand.New(rand.NewPCG(1, 1)), 300, 20, 3000)
	a, _ := Solve(p)
	b, _ := Solve(p)
	if !reflect.DeepEqual(a, b) {
		t.Error("Solve differs between runs")
	}
	ia, _ := SolveInteger(p)
	ib, _ := SolveInteger(p)
	if !reflect.DeepEqual(ia, ib) {
		t.Error("SolveInteger differs between runs")
	}
}

// TestMediumInstances checks the answers on instances drawn like the
// benchmark's, a tenth of its size, against the definitions (checkDivisible
// and checkInteger), and with equal weights the integer answer's distance
// from the divisible one.
func TestMediumInstances(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	n := 6
	if testing.Short() {
		n = 2
	}
	for c := range n {
		gen := []func(*rand.Rand, int, int, int64) *Problem{randomSubsets, googleLike}[c%2]
		p := gen(rng, 500, 20, 5000)
		if c%3 == 2 {
			for i := range p.Users {
				p.Users[i].Weight = 1
			}
		}
		a, err := Solve(p)
		if err != nil {
			t.Fatal(err)
		}
		checkDivisible(t, p, a)
		ia, err := SolveInteger(p)
		if err != nil {
			t.Fatal(err)
		}
		checkInteger(t, p, ia)
		if c%3 != 2 {
			continue
		}
		for i, x := range a.Total {
			if y := float64(ia.Total[i]); y < math.Floor(x+1e-9) || y > math.Ceil(x-1e-9) {
				t.Errorf("case %d: user %d: integer %v, divisible %v", c, i, y, x)
			}
		}
	}
}

// TestLargeCounts checks that neither solver's work grows with the number
// of slots: a cluster of 2^40 slots solves as fast as one of 40.
func TestLargeCounts(t *testing.T) {
	p := &Problem{
		Types: []MachineType{{"big", MaxTotalSlots - 3}, {"small", 3}},
		Users: []User{
			{Name: "a", Weight: 1, Demand: Unlimited, Types: []string{"big", "small"}},
			{Name: "b", Weight: 2.5, Demand: Unlimited, Types: []string{"big"}},
			{Name: "c", Weight: 0.3, Demand: Unlimited, Types: []string{"small"}},
			{Name: "d", Weight: 1, Demand: 1 << 39, Types: []string{"big"}},
		},
	}
	a, err := Solve(p)
	if err != nil {
		t.Fatal(err)
	}
	checkDivisible(t, p, a)
	ia, err := SolveInteger(p)
	if err != nil {
		t.Fatal(err)
	}
	checkInteger(t, p, ia)
	var sum int64
	for _, x := range ia.Total {
		sum += x
	}
	if sum != MaxTotalSlots {
		t.Errorf("integer allocation uses %d of %d slots", sum, MaxTotalSlots)
	}
}
