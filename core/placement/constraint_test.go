package placement

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// reference is an independent statement of the constraint semantics,
// written from the protocol's description rather than from Matches.
func reference(c Constraint, attrs map[string]string) bool {
	v, present := attrs[c.Key]
	in := false
	for _, x := range c.Values {
		if x == v {
			in = true
		}
	}
	switch c.Op {
	case "=":
		return present && in
	case "!=":
		return !(present && in)
	case "exists":
		return present
	}
	return false
}

func randomNodes(rng *rand.Rand, n int) []Node {
	keys, vals := []string{"rack", "gpu", "zone"}, []string{"a", "b", "c"}
	nodes := make([]Node, n)
	for i := range nodes {
		attrs := map[string]string{}
		for _, k := range keys {
			if rng.IntN(3) > 0 {
				attrs[k] = vals[rng.IntN(len(vals))]
			}
		}
		nodes[i] = Node{Addr: string(rune('A' + i)), Host: string(rune('A' + i)), Attrs: attrs}
	}
	return nodes
}

func randomConstraints(rng *rand.Rand) []Constraint {
	keys, vals, ops := []string{"rack", "gpu", "zone", "tpu"}, []string{"a", "b", "c", "d"}, []string{"=", "!=", "exists"}
	cs := make([]Constraint, 1+rng.IntN(3))
	for i := range cs {
		c := Constraint{Key: keys[rng.IntN(len(keys))], Op: ops[rng.IntN(len(ops))]}
		for j := 1 + rng.IntN(2); j > 0; j-- {
			c.Values = append(c.Values, vals[rng.IntN(len(vals))])
		}
		cs[i] = c
	}
	return cs
}

// TestFilterNeverViolatesConstraints: over random nodes and constraints,
// every node Filter returns satisfies every constraint by the reference
// semantics, every node it leaves out violates one, and reservations Plan
// places on the filtered nodes land only on them.
func TestFilterNeverViolatesConstraints(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	var s Sampler
	refused := 0
	for round := 0; round < 5000; round++ {
		nodes := randomNodes(rng, 1+rng.IntN(12))
		cs := randomConstraints(rng)
		got, err := Filter(nodes, cs)
		var want []Node
		for _, n := range nodes {
			ok := true
			for _, c := range cs {
				ok = ok && reference(c, n.Attrs)
			}
			if ok {
				want = append(want, n)
			}
		}
		if len(want) == 0 {
			if err == nil {
				t.Fatalf("round %d: no node satisfies %v but Filter returned %v", round, cs, got)
			}
			refused++
			continue
		}
		if err != nil {
			t.Fatalf("round %d: %v satisfiable by %d nodes but Filter failed: %v", round, cs, len(want), err)
		}
		if !slices.EqualFunc(got, want, func(a, b Node) bool { return a.Addr == b.Addr }) {
			t.Fatalf("round %d: constraints %v: Filter kept %v, reference keeps %v", round, cs, addrs(got), addrs(want))
		}
		probes, err := s.Plan(rng, got, []Task{{ID: "0"}, {ID: "1"}, {ID: "2"}}, 2)
		if err != nil {
			t.Fatalf("round %d: Plan: %v", round, err)
		}
		for _, p := range probes {
			for _, c := range cs {
				if !reference(c, p.Node.Attrs) {
					t.Fatalf("round %d: probe on %s violates %v", round, p.Node.Addr, c)
				}
			}
		}
	}
	if refused == 0 || refused == 5000 {
		t.Fatalf("the random cases never (or always) were unsatisfiable (%d): the generator is not exercising both paths", refused)
	}
}

func addrs(ns []Node) string {
	var b strings.Builder
	for _, n := range ns {
		b.WriteString(n.Addr)
	}
	return b.String()
}

func TestFilterErrorNamesTheConstraint(t *testing.T) {
	nodes := []Node{
		{Addr: "a", Attrs: map[string]string{"gpu": "yes", "rack": "r0"}},
		{Addr: "b", Attrs: map[string]string{"rack": "r1"}},
	}
	tests := []struct {
		cs   []Constraint
		want string
	}{
		{[]Constraint{{Key: "tpu", Op: OpExists}}, `"tpu exists"`},
		{[]Constraint{{Key: "rack", Op: OpEq, Values: []string{"r9", "r8"}}}, `"rack = r9|r8"`},
		{[]Constraint{{Key: "gpu", Op: OpExists}, {Key: "rack", Op: OpEq, Values: []string{"r1"}}}, "together"},
	}
	for _, tt := range tests {
		_, err := Filter(nodes, tt.cs)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Filter(%v) = %v, want an error containing %s", tt.cs, err, tt.want)
		}
	}
}

func FuzzConstraintMatches(f *testing.F) {
	f.Add("rack", "=", "r1", "rack", "r1")
	f.Add("gpu", "!=", "no", "gpu", "")
	f.Add("zone", "exists", "", "other", "x")
	f.Fuzz(func(t *testing.T, key, op, value, attrKey, attrValue string) {
		c := Constraint{Key: key, Op: op, Values: []string{value}}
		n := Node{Attrs: map[string]string{attrKey: attrValue}}
		if c.Validate() != nil {
			return
		}
		if got, want := c.Matches(n), reference(c, n.Attrs); got != want {
			t.Fatalf("%v on %v: Matches = %v, reference = %v", c, n.Attrs, got, want)
		}
	})
}
