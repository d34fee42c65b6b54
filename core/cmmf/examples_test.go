package cmmf

import (
	"fmt"
	"math"
	"slices"
	"testing"
)

// machines returns n machine types of one slot each, m1..mn: the paper's
// examples are per machine.
func machines(n int) []MachineType {
	ts := make([]MachineType, n)
	for i := range ts {
		ts[i] = MachineType{Name: fmt.Sprintf("m%d", i+1), Slots: 1}
	}
	return ts
}

// ms returns the names of machines lo..hi (1-based, inclusive) and of any
// further single machines given.
func ms(lo, hi int, more ...int) []string {
	var names []string
	for i := lo; i <= hi; i++ {
		names = append(names, fmt.Sprintf("m%d", i))
	}
	for _, i := range more {
		names = append(names, fmt.Sprintf("m%d", i))
	}
	return names
}

// plainUsers builds unweighted users u1.. with unlimited demand from their
// constraint sets.
func plainUsers(sets ...[]string) []User {
	us := make([]User, len(sets))
	for i, s := range sets {
		us[i] = User{Name: fmt.Sprintf("u%d", i+1), Weight: 1, Demand: Unlimited, Types: s}
	}
	return us
}

// example is one of the paper's worked examples (see the study notes, §1).
type example struct {
	name    string
	problem Problem
	// totals and levels per user (divisible); rounds as (level, frozen).
	totals []float64
	rounds []Round
	// matrix, when non-nil, is the forced divisible allocation: user →
	// machine name → slots (absent: 0).
	matrix []map[string]float64
	// intSorted is the sorted integer allocation vector; intExact, when
	// non-nil, the integer allocation where it is unique.
	intSorted []int64
	intExact  []int64
}

func paperExamples() []example {
	fig1 := plainUsers(ms(1, 1, 4), ms(3, 4), ms(2, 4, 6, 7), ms(5, 10))
	e9 := Problem{
		Types: machines(3),
		Users: []User{
			{Name: "u1", Weight: 1, Demand: Unlimited, Types: ms(1, 3)},
			{Name: "u2", Weight: 2, Demand: Unlimited, Types: ms(2, 3)},
		},
	}
	e10 := Problem{Types: machines(9), Users: plainUsers(ms(1, 2), ms(2, 5), ms(5, 9))}
	e10.Users[2].Weight = 2
	return []example{
		{
			// §4.2, Figure 3: C2 ⊇ {m3..m10}; the figure is missing.
			name:      "E1 Fig3",
			problem:   Problem{Types: machines(10), Users: plainUsers(ms(1, 3), ms(3, 10))},
			totals:    []float64{3, 7},
			rounds:    []Round{{3, []int{0}}, {7, []int{1}}},
			matrix:    []map[string]float64{{"m1": 1, "m2": 1, "m3": 1}, {"m4": 1, "m5": 1, "m6": 1, "m7": 1, "m8": 1, "m9": 1, "m10": 1}},
			intSorted: []int64{3, 7},
			intExact:  []int64{3, 7},
		},
		{
			name:      "E1 Fig3, C2 all",
			problem:   Problem{Types: machines(10), Users: plainUsers(ms(1, 3), ms(1, 10))},
			totals:    []float64{3, 7},
			rounds:    []Round{{3, []int{0}}, {7, []int{1}}},
			intSorted: []int64{3, 7},
			intExact:  []int64{3, 7},
		},
		{
			// Figures 1 and 4 (§4.2): integer CMMF is not unique, u1 or u2
			// holds m4; divisible splits m4.
			name:    "E2 Fig1 Fig4",
			problem: Problem{Types: machines(10), Users: fig1},
			totals:  []float64{1.5, 1.5, 3, 4},
			rounds:  []Round{{1.5, []int{0, 1}}, {3, []int{2}}, {4, []int{3}}},
			matrix: []map[string]float64{
				{"m1": 1, "m4": 0.5}, {"m3": 1, "m4": 0.5},
				{"m2": 1, "m6": 1, "m7": 1}, {"m5": 1, "m8": 1, "m9": 1, "m10": 1},
			},
			intSorted: []int64{1, 2, 3, 4},
		},
		{
			// Theorem 1's proof: each user contributed one machine.
			name:      "E4 Thm1",
			problem:   Problem{Types: machines(2), Users: plainUsers(ms(1, 2), ms(2, 2))},
			totals:    []float64{1, 1},
			rounds:    []Round{{1, []int{0, 1}}},
			matrix:    []map[string]float64{{"m1": 1}, {"m2": 1}},
			intSorted: []int64{1, 1},
			intExact:  []int64{1, 1},
		},
		{
			// §4.2.2, truthful reports.
			name:      "E5 strategy-proofness",
			problem:   Problem{Types: machines(2), Users: plainUsers(ms(1, 1), ms(1, 2))},
			totals:    []float64{1, 1},
			rounds:    []Round{{1, []int{0, 1}}},
			matrix:    []map[string]float64{{"m1": 1}, {"m2": 1}},
			intSorted: []int64{1, 1},
			intExact:  []int64{1, 1},
		},
		{
			// §5's five-machine example.
			name:      "E6 §5",
			problem:   Problem{Types: machines(5), Users: plainUsers(ms(1, 2), ms(2, 5))},
			totals:    []float64{2, 3},
			rounds:    []Round{{2, []int{0}}, {3, []int{1}}},
			matrix:    []map[string]float64{{"m1": 1, "m2": 1}, {"m3": 1, "m4": 1, "m5": 1}},
			intSorted: []int64{2, 3},
			intExact:  []int64{2, 3},
		},
		{
			// §5.1, Figure 5.
			name:      "E7 Fig5",
			problem:   Problem{Types: machines(9), Users: plainUsers(ms(1, 2), ms(2, 5), ms(5, 9))},
			totals:    []float64{2, 3, 4},
			rounds:    []Round{{2, []int{0}}, {3, []int{1}}, {4, []int{2}}},
			matrix:    []map[string]float64{{"m1": 1, "m2": 1}, {"m3": 1, "m4": 1, "m5": 1}, {"m6": 1, "m7": 1, "m8": 1, "m9": 1}},
			intSorted: []int64{2, 3, 4},
			intExact:  []int64{2, 3, 4},
		},
		{
			// §3.1: nine users on m1 only, the tenth anywhere.
			name: "E8 §3.1",
			problem: Problem{Types: machines(10), Users: plainUsers(
				ms(1, 1), ms(1, 1), ms(1, 1), ms(1, 1), ms(1, 1), ms(1, 1), ms(1, 1), ms(1, 1), ms(1, 1), ms(1, 10))},
			totals:    []float64{1.0 / 9, 1.0 / 9, 1.0 / 9, 1.0 / 9, 1.0 / 9, 1.0 / 9, 1.0 / 9, 1.0 / 9, 1.0 / 9, 9},
			rounds:    []Round{{1.0 / 9, []int{0, 1, 2, 3, 4, 5, 6, 7, 8}}, {9, []int{9}}},
			intSorted: []int64{0, 0, 0, 0, 0, 0, 0, 0, 1, 9},
		},
		{
			// Theorem 2: weights = contributions give the sharing incentive.
			name:      "E9 Thm2 weighted",
			problem:   e9,
			totals:    []float64{1, 2},
			rounds:    []Round{{1, []int{0, 1}}},
			matrix:    []map[string]float64{{"m1": 1}, {"m2": 1, "m3": 1}},
			intSorted: []int64{1, 2},
			intExact:  []int64{1, 2},
		},
		{
			name:      "E9 Thm2 unweighted",
			problem:   Problem{Types: machines(3), Users: plainUsers(ms(1, 3), ms(2, 3))},
			totals:    []float64{1.5, 1.5},
			rounds:    []Round{{1.5, []int{0, 1}}},
			intSorted: []int64{1, 2},
		},
		{
			// §4.2.1: E7 with weights (1, 1, 2).
			name:      "E10 weighted Fig5",
			problem:   e10,
			totals:    []float64{2, 7.0 / 3, 14.0 / 3},
			rounds:    []Round{{2, []int{0}}, {7.0 / 3, []int{1, 2}}},
			intSorted: []int64{2, 3, 4},
			intExact:  []int64{2, 3, 4},
		},
	}
}

// near reports whether a and b agree to 1e-9, relative for large values.
func near(a, b float64) bool {
	return math.Abs(a-b) <= 1e-9*math.Max(1, math.Max(math.Abs(a), math.Abs(b)))
}

func TestPaperExamplesDivisible(t *testing.T) {
	for _, ex := range paperExamples() {
		t.Run(ex.name, func(t *testing.T) {
			a, err := Solve(&ex.problem)
			if err != nil {
				t.Fatal(err)
			}
			for i, want := range ex.totals {
				if !near(a.Total[i], want) {
					t.Errorf("user %d: total %v, want %v", i+1, a.Total[i], want)
				}
			}
			if len(a.Rounds) != len(ex.rounds) {
				t.Fatalf("rounds %v, want %v", a.Rounds, ex.rounds)
			}
			for r, want := range ex.rounds {
				got := a.Rounds[r]
				if !near(got.Level, want.Level) || !slices.Equal(got.Frozen, want.Frozen) {
					t.Errorf("round %d: %v, want %v", r+1, got, want)
				}
			}
			for i, row := range ex.matrix {
				for ti, mt := range ex.problem.Types {
					if got := a.Matrix[i][ti]; !near(got, row[mt.Name]) {
						t.Errorf("user %d on %s: %v, want %v", i+1, mt.Name, got, row[mt.Name])
					}
				}
			}
			checkDivisible(t, &ex.problem, a)
		})
	}
}

func TestPaperExamplesInteger(t *testing.T) {
	for _, ex := range paperExamples() {
		t.Run(ex.name, func(t *testing.T) {
			a, err := SolveInteger(&ex.problem)
			if err != nil {
				t.Fatal(err)
			}
			sorted := slices.Clone(a.Total)
			slices.Sort(sorted)
			if !slices.Equal(sorted, ex.intSorted) {
				t.Errorf("sorted integer allocation %v, want %v", sorted, ex.intSorted)
			}
			if ex.intExact != nil && !slices.Equal(a.Total, ex.intExact) {
				t.Errorf("integer allocation %v, want %v", a.Total, ex.intExact)
			}
			checkInteger(t, &ex.problem, a)
		})
	}
}

// TestFigure4Alternatives pins what the paper says of Figure 4: u3 and u4
// get 3 and 4 machines, and u1 and u2 one and two in either order.
func TestFigure4Alternatives(t *testing.T) {
	p := Problem{Types: machines(10), Users: plainUsers(ms(1, 1, 4), ms(3, 4), ms(2, 4, 6, 7), ms(5, 10))}
	a, err := SolveInteger(&p)
	if err != nil {
		t.Fatal(err)
	}
	if a.Total[2] != 3 || a.Total[3] != 4 {
		t.Errorf("u3, u4 = %d, %d; want 3, 4", a.Total[2], a.Total[3])
	}
	if pair := []int64{min(a.Total[0], a.Total[1]), max(a.Total[0], a.Total[1])}; !slices.Equal(pair, []int64{1, 2}) {
		t.Errorf("u1, u2 = %d, %d; want 1 and 2 in some order", a.Total[0], a.Total[1])
	}
}

// TestMesosScenario is §7.3's cluster (4 types × 40 cores; study notes §6.5)
// through the stages of its arrival sequence, and the example.
func TestMesosScenario(t *testing.T) {
	types := []MachineType{{"standard", 40}, {"highmem", 40}, {"cluster", 40}, {"gpu", 40}}
	all := []string{"standard", "highmem", "cluster", "gpu"}
	hadoop := User{Name: "hadoop", Weight: 1, Demand: Unlimited, Types: all}
	spark := User{Name: "spark", Weight: 1, Demand: Unlimited, Types: []string{"highmem"}}
	cuda := User{Name: "cuda", Weight: 1, Demand: Unlimited, Types: []string{"gpu"}}
	mpi := User{Name: "mpi", Weight: 1, Demand: Unlimited, Types: []string{"cluster", "gpu"}}
	for _, tc := range []struct {
		name  string
		users []User
		want  []float64
	}{
		{"hadoop alone", []User{hadoop}, []float64{160}},
		{"spark joins", []User{hadoop, spark}, []float64{120, 40}},
		{"cuda joins", []User{hadoop, spark, cuda}, []float64{80, 40, 40}},
		{"mpi joins", []User{hadoop, spark, cuda, mpi}, []float64{40, 40, 40, 40}},
		{"mpi #2 after cuda", []User{hadoop, spark, mpi}, []float64{60, 40, 60}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := Problem{Types: types, Users: tc.users}
			a, err := Solve(&p)
			if err != nil {
				t.Fatal(err)
			}
			for i, want := range tc.want {
				if !near(a.Total[i], want) {
					t.Errorf("%s: %v, want %v", tc.users[i].Name, a.Total[i], want)
				}
			}
			checkDivisible(t, &p, a)
		})
	}
}
