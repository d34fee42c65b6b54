package placement

import (
	"fmt"
	"slices"
	"strings"
)

// Constraint operators.
const (
	OpEq     = "="      // the attribute's value is one of Values
	OpNe     = "!="     // the attribute is absent, or its value is none of Values
	OpExists = "exists" // the attribute is present, whatever its value
)

// Constraint is a job-level requirement on node attributes.
type Constraint struct {
	Key    string
	Op     string
	Values []string
}

// String renders the constraint as an operator would write it.
func (c Constraint) String() string {
	if c.Op == OpExists {
		return c.Key + " exists"
	}
	return fmt.Sprintf("%s %s %s", c.Key, c.Op, strings.Join(c.Values, "|"))
}

// Validate returns an error naming what is wrong with c.
func (c Constraint) Validate() error {
	switch {
	case c.Key == "":
		return fmt.Errorf("constraint %q: missing attribute key", c.String())
	case c.Op != OpEq && c.Op != OpNe && c.Op != OpExists:
		return fmt.Errorf("constraint on %q: unknown operator %q (want =, != or exists)", c.Key, c.Op)
	case c.Op != OpExists && len(c.Values) == 0:
		return fmt.Errorf("constraint %q: operator %s needs at least one value", c.Key, c.Op)
	}
	return nil
}

// Matches reports whether node n satisfies c.
func (c Constraint) Matches(n Node) bool {
	v, ok := n.Attrs[c.Key]
	switch c.Op {
	case OpEq:
		return ok && slices.Contains(c.Values, v)
	case OpNe:
		return !ok || !slices.Contains(c.Values, v)
	case OpExists:
		return ok
	}
	return false
}

// Filter returns the nodes that satisfy every constraint. With none
// matching, the error names the first constraint that no node satisfies,
// or says that no node satisfies them all together.
func Filter(nodes []Node, cs []Constraint) ([]Node, error) {
	if len(cs) == 0 {
		return nodes, nil
	}
	var out []Node
	for _, n := range nodes {
		if matchesAll(n, cs) {
			out = append(out, n)
		}
	}
	if len(out) > 0 {
		return out, nil
	}
	for _, c := range cs {
		if !slices.ContainsFunc(nodes, c.Matches) {
			return nil, fmt.Errorf("no live node monitor satisfies constraint %q", c.String())
		}
	}
	parts := make([]string, len(cs))
	for i, c := range cs {
		parts[i] = fmt.Sprintf("%q", c.String())
	}
	return nil, fmt.Errorf("no live node monitor satisfies constraints %s together", strings.Join(parts, ", "))
}

func matchesAll(n Node, cs []Constraint) bool {
	for _, c := range cs {
		if !c.Matches(n) {
			return false
		}
	}
	return true
}
