package placement

import (
	"math/rand/v2"
	"slices"

	"github.com/sparrowfleet/sparrow/core/locality"
)

// Widening a task relaxes its placement preferences by level (see
// core/locality.Level): at NodeLevel a task keeps the preferences its
// client gave; at RackLevel it may also run anywhere in its home racks
// (the racks of its preferred nodes, plus its preferred racks); at
// ClusterLevel anywhere. A widened task is an ordinary Task with wider
// preferences, so sampling, coverage and late binding treat it exactly as
// they treat any other.

// Widen returns the preferences t has at level l, given its home racks.
// At NodeLevel it is t; at RackLevel t's preferred racks become home
// (which includes them); at ClusterLevel it has no preference at all.
func Widen(t Task, l locality.Level, home []string) Task {
	switch {
	case l <= locality.NodeLevel || !t.Constrained():
		return t
	case l == locality.RackLevel:
		return Task{ID: t.ID, Nodes: t.Nodes, Racks: home}
	}
	return Task{ID: t.ID}
}

// RackIndex resolves tasks' preferred nodes against a membership view: the
// member names of the live ones and their racks. Build one per pass over
// many tasks: building costs O(nodes), each lookup O(the task's
// preferences). Read-only after NewRackIndex, so safe for concurrent
// readers.
type RackIndex struct {
	// byKey maps a host or member name to the nodes it names.
	byKey map[string][]int
	nodes []Node
}

// NewRackIndex indexes nodes by host and member name.
func NewRackIndex(nodes []Node) *RackIndex {
	x := &RackIndex{byKey: make(map[string][]int, 2*len(nodes)), nodes: nodes}
	for i, n := range nodes {
		x.byKey[n.Host] = append(x.byKey[n.Host], i)
		if n.Name != "" && n.Name != n.Host {
			x.byKey[n.Name] = append(x.byKey[n.Name], i)
		}
	}
	return x
}

// preferred calls f once for each live node t names, in node order.
func (x *RackIndex) preferred(t Task, f func(Node)) {
	var seen []int
	for _, k := range t.Nodes {
		for _, i := range x.byKey[k] {
			if !slices.Contains(seen, i) {
				seen = append(seen, i)
			}
		}
	}
	slices.Sort(seen)
	for _, i := range seen {
		f(x.nodes[i])
	}
}

// Names returns the member names of t's live preferred nodes, sorted:
// the keys of the coordinator's node prices.
func (x *RackIndex) Names(t Task) []string {
	var out []string
	x.preferred(t, func(n Node) {
		if n.Name != "" {
			out = append(out, n.Name)
		}
	})
	slices.Sort(out)
	return slices.Compact(out)
}

// HomeRacks returns t's home racks, sorted and each once: the racks of its
// live preferred nodes (nodes without a rack attribute add none) and its
// preferred racks.
func (x *RackIndex) HomeRacks(t Task) []string {
	out := slices.Clone(t.Racks)
	x.preferred(t, func(n Node) {
		if r, ok := n.Attrs[RackAttr]; ok {
			out = append(out, r)
		}
	})
	slices.Sort(out)
	return slices.Compact(out)
}

// LaunchLevel says how local a launch of a task with preferences orig
// (as its client gave them) on node n is: NodeLevel if orig allows n,
// RackLevel if n is in one of the task's home racks, ClusterLevel
// otherwise. It is the locality measure metrics count.
func LaunchLevel(orig Task, home []string, n Node) locality.Level {
	if orig.Allows(n) {
		return locality.NodeLevel
	}
	if r, ok := n.Attrs[RackAttr]; ok && slices.Contains(home, r) {
		return locality.RackLevel
	}
	return locality.ClusterLevel
}

// PlanWidened places the further reservations of tasks that were just
// widened (their preferences as Widen returns them): ceil(d) per task on
// distinct nodes it now allows, drawn uniformly from nodes minus those
// for which skip is true (typically the nodes that already hold a
// reservation for the request), and ceil(d·u) spread as batch sampling
// spreads them for the u tasks widened to the whole cluster. Unlike Plan
// it does not fail when a task has nowhere new to go: such tasks are
// returned in starved, since their old reservations still stand and a
// later, wider level may find room.
func (s *Sampler) PlanWidened(rng *rand.Rand, nodes []Node, tasks []Task, d float64, skip func(Node) bool) (probes []Probe, starved []Task, err error) {
	if err := CheckProbeRatio(d); err != nil {
		return nil, nil, err
	}
	var eligible []Node
	for _, n := range nodes {
		if skip == nil || !skip(n) {
			eligible = append(eligible, n)
		}
	}
	if len(eligible) == 0 {
		return nil, slices.Clone(tasks), nil
	}
	var index *nodeIndex
	var allowed []int
	kept := make([]Task, 0, len(tasks))
	for _, t := range tasks {
		if t.Constrained() {
			if index == nil {
				index = newNodeIndex(eligible)
			}
			if allowed = index.allowed(t, allowed[:0]); len(allowed) == 0 {
				starved = append(starved, t)
				continue
			}
		}
		kept = append(kept, t)
	}
	if len(kept) == 0 {
		return nil, starved, nil
	}
	probes, err = s.Plan(rng, eligible, kept, d)
	return probes, starved, err
}

// Widen gives task i the wider preferences t (normally Widen of its
// current ones): from now on it may be assigned to any node t allows, and
// Uncovered and UnlaunchedTasks report it with t. A task widened to no
// preference at all joins the unconstrained tasks, after those already
// there. It returns false, changing nothing, if task i has launched, so
// that a task is still handed out at most once.
func (r *Request) Widen(i int, t Task) bool {
	if i < 0 || i >= len(r.tasks) || r.launched[i] {
		return false
	}
	if !r.ownTasks {
		// The caller's slice is not ours to change.
		r.tasks = slices.Clone(r.tasks)
		r.ownTasks = true
	}
	was := r.tasks[i]
	r.tasks[i] = t
	if was.Constrained() && !t.Constrained() {
		if j := slices.Index(r.constrained, i); j >= 0 {
			r.constrained = slices.Delete(r.constrained, j, j+1)
		}
		r.free = append(r.free, i)
	}
	return true
}

// NodeOf returns the node addr held (or holds) reservations on for this
// request, as it was when they were placed.
func (r *Request) NodeOf(addr string) (Node, bool) {
	h := r.holding(addr)
	if h == nil {
		return Node{}, false
	}
	return r.holdNode[h.canon], true
}
