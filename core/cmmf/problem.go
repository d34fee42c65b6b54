package cmmf

import (
	"errors"
	"fmt"
	"math"
)

// Unlimited is the demand of a user that would take every slot it may use
// (the paper's "infinite demand", which its Theorems 2 and 4 assume).
const Unlimited int64 = math.MaxInt64

// Limits on the input. They keep every quantity the solver handles exactly
// representable, or nearly so, in a float64, which is what makes the
// documented tolerance (see Tolerance) meaningful.
const (
	// MaxTotalSlots bounds the sum of all machine types' slots (2^40, about
	// 10^12): float64 holds integers exactly up to 2^53, and the margin
	// absorbs the rounding of sums of flows.
	MaxTotalSlots int64 = 1 << 40
	// MinWeight and MaxWeight bound users' weights. Levels are slots divided
	// by weights, and allocations are exact to about Tolerance × slots
	// (see Tolerance): with weights 10^12 apart, the lightest user's share
	// would be no larger than that error.
	MinWeight = 1e-6
	MaxWeight = 1e6
)

// Errors returned by Validate (and so by Solve and SolveInteger), wrapped
// with the name of the offending type or user. Test with errors.Is.
var (
	ErrEmptyName     = errors.New("empty name")
	ErrDuplicateName = errors.New("duplicate name")
	ErrBadSlots      = errors.New("slots must be >= 0")
	ErrTooManySlots  = errors.New("total slots exceed MaxTotalSlots")
	ErrBadWeight     = errors.New("weight must be a number in [MinWeight, MaxWeight]")
	ErrBadDemand     = errors.New("demand must be >= 0")
	ErrUnknownType   = errors.New("unknown machine type")
)

// MachineType is a class of identical slots: machines with the same
// attributes, so that every user may use either all of them or none. The
// paper coalesces machines this way (§5) because clusters have far fewer
// configurations than machines, and the solver's cost grows with types, not
// machines.
type MachineType struct {
	// Name identifies the type in users' Types lists. Unique, non-empty.
	Name string
	// Slots is the number of indivisible units of this type: machines, or
	// machines × slots per machine when tasks take slots (§5 counts both the
	// same way). Zero is allowed: such a type is simply never allocated.
	Slots int64
}

// User is one party sharing the cluster: a user, an application or a job.
type User struct {
	// Name identifies the user. Unique, non-empty.
	Name string
	// Weight scales the user's fair share (§4.2.1: CMMF of the vector of
	// allocation/weight). Must lie in [MinWeight, MaxWeight].
	Weight float64
	// Demand caps the user's allocation: the tasks it could run now. Zero
	// means it wants nothing and gets nothing; Unlimited means no cap.
	// Negative values are invalid.
	Demand int64
	// Types names the machine types the user may run on (its hard placement
	// constraints, evaluated; §2.2). Repeated names are harmless.
	Types []string
}

// Problem is one offline CMMF instance.
type Problem struct {
	Types []MachineType
	Users []User
}

// Validate reports the first thing wrong with p, or nil. Errors wrap one of
// the Err* values and name the type or user at fault.
func (p *Problem) Validate() error {
	_, err := compile(p)
	return err
}

// typeIndex validates the machine types and maps their names to indices.
func (p *Problem) typeIndex() (map[string]int, error) {
	idx := make(map[string]int, len(p.Types))
	var total int64
	for t, mt := range p.Types {
		if mt.Name == "" {
			return nil, fmt.Errorf("cmmf: machine type %d: %w", t, ErrEmptyName)
		}
		if _, dup := idx[mt.Name]; dup {
			return nil, fmt.Errorf("cmmf: machine type %d %q: %w", t, mt.Name, ErrDuplicateName)
		}
		idx[mt.Name] = t
		if mt.Slots < 0 {
			return nil, fmt.Errorf("cmmf: machine type %q: slots %d: %w", mt.Name, mt.Slots, ErrBadSlots)
		}
		if mt.Slots > MaxTotalSlots-total {
			return nil, fmt.Errorf("cmmf: machine type %q: slots %d: %w", mt.Name, mt.Slots, ErrTooManySlots)
		}
		total += mt.Slots
	}
	return idx, nil
}

// checkUsers validates every user's fields except its type names, which
// compile resolves (and reports) in the same pass that groups users.
func (p *Problem) checkUsers() error {
	seen := make(map[string]struct{}, len(p.Users))
	for i, u := range p.Users {
		if u.Name == "" {
			return fmt.Errorf("cmmf: user %d: %w", i, ErrEmptyName)
		}
		if _, dup := seen[u.Name]; dup {
			return fmt.Errorf("cmmf: user %d %q: %w", i, u.Name, ErrDuplicateName)
		}
		seen[u.Name] = struct{}{}
		// The negated form also rejects NaN, which fails every comparison.
		if !(u.Weight >= MinWeight && u.Weight <= MaxWeight) {
			return fmt.Errorf("cmmf: user %q: weight %v: %w", u.Name, u.Weight, ErrBadWeight)
		}
		if u.Demand < 0 {
			return fmt.Errorf("cmmf: user %q: demand %d: %w", u.Name, u.Demand, ErrBadDemand)
		}
	}
	return nil
}
