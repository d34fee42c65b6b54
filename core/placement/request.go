package placement

import "slices"

// Request is the late-binding state of one scheduling request: which tasks
// are still unlaunched and which node monitors still hold reservations for
// it. A node monitor whose reservation reaches the front of its queue asks
// for work (Assign); the first to ask gets the next task it may run.
//
// Assignment order: a node first gets the earliest unlaunched constrained
// task it is allowed to run (sharing probes across constrained tasks, as the
// paper's §4.1 optimisation), then the earliest unlaunched unconstrained
// task. Constrained tasks go first because they have fewer places to run.
//
// Not safe for concurrent use; the scheduler holds a lock around it.
type Request struct {
	ID    string
	tasks []Task
	// ownTasks is set once Widen has copied tasks, which until then is
	// the caller's slice.
	ownTasks bool

	launched    []bool
	left        int   // unlaunched tasks
	nextFree    int   // index into free of the next unconstrained task
	free        []int // unconstrained task indices, in submission order
	constrained []int // unlaunched constrained task indices, in order

	// at maps a node addr to its entry in holds; nodes that ever held a
	// reservation keep their entry. One map lookup per Assign finds both
	// the count and the node, where separate count and node maps cost
	// four or five map operations per task on the scheduler's hot path.
	at    map[string]int32
	holds []holding
	total int // sum of holds[i].n
	// cover counts outstanding reservations by the keys preferences match
	// (host, member name, rack), so that a constrained task's coverage is
	// checked in O(its preferences), not O(nodes).
	cover map[coverKey]int
}

// holding is one node's outstanding reservations for the request.
type holding struct {
	node Node
	n    int
}

type coverKey struct {
	kind  byte // 'h' host, 'n' member name, 'r' rack
	value string
}

func (r *Request) addCover(n Node, c int) {
	if r.cover == nil {
		r.cover = make(map[coverKey]int)
	}
	r.cover[coverKey{'h', n.Host}] += c
	if n.Name != "" && n.Name != n.Host {
		r.cover[coverKey{'n', n.Name}] += c
	}
	if rack, ok := n.Attrs[RackAttr]; ok {
		r.cover[coverKey{'r', rack}] += c
	}
}

// covered reports whether some outstanding reservation is on a node t
// allows.
func (r *Request) covered(t Task) bool {
	for _, x := range t.Nodes {
		if r.cover[coverKey{'h', x}] > 0 || r.cover[coverKey{'n', x}] > 0 {
			return true
		}
	}
	for _, x := range t.Racks {
		if r.cover[coverKey{'r', x}] > 0 {
			return true
		}
	}
	return false
}

// NewRequest starts the late-binding state for a request's tasks. It places
// no reservations; call AddProbes with the probes actually sent.
func NewRequest(id string, tasks []Task) *Request {
	r := &Request{
		ID:       id,
		tasks:    tasks,
		launched: make([]bool, len(tasks)),
		left:     len(tasks),
	}
	for i, t := range tasks {
		if t.Constrained() {
			r.constrained = append(r.constrained, i)
		} else {
			r.free = append(r.free, i)
		}
	}
	return r
}

// Tasks returns the request's tasks, in submission order. Do not modify.
func (r *Request) Tasks() []Task { return r.tasks }

// AddProbes records reservations that were placed on node monitors.
func (r *Request) AddProbes(probes []Probe) {
	if r.at == nil {
		r.at = make(map[string]int32, len(probes))
		r.holds = make([]holding, 0, len(probes))
	}
	for _, p := range probes {
		if p.Count <= 0 {
			continue
		}
		if i, ok := r.at[p.Node.Addr]; ok {
			h := &r.holds[i]
			h.n += p.Count
			h.node = p.Node
		} else {
			r.at[p.Node.Addr] = int32(len(r.holds))
			r.holds = append(r.holds, holding{node: p.Node, n: p.Count})
		}
		r.total += p.Count
		if len(r.constrained) > 0 {
			r.addCover(p.Node, p.Count)
		}
	}
}

// Assign consumes one of addr's reservations and returns the index of the
// task to launch there, or ok=false when the node should get nothing: all
// tasks are launched, none of the remaining tasks may run on it, or it holds
// no reservation for this request (an unknown or already-cancelled one).
// Each task index is returned at most once over the Request's life.
func (r *Request) Assign(addr string) (task int, ok bool) {
	h := r.holding(addr)
	if h == nil || h.n == 0 {
		return 0, false
	}
	h.n--
	r.total--
	if len(r.constrained) > 0 {
		r.addCover(h.node, -1)
	}
	if r.left == 0 {
		return 0, false
	}
	for j, i := range r.constrained {
		if r.tasks[i].Allows(h.node) {
			r.constrained = slices.Delete(r.constrained, j, j+1)
			return r.launch(i), true
		}
	}
	if r.nextFree < len(r.free) {
		i := r.free[r.nextFree]
		r.nextFree++
		return r.launch(i), true
	}
	return 0, false
}

// holding returns addr's entry, or nil if addr never held a reservation.
func (r *Request) holding(addr string) *holding {
	i, ok := r.at[addr]
	if !ok {
		return nil
	}
	return &r.holds[i]
}

func (r *Request) launch(i int) int {
	r.launched[i] = true
	r.left--
	return i
}

// Launched reports whether every task has been handed out.
func (r *Request) Launched() bool { return r.left == 0 }

// IsLaunched reports whether task i has been handed out.
func (r *Request) IsLaunched(i int) bool { return r.launched[i] }

// Unlaunched returns how many tasks have not been handed out yet.
func (r *Request) Unlaunched() int { return r.left }

// Outstanding returns the nodes that still hold reservations for this
// request, with how many, in address order. Once the request is launched
// these are the cancellation targets.
func (r *Request) Outstanding() []Probe {
	k := 0
	for i := range r.holds {
		if r.holds[i].n > 0 {
			k++
		}
	}
	out := make([]Probe, 0, k)
	for i := range r.holds {
		if h := &r.holds[i]; h.n > 0 {
			out = append(out, Probe{Node: h.node, Count: h.n})
		}
	}
	slices.SortFunc(out, func(a, b Probe) int {
		switch {
		case a.Node.Addr < b.Node.Addr:
			return -1
		case a.Node.Addr > b.Node.Addr:
			return 1
		}
		return 0
	})
	return out
}

// HasConstrained reports whether any unlaunched task is constrained.
func (r *Request) HasConstrained() bool { return len(r.constrained) > 0 }

// Holds reports whether addr still holds reservations for this request.
func (r *Request) Holds(addr string) bool {
	h := r.holding(addr)
	return h != nil && h.n > 0
}

// UnlaunchedTasks returns the tasks not yet handed out, in submission order.
func (r *Request) UnlaunchedTasks() []Task {
	out := make([]Task, 0, r.left)
	for i, t := range r.tasks {
		if !r.launched[i] {
			out = append(out, t)
		}
	}
	return out
}

// DropNode forgets every reservation addr holds, because it was refused, the
// enqueue failed, or the node left the cluster. It returns how many were
// dropped. Call Uncovered afterwards to see what must be probed again.
func (r *Request) DropNode(addr string) int {
	h := r.holding(addr)
	if h == nil || h.n <= 0 {
		return 0
	}
	c := h.n
	r.total -= c
	h.n = 0
	if len(r.constrained) > 0 {
		r.addCover(h.node, -c)
	}
	return c
}

// Uncovered returns the unlaunched tasks that may be left without a node
// monitor to run them, so that the caller can probe for them again: each
// constrained task with no outstanding reservation on a node it allows, and
// as many unconstrained tasks as unlaunched tasks outnumber outstanding
// reservations. Nil means every unlaunched task still has somewhere to go.
func (r *Request) Uncovered() []Task {
	var out []Task
	for _, i := range r.constrained {
		if !r.covered(r.tasks[i]) {
			out = append(out, r.tasks[i])
		}
	}
	short := r.left - r.total
	for k := r.nextFree; k < len(r.free) && short > 0; k++ {
		out = append(out, r.tasks[r.free[k]])
		short--
	}
	return out
}
