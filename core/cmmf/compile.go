package cmmf

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
)

// instance is a validated Problem in the solver's terms: types and users by
// index, and users grouped by their set of usable types.
//
// Users with the same usable types are interchangeable in the flow network:
// whatever one of them can route, another can. So the network has one node
// per group, whose capacity is the sum of its members'; members share the
// group's flow in proportion to their totals. With constraints drawn from a
// few attributes (as at Google, §7.1) many users share a set and the network
// shrinks accordingly; with arbitrary sets nothing is lost.
type instance struct {
	slots  []int64   // per type
	weight []float64 // per user
	// demand is the user's cap as the divisible solver sees it: +Inf when
	// the (positive) demand is at least everything the user may use, so
	// that such users behave exactly like Unlimited ones.
	demand []float64
	// demandInt is min(Demand, usable slots): the integer solver's cap.
	demandInt []int64
	group     []int32 // user → group
	groups    []group
}

// group is a set of users with the same usable types.
type group struct {
	types   []int32 // usable types with slots > 0, ascending
	members []int32 // user indices, ascending
	usable  int64   // sum of the types' slots
}

// compile validates p and builds its instance in one pass over the users'
// type names (the costliest part of reading a large problem).
func compile(p *Problem) (*instance, error) {
	index, err := p.typeIndex()
	if err != nil {
		return nil, err
	}
	if err := p.checkUsers(); err != nil {
		return nil, err
	}
	in := &instance{
		slots:     make([]int64, len(p.Types)),
		weight:    make([]float64, len(p.Users)),
		demand:    make([]float64, len(p.Users)),
		demandInt: make([]int64, len(p.Users)),
		group:     make([]int32, len(p.Users)),
	}
	for t, mt := range p.Types {
		in.slots[t] = mt.Slots
	}

	byKey := make(map[string]int32)
	stamp := make([]int32, len(p.Types)) // user index + 1 that last listed the type
	var types []int32
	var key []byte
	for i, u := range p.Users {
		types = types[:0]
		for _, name := range u.Types {
			t, ok := index[name]
			if !ok {
				return nil, fmt.Errorf("cmmf: user %q: machine type %q: %w", u.Name, name, ErrUnknownType)
			}
			if stamp[t] != int32(i+1) && in.slots[t] > 0 {
				stamp[t] = int32(i + 1)
				types = append(types, int32(t))
			}
		}
		slices.Sort(types)
		key = key[:0]
		for _, t := range types {
			key = binary.LittleEndian.AppendUint32(key, uint32(t))
		}
		g, ok := byKey[string(key)]
		if !ok {
			g = int32(len(in.groups))
			byKey[string(key)] = g
			var usable int64
			for _, t := range types {
				usable += in.slots[t]
			}
			in.groups = append(in.groups, group{types: slices.Clone(types), usable: usable})
		}
		in.groups[g].members = append(in.groups[g].members, int32(i))
		in.group[i] = g
		in.weight[i] = u.Weight
		usable := in.groups[g].usable
		in.demandInt[i] = min(u.Demand, usable)
		in.demand[i] = math.Inf(1)
		if u.Demand < usable || u.Demand == 0 {
			in.demand[i] = float64(u.Demand)
		}
	}
	return in, nil
}
