package placement

import (
	"slices"
	"unsafe"
)

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

	// holds has one entry per probe with a positive count, in the order
	// AddProbes received them: entry h is the reservation handle AssignAt
	// takes. Several probes for one node are merged into the first one's
	// entry (its canonical entry), so a node's count lives in one place.
	//
	// at maps a node addr to its canonical entry; nodes that ever held a
	// reservation keep their entry. One map lookup per Assign finds both
	// the count and the node. The map covers holds[:indexed]; it is built
	// lazily, on the first string-keyed call, for a request without
	// constrained tasks, so a caller that uses only AssignAt (the
	// simulator, 1,000 probes per job) never hashes an address.
	at      map[string]int32
	holds   []holding
	indexed int // holds[:indexed] are in at and merged
	total   int // sum of holds[i].n
	// holdNode[i] is the node of holds[i], kept apart so that the
	// counts Assign reads are a dense array. It covers holds[:indexed]
	// and the probes AddProbes filed; the entries of holds that AddPicks
	// filed lazily are added, from pickNodes, only when indexed, so that
	// a caller that never needs the addresses never writes a Node per
	// probe.
	holdNode  []Node
	pickNodes []Node
	// returned holds offered tasks that were declined (Offer), handed out
	// before free[nextFree:] so that they keep their place near the front.
	returned []int
	offered  []int // tasks offered and not yet answered
	// cover counts outstanding reservations by the keys preferences match
	// (host, member name, rack), so that a constrained task's coverage is
	// checked in O(its preferences), not O(nodes).
	cover map[coverKey]int
}

// holding is one node's outstanding reservations for the request.
type holding struct {
	n     int32
	canon int32 // the entry that holds this node's count (itself if first)
	pick  int32 // index in pickNodes of the node, if added by AddPicks and not yet indexed; else -1
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
	r := &Request{}
	r.Reset(id, tasks)
	return r
}

// Reset makes r the state NewRequest(id, tasks) returns, reusing r's
// memory, so that a caller that opens many requests one after another (a
// simulator) does not allocate a task table and a probe table for each.
// Nothing of r's previous request remains observable.
func (r *Request) Reset(id string, tasks []Task) {
	at := r.at
	clear(at)
	*r = Request{
		ID:          id,
		tasks:       tasks,
		launched:    resize(r.launched, len(tasks)),
		left:        len(tasks),
		free:        r.free[:0],
		returned:    r.returned[:0],
		offered:     r.offered[:0],
		constrained: r.constrained[:0],
		at:          at,
		holds:       r.holds[:0],
		holdNode:    r.holdNode[:0],
	}
	for i := range tasks {
		if tasks[i].Constrained() {
			r.constrained = append(r.constrained, i)
		} else {
			r.free = append(r.free, i)
		}
	}
}

// resize returns b with length n and every element false, reusing b's
// array when it is large enough.
func resize(b []bool, n int) []bool {
	if cap(b) < n {
		return make([]bool, n)
	}
	b = b[:n]
	clear(b)
	return b
}

// Tasks returns the request's tasks, in submission order. Do not modify.
func (r *Request) Tasks() []Task { return r.tasks }

// AddProbes records reservations that were placed on node monitors. Each
// probe with a positive count gets the next reservation handle (0, 1, 2, ...
// over the request's life, in the order given), which AssignAt takes.
func (r *Request) AddProbes(probes []Probe) {
	// A request without constrained tasks files the probes now and indexes
	// them by address only when a string-keyed call needs it (see at).
	lazy := len(r.holds) == 0 && len(r.constrained) == 0
	if !lazy {
		r.index()
	}
	r.grow(len(probes), true)
	for _, p := range probes {
		if p.Count <= 0 {
			continue
		}
		r.hold(p.Count, -1)
		r.holdNode = append(r.holdNode, p.Node)
		if len(r.constrained) > 0 {
			r.addCover(p.Node, p.Count)
		}
	}
	if !lazy {
		r.index()
	}
}

// AddPicks is AddProbes for the probes Probe{Node: nodes[p.Node], Count:
// p.Count} of picks (as Sampler.PlanPicks returns them), with the same
// result and the same reservation handles. For a request without
// constrained tasks it copies no Node until a string-keyed call needs the
// addresses: until then nodes[p.Node] of every pick must not change. It
// panics if a pick's node index is out of range of nodes.
func (r *Request) AddPicks(nodes []Node, picks []Pick) {
	if len(r.holds) > 0 || len(r.constrained) > 0 {
		r.index()
		for _, p := range picks {
			r.AddProbes([]Probe{{Node: nodes[p.Node], Count: int(p.Count)}})
		}
		return
	}
	r.grow(len(picks), false)
	r.pickNodes = nodes
	for _, p := range picks {
		if p.Count <= 0 {
			continue
		}
		_ = nodes[p.Node] // the bounds check AddProbes would do
		r.hold(int(p.Count), p.Node)
	}
}

// grow makes room for n more holds, and for their nodes if withNodes: a
// request filed by AddPicks may never copy a node, and a Node is far
// larger than a holding.
func (r *Request) grow(n int, withNodes bool) {
	if r.holds == nil {
		r.holds = make([]holding, 0, n)
	}
	if withNodes && r.holdNode == nil {
		r.holdNode = make([]Node, 0, n)
	}
}

// hold appends a holding of c reservations, its own canonical entry.
func (r *Request) hold(c int, pick int32) {
	h := int32(len(r.holds))
	r.holds = append(r.holds, holding{n: int32(c), canon: h, pick: pick})
	r.total += c
}

// index files holds[indexed:] in at, merging each into its node's
// canonical entry: the count moves there and the node's description is
// the latest one given.
func (r *Request) index() {
	if r.indexed == len(r.holds) {
		return
	}
	if r.at == nil {
		r.at = make(map[string]int32, len(r.holds))
	}
	for len(r.holdNode) < len(r.holds) {
		r.holdNode = append(r.holdNode, Node{}) // filled from pickNodes below
	}
	for i := r.indexed; i < len(r.holds); i++ {
		h := &r.holds[i]
		if h.pick >= 0 {
			r.holdNode[i] = r.pickNodes[h.pick]
			h.pick = -1
		}
		addr := r.holdNode[i].Addr
		c, ok := r.at[addr]
		if !ok {
			r.at[addr] = int32(i)
			h.canon = int32(i)
			continue
		}
		r.holds[c].n += h.n
		r.holdNode[c] = r.holdNode[i]
		h.n = 0
		h.canon = c
	}
	r.indexed = len(r.holds)
	r.pickNodes = nil
}

// Assign consumes one of addr's reservations and returns the index of the
// task to launch there, or ok=false when the node should get nothing: all
// tasks are launched, none of the remaining tasks may run on it, or it holds
// no reservation for this request (an unknown or already-cancelled one).
// Each task index is returned at most once over the Request's life.
func (r *Request) Assign(addr string) (task int, ok bool) {
	h := r.holding(addr)
	if h == nil {
		return 0, false
	}
	return r.assign(h)
}

// AssignAt is Assign for the node of reservation handle h (see AddProbes):
// the same decision, found by position instead of by hashing the address.
// An out-of-range handle gets nothing.
func (r *Request) AssignAt(h int) (task int, ok bool) {
	if h < 0 || h >= len(r.holds) {
		return 0, false
	}
	if h >= r.indexed && r.holds[h].n == 0 {
		// The node may hold more under another handle not merged yet.
		r.index()
	}
	if h < r.indexed {
		h = int(r.holds[h].canon)
	}
	// A handle not yet indexed, with reservations left, is as good as its
	// canonical entry: only requests without constrained tasks defer
	// indexing, and for them only the node's total count matters, which
	// is the same whichever of its entries is decremented.
	return r.assign(&r.holds[h])
}

// HoldAddr returns the address of the memory AssignAt(h) reads first (the
// reservation count of handle h), or 0 for an out-of-range handle, so that a
// caller that knows which handles will be asked soon (the simulator, which
// sees which reservations its node monitors serve next) can have the CPU
// load it early: with thousands of requests of a thousand handles each,
// that count is rarely in cache. It is a hint and only a number: it must never be turned back into a
// pointer, and it goes stale at the next AddProbes, AddPicks or Reset.
// HoldStride is how far apart, in bytes, HoldAddr places consecutive
// handles: HoldAddr(h) is HoldAddr(0) + h*HoldStride for every handle h.
const HoldStride = unsafe.Sizeof(holding{})

func (r *Request) HoldAddr(h int) uintptr {
	if h < 0 || h >= len(r.holds) {
		return 0
	}
	return uintptr(unsafe.Pointer(&r.holds[h]))
}

func (r *Request) assign(h *holding) (task int, ok bool) {
	if h.n == 0 {
		return 0, false
	}
	h.n--
	r.total--
	var node *Node
	if len(r.constrained) > 0 {
		// Constrained requests are indexed as their probes are added
		// (see AddProbes), so the node is known.
		node = &r.holdNode[h.canon]
		r.addCover(*node, -1)
	}
	if r.left == 0 {
		return 0, false
	}
	for j, i := range r.constrained {
		if r.tasks[i].Allows(*node) {
			r.constrained = slices.Delete(r.constrained, j, j+1)
			return r.launch(i), true
		}
	}
	if i, ok := r.nextUnconstrained(); ok {
		return r.launch(i), true
	}
	return 0, false
}

// Decline consumes one of addr's reservations and hands out no task, as
// when the node should not run any of the request's tasks after all. It
// reports whether addr held one.
func (r *Request) Decline(addr string) bool {
	h := r.holding(addr)
	if h == nil {
		return false
	}
	return r.decline(h)
}

// DeclineAt is Decline for the node of reservation handle h (see
// AssignAt).
func (r *Request) DeclineAt(h int) bool {
	if h < 0 || h >= len(r.holds) {
		return false
	}
	if h >= r.indexed && r.holds[h].n == 0 {
		r.index()
	}
	if h < r.indexed {
		h = int(r.holds[h].canon)
	}
	return r.decline(&r.holds[h])
}

func (r *Request) decline(h *holding) bool {
	if h.n == 0 {
		return false
	}
	h.n--
	r.total--
	if len(r.constrained) > 0 {
		r.addCover(r.holdNode[h.canon], -1)
	}
	return true
}

// nextUnconstrained takes the next unconstrained task to hand out: a
// declined offer first, else the earliest not yet handed out or offered.
func (r *Request) nextUnconstrained() (int, bool) {
	if len(r.returned) > 0 {
		// The earliest declined task, so tasks go out in submission
		// order: every declined task precedes free[nextFree:].
		k := 0
		for j, i := range r.returned {
			if i < r.returned[k] {
				k = j
			}
		}
		i := r.returned[k]
		r.returned = slices.Delete(r.returned, k, k+1)
		return i, true
	}
	if r.nextFree < len(r.free) {
		i := r.free[r.nextFree]
		r.nextFree++
		return i, true
	}
	return 0, false
}

// Offer sets aside an unlaunched task for addr, which holds a reservation,
// so that the caller can send it with that reservation for addr to launch
// at once if it has a free slot. Until OfferTaken or OfferDeclined answers
// it, the task is handed to no other node, but still counts as unlaunched.
// Only requests without constrained tasks make offers (ok=false
// otherwise), so that an offer never takes a task another node is the
// only one allowed to run.
func (r *Request) Offer(addr string) (task int, ok bool) {
	if len(r.constrained) > 0 {
		return 0, false
	}
	if h := r.holding(addr); h == nil || h.n == 0 {
		return 0, false
	}
	i, ok := r.nextUnconstrained()
	if ok {
		r.offered = append(r.offered, i)
	}
	return i, ok
}

// settle removes task i from the offers awaiting an answer.
func (r *Request) settle(i int) {
	if k := slices.Index(r.offered, i); k >= 0 {
		r.offered = slices.Delete(r.offered, k, k+1)
	}
}

// OfferTaken records that addr launched offered task i with one of its
// reservations: i is handed out, as if Assign(addr) had returned it.
func (r *Request) OfferTaken(addr string, i int) {
	r.settle(i)
	if h := r.holding(addr); h != nil && h.n > 0 {
		h.n--
		r.total--
	}
	r.launch(i)
}

// OfferDeclined returns offered task i to the tasks to hand out, ahead of
// those never offered.
func (r *Request) OfferDeclined(i int) {
	r.settle(i)
	r.returned = append(r.returned, i)
}

// Spare reports whether an unconstrained task is neither handed out nor
// offered: Assign has one to give without waiting for an offer's answer.
func (r *Request) Spare() bool { return len(r.returned) > 0 || r.nextFree < len(r.free) }

// Offered returns how many offers are awaiting their answer.
func (r *Request) Offered() int { return len(r.offered) }

// IsOffered reports whether task i is offered and awaiting its answer.
func (r *Request) IsOffered(i int) bool { return slices.Contains(r.offered, i) }

// holding returns addr's entry, or nil if addr never held a reservation.
func (r *Request) holding(addr string) *holding {
	r.index()
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
	r.index()
	k := 0
	for i := range r.holds {
		if r.holds[i].n > 0 {
			k++
		}
	}
	out := make([]Probe, 0, k)
	for i := range r.holds {
		if h := &r.holds[i]; h.n > 0 {
			out = append(out, Probe{Node: r.holdNode[i], Count: int(h.n)})
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
	c := int(h.n)
	r.total -= c
	h.n = 0
	if len(r.constrained) > 0 {
		r.addCover(r.holdNode[h.canon], -c)
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
	for _, i := range r.returned {
		if short <= 0 {
			break
		}
		out = append(out, r.tasks[i])
		short--
	}
	for k := r.nextFree; k < len(r.free) && short > 0; k++ {
		out = append(out, r.tasks[r.free[k]])
		short--
	}
	// Offered tasks last: each is likely to launch where it was offered.
	for k := 0; k < len(r.offered) && short > 0; k++ {
		out = append(out, r.tasks[r.offered[k]])
		short--
	}
	return out
}
