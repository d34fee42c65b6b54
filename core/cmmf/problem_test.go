package cmmf

import (
	"errors"
	"math"
	"strings"
	"testing"
)

func TestValidate(t *testing.T) {
	ok := func() *Problem {
		return &Problem{
			Types: []MachineType{{"cpu", 4}, {"gpu", 2}},
			Users: []User{
				{Name: "a", Weight: 1, Demand: Unlimited, Types: []string{"cpu", "gpu"}},
				{Name: "b", Weight: 2, Demand: 3, Types: []string{"gpu"}},
			},
		}
	}
	for _, tc := range []struct {
		name   string
		change func(p *Problem)
		want   error  // nil: valid
		names  string // a substring the message must contain
	}{
		{"valid", func(*Problem) {}, nil, ""},
		{"no types, no users", func(p *Problem) { *p = Problem{} }, nil, ""},
		{"zero slots", func(p *Problem) { p.Types[1].Slots = 0 }, nil, ""},
		{"zero demand", func(p *Problem) { p.Users[0].Demand = 0 }, nil, ""},
		{"no usable types", func(p *Problem) { p.Users[0].Types = nil }, nil, ""},
		{"repeated type name", func(p *Problem) { p.Users[1].Types = []string{"gpu", "gpu"} }, nil, ""},
		{"empty type name", func(p *Problem) { p.Types[0].Name = "" }, ErrEmptyName, "machine type 0"},
		{"duplicate type", func(p *Problem) { p.Types[1].Name = "cpu" }, ErrDuplicateName, `"cpu"`},
		{"negative slots", func(p *Problem) { p.Types[1].Slots = -1 }, ErrBadSlots, `"gpu"`},
		{"too many slots", func(p *Problem) { p.Types[1].Slots = MaxTotalSlots }, ErrTooManySlots, `"gpu"`},
		{"empty user name", func(p *Problem) { p.Users[1].Name = "" }, ErrEmptyName, "user 1"},
		{"duplicate user", func(p *Problem) { p.Users[1].Name = "a" }, ErrDuplicateName, `"a"`},
		{"zero weight", func(p *Problem) { p.Users[1].Weight = 0 }, ErrBadWeight, `"b"`},
		{"negative weight", func(p *Problem) { p.Users[1].Weight = -2 }, ErrBadWeight, `"b"`},
		{"NaN weight", func(p *Problem) { p.Users[1].Weight = math.NaN() }, ErrBadWeight, "NaN"},
		{"infinite weight", func(p *Problem) { p.Users[1].Weight = math.Inf(1) }, ErrBadWeight, `"b"`},
		{"tiny weight", func(p *Problem) { p.Users[1].Weight = MinWeight / 2 }, ErrBadWeight, `"b"`},
		{"negative demand", func(p *Problem) { p.Users[0].Demand = -1 }, ErrBadDemand, `"a"`},
		{"unknown type", func(p *Problem) { p.Users[1].Types = []string{"tpu"} }, ErrUnknownType, `"tpu"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := ok()
			tc.change(p)
			err := p.Validate()
			if !errors.Is(err, tc.want) || (err == nil) != (tc.want == nil) {
				t.Fatalf("Validate() = %v, want %v", err, tc.want)
			}
			if err != nil && !strings.Contains(err.Error(), tc.names) {
				t.Errorf("error %q does not name %s", err, tc.names)
			}
			_, serr := Solve(p)
			_, ierr := SolveInteger(p)
			if !errors.Is(serr, tc.want) || !errors.Is(ierr, tc.want) || (serr == nil) != (err == nil) || (ierr == nil) != (err == nil) {
				t.Errorf("Solve: %v, SolveInteger: %v; Validate: %v", serr, ierr, err)
			}
		})
	}
}

// TestEmptyAndDegenerate covers problems with nothing to share.
func TestEmptyAndDegenerate(t *testing.T) {
	for _, p := range []*Problem{
		{},
		{Types: []MachineType{{"a", 3}}},
		{Users: []User{{Name: "u", Weight: 1, Demand: Unlimited}}},
		{Types: []MachineType{{"a", 0}}, Users: []User{{Name: "u", Weight: 1, Demand: Unlimited, Types: []string{"a"}}}},
		{Types: []MachineType{{"a", 5}}, Users: []User{{Name: "u", Weight: 1, Demand: 0, Types: []string{"a"}}}},
	} {
		a, err := Solve(p)
		if err != nil {
			t.Fatal(err)
		}
		ia, err := SolveInteger(p)
		if err != nil {
			t.Fatal(err)
		}
		for i := range p.Users {
			if a.Total[i] != 0 || ia.Total[i] != 0 {
				t.Errorf("%+v: user %d gets %v / %d, want 0", p, i, a.Total[i], ia.Total[i])
			}
		}
		checkDivisible(t, p, a)
		checkInteger(t, p, ia)
	}
}
