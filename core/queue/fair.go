package queue

import (
	"container/heap"
	"math"
)

// Fair performs weighted fair queuing across per-user FIFO queues, the
// mechanism Sparrow uses to enforce weighted fair shares (§4.2): two users
// competing on a node get service in proportion to their weights, so two
// users sharing a set of nodes do too.
//
// The algorithm is start-time fair queuing (SFQ, Goyal et al. 1996), chosen
// because it needs no fluid-system simulation and its fairness does not
// depend on knowing service times, which a node monitor does not know when it
// picks a reservation. Each backlogged user has a start tag: the virtual time
// at which its head reservation becomes eligible. Pop serves the user with the
// smallest start tag, sets the virtual time to that tag, and advances the
// user's tag by 1/weight, so over any backlogged interval user u receives
// weight(u)/sum(weights of backlogged users) of the pops, give or take one
// pop per user.
//
// A user that becomes active starts at max(virtual time, its previous finish
// tag). Starting no earlier than the current virtual time means idleness
// never builds up credit that could later be spent in a burst; remembering
// the previous finish tag means a user who keeps exactly one reservation
// queued, and so goes briefly empty after every pop, cannot jump ahead of
// users that stayed backlogged. Only finish tags still ahead of the virtual
// time are remembered, and never more of them than there are queued
// reservations (the least relevant, i.e. smallest, are forgotten first), so
// memory stays bounded by queued reservations plus the weight table.
//
// Ties between equal start tags go to the user whose head reservation arrived
// first, which makes the service order fully deterministic.
//
// Weights are read when a user is charged for a pop, so SetWeight takes
// effect from the next Pop. A weight change also rescales the user's lead
// over the virtual time by old/new weight: service a user received ahead
// of the others counts as the same number of its own pops at either
// weight. Without that, pops charged at a tiny weight (say a coordinator's
// floor weight, 1/w = 1000 per pop) would keep a user that stays
// backlogged behind everyone long after its weight is raised, and a user
// whose weight falls would keep a lead it earned cheaply.
//
// Fair implements Discipline and Weights; create it with NewFair. It is
// not safe for concurrent use.
type Fair struct {
	weights *weightTable
	idx     *index
	ownsIdx bool // false when a Priority level shares its parent's index

	flows     map[string]*flow // every user in active or idle
	active    flowHeap         // backlogged users, by (start tag, head arrival)
	idle      flowHeap         // empty users whose finish tag is ahead of vtime
	peakFlows int              // most users held since the last reset

	vtime float64 // start tag of the most recently served reservation
	n     int     // queued reservations
	seq   uint64  // arrival counter for tie-breaking
}

var (
	_ Discipline = (*Fair)(nil)
	_ Weights    = (*Fair)(nil)
)

// renormAt is the virtual time beyond which all tags are shifted back
// towards zero. Tags only grow, and a float64 near 2^20 still resolves
// charges down to about 2^-32, i.e. weight ratios up to ~10^9, whereas
// letting it grow without limit would eventually make small charges vanish
// to rounding (letting one user monopolise the node) or overflow to +Inf.
// Shifting is O(users) but happens at most once per 2^20 units of virtual
// time, except with absurdly small weights, where it stays O(users) per Pop.
const renormAt = 1 << 20

// flow is one user's FIFO queue together with its fair-queuing tag.
type flow struct {
	user string
	q    list // queued nodes in arrival order, linked through inQueue
	// tag is the start tag of the user's next reservation: that of its
	// head while active, the one it will resume at while idle. After a
	// service it equals the finish tag of that service, since SFQ starts
	// a user's next reservation where its last one finished.
	tag float64
	pos int // index in whichever heap holds the flow
}

// NewFair returns an empty weighted fair queue. Users absent from weights
// get defaultWeight. Every weight must be finite and > 0. The map is copied.
func NewFair(defaultWeight float64, weights map[string]float64) (*Fair, error) {
	wt, err := newWeightTable(defaultWeight, weights)
	if err != nil {
		return nil, err
	}
	f := newFair(wt, &index{})
	f.ownsIdx = true
	return f, nil
}

func newFair(wt *weightTable, idx *index) *Fair {
	return &Fair{weights: wt, idx: idx, idle: flowHeap{idle: true}}
}

// SetWeight sets user's weight, effective from the next Pop, and rescales
// its lead over the virtual time (see the type comment). w must be finite
// and > 0; otherwise an error wrapping ErrInvalidWeight is returned and
// nothing changes.
func (f *Fair) SetWeight(user string, w float64) error {
	old := f.weights.get(user)
	if err := f.weights.set(user, w); err != nil {
		return err
	}
	f.reweigh(user, old, w)
	return nil
}

// reweigh rescales user's lead over the virtual time, its tag minus vtime,
// by old/w after its weight changed from old to w: the lead stays worth
// the same number of the user's pops. A user with no lead (a new or
// caught-up one) is unchanged.
func (f *Fair) reweigh(user string, old, w float64) {
	fl := f.flows[user]
	if fl == nil || old == w {
		return
	}
	lead := fl.tag - f.vtime
	if lead <= 0 {
		return
	}
	// Capped so that the tag stays finite for the most extreme weights
	// CheckWeight accepts; renormalize and serve keep it so.
	fl.tag = f.vtime + min(lead*(old/w), maxLead)
	if !fl.q.empty() {
		heap.Fix(&f.active, fl.pos)
		return
	}
	// Filed again as an idle user is: remembered only while its tag is
	// ahead of vtime, which a lead that rounded away is not.
	heap.Remove(&f.idle, fl.pos)
	f.retire(fl)
}

// maxLead bounds a rescaled lead (reweigh).
const maxLead = math.MaxFloat64 / 4

// Weight returns user's configured weight, or the default weight.
func (f *Fair) Weight(user string) float64 { return f.weights.get(user) }

// Len returns the number of queued reservations.
func (f *Fair) Len() int { return f.n }

// Push appends r to the queue of r.User.
func (f *Fair) Push(r Reservation) {
	f.seq++
	n := &node{r: r, seq: f.seq}
	f.idx.add(n)
	f.n++

	fl := f.flows[r.User]
	switch {
	case fl == nil:
		if f.flows == nil {
			f.flows = make(map[string]*flow)
		}
		// A brand-new user starts now: no credit for time before it
		// arrived.
		fl = &flow{user: r.User, tag: f.vtime}
		f.flows[r.User] = fl
		f.peakFlows = max(f.peakFlows, len(f.flows))
	case fl.q.empty():
		// A remembered idle user must still pay for its last service,
		// but gets no credit for the time it spent idle.
		heap.Remove(&f.idle, fl.pos)
		fl.tag = max(fl.tag, f.vtime)
	default:
		// Already backlogged: join the tail; the tag is unaffected.
		fl.q.pushBack(inQueue, n)
		n.flow = fl
		return
	}
	// The head must be linked before the flow enters the active heap,
	// whose ordering reads the head's arrival number.
	fl.q.pushBack(inQueue, n)
	n.flow = fl
	heap.Push(&f.active, fl)
}

// Pop removes and returns the head reservation of the user with the smallest
// start tag; false when empty.
func (f *Fair) Pop() (Reservation, bool) {
	if len(f.active.fs) == 0 {
		return Reservation{}, false
	}
	return f.serve(f.active.fs[0]), true
}

// serve pops the head reservation of fl, an active flow, charging its user
// as Pop does. Choosy uses it to serve a user of its own choosing.
func (f *Fair) serve(fl *flow) Reservation {
	n := fl.q.head

	f.vtime = max(f.vtime, fl.tag)
	if f.vtime >= renormAt {
		// Before charging: with every tag shifted so that vtime is 0,
		// start+1/w stays finite for any weight CheckWeight accepts.
		f.renormalize()
	}
	// Charge at pop time with the current weight, so weight changes apply
	// from the next Pop rather than only to reservations queued later.
	fl.tag += 1 / f.weights.get(fl.user)

	fl.q.remove(inQueue, n)
	n.flow = nil
	f.idx.remove(n)
	f.n--
	// fl.pos, not 0: renormalize may have reordered equal tags.
	if fl.q.empty() {
		heap.Remove(&f.active, fl.pos)
		f.retire(fl)
	} else {
		heap.Fix(&f.active, fl.pos)
	}
	f.trimIdle()
	return n.r
}

// RemoveRequest drops every queued reservation of requestID and returns how
// many were dropped. Users are not charged for removed reservations.
func (f *Fair) RemoveRequest(requestID string) int {
	c := f.idx.drain(inRequest, requestID, f.detach)
	f.trimIdle()
	return c
}

// RemoveApp drops every queued reservation of app and returns how many were
// dropped. Users are not charged for removed reservations.
func (f *Fair) RemoveApp(app string) int {
	c := f.idx.drain(inApp, app, f.detach)
	f.trimIdle()
	return c
}

// detach unlinks n, already out of the index, from its user's queue without
// charging the user: the tag stays put because nothing was served.
func (f *Fair) detach(n *node) {
	fl := n.flow
	wasHead := fl.q.head == n
	fl.q.remove(inQueue, n)
	n.flow = nil
	f.n--
	switch {
	case fl.q.empty():
		heap.Remove(&f.active, fl.pos)
		f.retire(fl)
	case wasHead:
		// Same tag, but the tie-break key (head arrival) changed.
		heap.Fix(&f.active, fl.pos)
	}
}

// retire handles a flow that just became empty: remember its finish tag if
// it is still ahead of the virtual time (see the type comment), else forget
// the user entirely.
func (f *Fair) retire(fl *flow) {
	if fl.tag > f.vtime {
		heap.Push(&f.idle, fl)
		return
	}
	delete(f.flows, fl.user)
}

// trimIdle forgets idle users whose finish tag the virtual time has caught
// up with (they would restart at vtime anyway), and the smallest-tagged idle
// users beyond one per queued reservation, which bounds memory. Each idle
// user is pushed and popped once, so this is amortised O(log users).
func (f *Fair) trimIdle() {
	for len(f.idle.fs) > 0 {
		top := f.idle.fs[0]
		if top.tag > f.vtime && len(f.idle.fs) <= f.n {
			break
		}
		heap.Pop(&f.idle)
		delete(f.flows, top.user)
	}
	if f.n == 0 {
		// Nothing queued and (by the cap above) nothing remembered: the
		// virtual clock can restart, as SFQ does when the server idles.
		f.vtime = 0
		if f.peakFlows > shrinkAbove {
			f.flows, f.active.fs, f.idle.fs, f.peakFlows = nil, nil, nil, 0
		}
		if f.ownsIdx {
			f.idx.compact()
		}
	}
}

// forgetHistory restarts every user at the current virtual time: the
// backlogged ones' start tags and the idle ones' remembered finish tags
// no longer carry service received before now. Choosy calls it when it
// falls back to fair queuing: the service it gave by cluster-wide shares
// must not count against those users in the per-node fair order (a user
// Choosy served on every free slot would otherwise wait until the others
// had caught up with all of it).
func (f *Fair) forgetHistory() {
	for _, fl := range f.active.fs {
		fl.tag = f.vtime
	}
	heap.Init(&f.active)
	for _, fl := range f.idle.fs {
		delete(f.flows, fl.user)
	}
	clear(f.idle.fs)
	f.idle.fs = f.idle.fs[:0]
}

// renormalize shifts every tag and the virtual time down by the virtual time.
// Only differences between tags matter, so service order is unchanged; the
// heaps are rebuilt because rounding may turn nearly equal tags into ties,
// which are then ordered by the secondary key.
func (f *Fair) renormalize() {
	shift := f.vtime
	for _, fl := range f.active.fs {
		fl.tag -= shift
	}
	for _, fl := range f.idle.fs {
		fl.tag -= shift
	}
	f.vtime = 0
	heap.Init(&f.active)
	heap.Init(&f.idle)
}

// flowHeap is a min-heap of flows by tag. Active flows break ties by the
// arrival of their head reservation; idle flows (which have no head) by user
// name. Both are deterministic, unlike map iteration order.
type flowHeap struct {
	fs   []*flow
	idle bool
}

func (h *flowHeap) Len() int { return len(h.fs) }

func (h *flowHeap) Less(i, j int) bool { return h.less(h.fs[i], h.fs[j]) }

// less orders two flows of the heap: by tag, then as Less describes.
func (h *flowHeap) less(a, b *flow) bool {
	if a.tag != b.tag {
		return a.tag < b.tag
	}
	if h.idle {
		return a.user < b.user
	}
	return a.q.head.seq < b.q.head.seq
}

func (h *flowHeap) Swap(i, j int) {
	h.fs[i], h.fs[j] = h.fs[j], h.fs[i]
	h.fs[i].pos = i
	h.fs[j].pos = j
}

func (h *flowHeap) Push(x any) {
	fl := x.(*flow)
	fl.pos = len(h.fs)
	h.fs = append(h.fs, fl)
}

func (h *flowHeap) Pop() any {
	last := len(h.fs) - 1
	fl := h.fs[last]
	h.fs[last] = nil // let the flow be collected once forgotten
	h.fs = h.fs[:last]
	fl.pos = -1
	return fl
}
