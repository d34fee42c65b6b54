package cmmf

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/optimize/convex/lp"
)

// This file is an independent oracle for the divisible solver: the paper's
// Algorithm 1 (§5.1) with its typos corrected (study notes §2), weighted
// (active rows ask weight·M) and with demands (a user's total stays below
// its demand, and a user whose demand is met freezes), each LP solved by
// gonum's simplex. It shares no code with the solver.

// lpRow is one constraint Σ coef·x (+ lCoef·M) − sign·slack = rhs, where
// the slack is ≥ 0 and sign is -1 for ≤ rows and +1 for ≥ rows.
type lpRow struct {
	coef  map[int]float64 // variable index → coefficient
	lCoef float64         // coefficient of the level variable M, if any
	sign  float64
	rhs   float64
}

// lpModel is the oracle's variables: x[i][t] for every usable pair, and
// optionally the level M.
type lpModel struct {
	p     *Problem
	el    []map[int]bool
	index map[[2]int]int // (user, type) → variable
	n     int
}

func newModel(p *Problem) *lpModel {
	m := &lpModel{p: p, el: eligibility(p), index: map[[2]int]int{}}
	for i := range p.Users {
		for t := range p.Types {
			if m.el[i][t] {
				m.index[[2]int{i, t}] = m.n
				m.n++
			}
		}
	}
	return m
}

// userRow is Σ_t x[i][t] with the given sign and right-hand side.
func (m *lpModel) userRow(i int, sign, rhs float64) lpRow {
	r := lpRow{coef: map[int]float64{}, sign: sign, rhs: rhs}
	for t := range m.p.Types {
		if v, ok := m.index[[2]int{i, t}]; ok {
			r.coef[v] = 1
		}
	}
	return r
}

// base is the rows every LP has: type capacities and finite demands.
func (m *lpModel) base() []lpRow {
	var rows []lpRow
	for t, mt := range m.p.Types {
		r := lpRow{coef: map[int]float64{}, sign: -1, rhs: float64(mt.Slots)}
		for i := range m.p.Users {
			if v, ok := m.index[[2]int{i, t}]; ok {
				r.coef[v] = 1
			}
		}
		rows = append(rows, r)
	}
	for i, u := range m.p.Users {
		if u.Demand != Unlimited {
			rows = append(rows, m.userRow(i, -1, float64(u.Demand)))
		}
	}
	return rows
}

// solve maximises obj·x (+ M if withLevel) subject to rows, returning the
// optimum.
func (m *lpModel) solve(rows []lpRow, obj map[int]float64, withLevel bool) (float64, error) {
	nv := m.n
	level := -1
	if withLevel {
		level = nv
		nv++
	}
	cols := nv + len(rows) // one slack per row keeps A of full row rank
	a := mat.NewDense(len(rows), cols, nil)
	b := make([]float64, len(rows))
	for k, r := range rows {
		for v, c := range r.coef {
			a.Set(k, v, c)
		}
		if withLevel {
			a.Set(k, level, r.lCoef)
		}
		a.Set(k, nv+k, -r.sign)
		b[k] = r.rhs
	}
	c := make([]float64, cols)
	for v, w := range obj {
		c[v] = -w
	}
	if withLevel {
		c[level] = -1
	}
	// A column of zeros is an unused variable: give it a harmless row.
	for v := 0; v < nv; v++ {
		if mat.Norm(a.ColView(v), 1) == 0 {
			return 0, fmt.Errorf("oracle: variable %d in no row", v)
		}
	}
	opt, _, err := lp.Simplex(c, a, b, 1e-12, nil)
	return -opt, err
}

// oracleLevels returns each user's level (total/weight) by progressive
// filling with one LP per round and one per active user per round.
func oracleLevels(p *Problem) ([]float64, error) {
	m := newModel(p)
	n := len(p.Users)
	frozen := make([]bool, n)
	value := make([]float64, n)
	left := n
	for left > 0 {
		rows := m.base()
		for i, u := range p.Users {
			if frozen[i] {
				rows = append(rows, m.userRow(i, 1, value[i]))
			} else {
				r := m.userRow(i, 1, 0)
				r.lCoef = -u.Weight
				rows = append(rows, r)
			}
		}
		level, err := m.solve(rows, nil, true)
		if err != nil {
			return nil, fmt.Errorf("round LP: %w", err)
		}
		// Saturation test (Algorithm 1's SATURATED, corrected): pin every
		// active user at weight·level and maximise one of them.
		pinned := m.base()
		for i, u := range p.Users {
			v := value[i]
			if !frozen[i] {
				v = u.Weight * level
			}
			pinned = append(pinned, m.userRow(i, 1, v))
		}
		var stop []int
		for i, u := range p.Users {
			if frozen[i] {
				continue
			}
			ask := u.Weight * level
			if u.Demand != Unlimited && float64(u.Demand) <= ask+1e-9 {
				stop = append(stop, i)
				value[i] = float64(u.Demand)
				continue
			}
			best, err := m.solve(pinned, m.userRow(i, 1, 0).coef, false)
			if err != nil {
				return nil, fmt.Errorf("saturation LP for user %d: %w", i, err)
			}
			if best <= ask+1e-7 {
				stop = append(stop, i)
				value[i] = ask
			}
		}
		if len(stop) == 0 {
			return nil, errors.New("oracle: a round froze nobody")
		}
		for _, i := range stop {
			frozen[i] = true
			left--
		}
	}
	levels := make([]float64, n)
	for i, u := range p.Users {
		levels[i] = value[i] / u.Weight
	}
	return levels, nil
}

// smallProblem draws a random instance small enough for the oracles: up to
// 4 types of up to 5 slots, up to 5 users with weights from a small set (so
// that levels tie often) or arbitrary, demands unlimited or small.
func smallProblem(rng *rand.Rand, weighted bool) *Problem {
	p := &Problem{}
	nt := 1 + rng.IntN(4)
	for t := range nt {
		p.Types = append(p.Types, MachineType{Name: fmt.Sprintf("t%d", t), Slots: int64(rng.IntN(6))})
	}
	for i := range 1 + rng.IntN(5) {
		u := User{Name: fmt.Sprintf("u%d", i), Weight: 1, Demand: Unlimited}
		if weighted {
			u.Weight = []float64{0.5, 1, 1, 2, 3, 0.3 + 3*rng.Float64()}[rng.IntN(6)]
		}
		if rng.IntN(3) == 0 {
			u.Demand = int64(rng.IntN(7))
		}
		for t := range nt {
			if rng.IntN(2) == 0 {
				u.Types = append(u.Types, p.Types[t].Name)
			}
		}
		p.Users = append(p.Users, u)
	}
	return p
}

// TestAgainstLPOracle compares the solver's levels with the LP oracle's on
// random small instances: they must agree to 1e-9 relative.
func TestAgainstLPOracle(t *testing.T) {
	rng := rand.New(rand.NewPCG(12, 1))
	cases := 400
	if testing.Short() {
		cases = 100
	}
	for c := range cases {
		p := smallProblem(rng, c%2 == 1)
		want, err := oracleLevels(p)
		if err != nil {
			t.Fatalf("case %d: %v\n%+v", c, err, p)
		}
		a, err := Solve(p)
		if err != nil {
			t.Fatalf("case %d: %v", c, err)
		}
		for i := range p.Users {
			if !near(a.Levels[i], want[i]) {
				t.Errorf("case %d: user %d level %v, oracle %v\n%+v", c, i, a.Levels[i], want[i], p)
			}
		}
		checkDivisible(t, p, a)
	}
}
