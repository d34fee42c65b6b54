package cmmf

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"testing"
	"time"
)

// decodeProblem turns arbitrary bytes into a small problem, valid or not:
// up to 5 types and 6 users, with slot counts from 0 to 2^40 and beyond,
// weights and demands including invalid ones (0, negative, NaN, ±Inf,
// outside the bounds), unknown and repeated type names, and empty or
// duplicate names. Missing bytes read as zero.
func decodeProblem(data []byte) *Problem {
	next := func() byte {
		if len(data) == 0 {
			return 0
		}
		b := data[0]
		data = data[1:]
		return b
	}
	p := &Problem{}
	for t := range int(next() % 6) {
		var slots int64
		switch b := next(); {
		case b < 200:
			slots = int64(b % 12)
		case b < 250:
			slots = int64(1) << (b - 200) // up to 2^49: over the total limit
		default:
			slots = -int64(b - 249)
		}
		p.Types = append(p.Types, MachineType{Name: fmt.Sprintf("t%d", t), Slots: slots})
	}
	weights := []float64{1, 1, 2, 3, 0.5, 1.0 / 3, 2.5, 7, 0, -1, math.NaN(), math.Inf(1), MinWeight, MaxWeight, MinWeight / 2, MaxWeight * 2}
	for i := range int(next() % 7) {
		u := User{Name: fmt.Sprintf("u%d", i), Weight: weights[next()%16]}
		switch d := next(); {
		case d < 200:
			u.Demand = int64(d % 15)
		case d < 240:
			u.Demand = Unlimited
		case d < 250:
			u.Demand = int64(1) << (d - 200)
		default:
			u.Demand = -1
		}
		mask, flags := next(), next()
		for t := range p.Types {
			if mask&(1<<t) != 0 {
				u.Types = append(u.Types, p.Types[t].Name)
			}
		}
		switch {
		case flags&1 != 0 && i > 0:
			u.Name = p.Users[i-1].Name
		case flags&2 != 0:
			u.Name = ""
		}
		if flags&4 != 0 {
			u.Types = append(u.Types, "unknown")
		}
		if flags&8 != 0 && len(u.Types) > 0 {
			u.Types = append(u.Types, u.Types[0])
		}
		p.Users = append(p.Users, u)
	}
	return p
}

// FuzzProblem feeds decoded problems to both solvers: they must not panic,
// must agree with Validate on whether the problem is valid, and must return
// valid allocations (feasible, Pareto efficient, CMMF); on problems small
// enough the integer answer must match brute-force leximin, and with equal
// weights lie within a slot of the divisible one.
func FuzzProblem(f *testing.F) {
	// Seeds: hand-made problems in decodeProblem's layout, valid and not
	// (a negative demand, a 2^40-slot type, a negative slot count).
	f.Add([]byte{})
	f.Add([]byte{4, 2, 2, 2, 2, 4, 0, 255, 0b0011, 0, 1, 255, 0b0110, 0, 0, 5, 0b1110, 0, 3, 230, 0b1100, 0})
	f.Add([]byte{2, 1, 1, 3, 0, 230, 3, 0, 3, 230, 2, 0, 2, 7, 1, 0})
	f.Add([]byte{1, 240, 2, 5, 230, 1, 0, 4, 230, 1, 0})
	f.Add([]byte{3, 5, 0, 9, 6, 8, 3, 7, 0, 9, 5, 4, 255, 1, 2})
	f.Fuzz(func(t *testing.T, data []byte) {
		p := decodeProblem(data)
		verr := p.Validate()
		// The solvers' work is polynomial in users and types, whatever the
		// slot counts: a problem this small solves in microseconds, so
		// seconds mean a near-hang (the engine has no per-input timeout).
		start := time.Now()
		a, err := Solve(p)
		ia, ierr := SolveInteger(p)
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("solving took %v", d)
		}
		if (err == nil) != (verr == nil) || (ierr == nil) != (verr == nil) {
			t.Fatalf("Validate: %v; Solve: %v; SolveInteger: %v", verr, err, ierr)
		}
		if verr != nil {
			if !slices.ContainsFunc([]error{ErrEmptyName, ErrDuplicateName, ErrBadSlots, ErrTooManySlots, ErrBadWeight, ErrBadDemand, ErrUnknownType},
				func(e error) bool { return errors.Is(verr, e) }) {
				t.Fatalf("error %v wraps no Err* value", verr)
			}
			return
		}
		checkDivisible(t, p, a)
		checkInteger(t, p, ia)
		if small(p) {
			want := bruteLeximin(p)
			if got := sortedLevels(p, ia.Total); lexLess(got, want) || lexLess(want, got) {
				t.Errorf("integer sorted levels %v, brute force %v", got, want)
			}
		}
		equal := true
		for _, u := range p.Users {
			equal = equal && u.Weight == p.Users[0].Weight
		}
		for i, x := range a.Total {
			if equal && (float64(ia.Total[i]) < math.Floor(x+1e-6) || float64(ia.Total[i]) > math.Ceil(x-1e-6)) {
				t.Errorf("user %d: integer %d, divisible %v", i, ia.Total[i], x)
			}
		}
	})
}

// small reports whether bruteLeximin can enumerate p quickly.
func small(p *Problem) bool {
	el := eligibility(p)
	size := 1.0
	for i, u := range p.Users {
		var usable int64
		for t := range el[i] {
			usable += p.Types[t].Slots
		}
		size *= float64(min(usable, u.Demand) + 1)
	}
	return size <= 2e4
}
