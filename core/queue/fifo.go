package queue

// FIFO serves reservations in arrival order, the behaviour of the basic
// Sparrow node monitor. The zero value is an empty queue ready to use; a
// FIFO must not be copied after first use. It is not safe for concurrent
// use.
type FIFO struct {
	// A short queue (the usual case at a node monitor) is kept by value in
	// ring, with nothing else: then a push or a pop touches one slot of one
	// small array, instead of two linked nodes and the index's headers,
	// and removing a request or an app scans at most ringMax reservations.
	// Once a push would queue more than ringMax, every queued reservation
	// moves into linked nodes filed in idx (linked is set), so that a long
	// queue keeps O(1) pops and removals in time proportional to what is
	// removed; the FIFO returns to the ring when it next empties. Service
	// order, counts and results are the same in both forms.
	// The ring holds entries, whose shapes are interned in the pool's
	// table if the FIFO has a pool, else in its own (see table).
	// The header (ring, pool, head, n, linked) is 48 bytes, so that the
	// inline ring after it stays 32-byte aligned (one entry never spans
	// two cache lines) where the FIFO is, and shares the last line of a
	// slots.Core's header in a node monitor that lays the two side by side.
	ring []entry // power-of-two length; n of them from head
	// pool, if set (SetRingPool), lends the array ring moves to when the
	// queue outgrows small, and takes it back when the queue is short
	// again (RingPool); big is then unused. It is read on every pop, so it sits with the
	// ring's header, ahead of small.
	pool   *RingPool
	head   int32
	n      int32 // queued reservations, in either form
	linked bool
	// small is the ring while at most smallRing are queued, inside the
	// FIFO so that a node monitor's short queue shares its memory; ring
	// moves to a separate array when the queue outgrows small and comes
	// back when it empties. big keeps that array for the next time. So a
	// FIFO must not be copied once used.
	small [smallRing]entry
	big   []entry

	// long is the linked form, allocated the first time the queue
	// outgrows its ring and kept for the next: it is most of a FIFO's
	// size, and most of a simulator's thousands of FIFOs never need it.
	long *linkedQueue
	// own interns the ring's shapes when there is no pool. Last, as it is
	// not read while a pool's FIFO keeps a short queue.
	own shapeTable
}

// linkedQueue is a FIFO's linked form (see FIFO.ring).
type linkedQueue struct {
	q list // service order, through inQueue
	// spare heads a list of unlinked nodes for reuse (chained through
	// their inQueue next link), so that a node monitor that queues and
	// serves reservations all day does not allocate one each. A list
	// through the nodes themselves, not a slice of pointers, so that
	// reusing one touches only the node being written anyway.
	spare  *node
	nSpare int
	idx    index
}

// ringMax is the most reservations a FIFO keeps in its ring (see FIFO.ring).
const ringMax = 32

// smallRing is the length of the ring inside the FIFO (see FIFO.small). A
// power of two below ringMax.
const smallRing = 8

var (
	_ Discipline  = (*FIFO)(nil)
	_ UserCounter = (*FIFO)(nil)
)

// UserCounter is implemented by disciplines that can count their queued
// reservations by user themselves, so that a node monitor need not keep its
// own per-request counts up to date on every push and pop.
type UserCounter interface {
	// QueuedByUser adds each queued reservation to out under its User.
	QueuedByUser(out map[string]int)
}

// QueuedByUser adds each queued reservation to out under its User. It costs
// O(queued reservations).
func (f *FIFO) QueuedByUser(out map[string]int) {
	if f.linked {
		f.long.idx.queuedByUser(out)
		return
	}
	t := f.table()
	for i := range int(f.n) {
		out[t.s[f.ring[f.slot(i)].shape].user]++
	}
}

// NewFIFO returns an empty FIFO queue.
func NewFIFO() *FIFO { return &FIFO{} }

// RingPool holds the arrays of FIFOs that outgrew their inline ring, for
// FIFOs that share it (SetRingPool): a FIFO borrows one when its queue grows
// past the inline ring and returns it when its queue empties or a pop
// leaves it half the inline ring's length (moving it back inline). A caller
// with thousands of FIFOs of which only a few are long at any time (a
// simulator's node monitors) then keeps as many arrays as its longest queues
// of the moment need, instead of one per FIFO that was ever long. The zero
// value is an empty pool ready to use. Not safe for concurrent use: every
// FIFO sharing a pool must be used from one goroutine.
type RingPool struct {
	free [][]entry // each of length ringMax, all zero
	// shapes interns the shapes of every sharing FIFO's ring entries:
	// FIFOs that share a pool usually queue reservations of the same few
	// shapes, which one table then keeps in a few cache lines.
	shapes shapeTable
}

func (p *RingPool) get() []entry {
	if k := len(p.free); k > 0 {
		r := p.free[k-1]
		p.free[k-1] = nil
		p.free = p.free[:k-1]
		return r
	}
	return make([]entry, ringMax)
}

// put takes back r, whose entries must all be zero.
func (p *RingPool) put(r []entry) { p.free = append(p.free, r) }

// table returns the table interning the shapes of f's ring entries.
func (f *FIFO) table() *shapeTable {
	if f.pool != nil {
		return &f.pool.shapes
	}
	return &f.own
}

// SetRingPool makes f borrow its long ring from p (see RingPool). It must
// be called before f is first used.
func (f *FIFO) SetRingPool(p *RingPool) { f.pool = p }

// Push appends r to the tail of the queue.
func (f *FIFO) Push(r Reservation) { f.PushFrom(&r) }

// PushFrom is Push of *r, read field by field: a caller that has just set
// a field of r (its Tag, say) and passed r by value would have it copied
// out 16 bytes at a time, a read the CPU cannot serve from the pending
// 8-byte store, which stalls.
func (f *FIFO) PushFrom(r *Reservation) {
	if !f.linked {
		if f.n < ringMax {
			if int(f.n) == len(f.ring) {
				f.growRing()
			}
			f.ring[f.slot(int(f.n))] = f.table().pack(r)
			f.n++
			return
		}
		f.link()
	}
	f.pushNode(*r)
}

// pushNode appends r to the linked queue.
func (f *FIFO) pushNode(r Reservation) {
	lq := f.long
	n := lq.spare
	if n != nil {
		lq.spare = n.links[inQueue].next
		lq.nSpare--
		n.links[inQueue].next = nil
		n.r = r
	} else {
		n = &node{r: r}
	}
	lq.q.pushBack(inQueue, n)
	lq.idx.add(n)
	f.n++
}

// slot returns the ring index of the i-th queued reservation.
func (f *FIFO) slot(i int) int { return (int(f.head) + i) & (len(f.ring) - 1) }

// growRing makes the ring small if it has no storage, else doubles it (up
// to ringMax), keeping the queue in order.
func (f *FIFO) growRing() {
	if len(f.ring) == 0 {
		f.ring, f.head = f.small[:], 0
		return
	}
	var ring []entry
	if f.pool != nil {
		ring = f.pool.get()
	} else if len(f.ring) == smallRing && len(f.big) > smallRing {
		ring = f.big
	} else {
		ring = make([]entry, 2*len(f.ring))
		f.big = ring
	}
	for i := range int(f.n) {
		j := f.slot(i)
		ring[i] = f.ring[j]
		f.ring[j] = entry{}
	}
	f.ring, f.head = ring, 0
}

// emptied returns an emptied ring's storage to small, and a borrowed
// array (already cleared by the pops and removals that emptied it) to the
// pool.
func (f *FIFO) emptied() {
	if f.pool != nil && len(f.ring) > smallRing {
		f.pool.put(f.ring)
	}
	f.ring, f.head = f.small[:], 0
}

// shrinkRing moves a borrowed ring's reservations, in order, back into
// small and returns the array to the pool, so that a queue that stays
// short but never quite empties does not hold a long array.
func (f *FIFO) shrinkRing() {
	for i := range int(f.n) {
		j := f.slot(i)
		f.small[i] = f.ring[j]
		f.ring[j] = entry{}
	}
	f.pool.put(f.ring)
	f.ring, f.head = f.small[:], 0
}

// link moves the ring's reservations, in order, into linked nodes filed
// in the index.
func (f *FIFO) link() {
	if f.long == nil {
		f.long = &linkedQueue{}
	}
	k := int(f.n)
	f.n = 0
	t := f.table()
	for i := 0; i < k; i++ {
		j := f.slot(i)
		f.pushNode(t.unpack(&f.ring[j]))
		f.ring[j] = entry{}
	}
	f.head = 0
	f.linked = true
}

// Pop removes and returns the oldest queued reservation; false when empty.
func (f *FIFO) Pop() (r Reservation, ok bool) {
	ok = f.PopInto(&r)
	return r, ok
}

// PopInto is Pop into *r, which it leaves alone when the queue is empty.
// A caller on a hot path pops into its own variable this way: a
// reservation returned by value is stored 8 bytes at a time and copied
// out 16 at a time, a read the CPU cannot serve from its pending stores,
// which stalls.
func (f *FIFO) PopInto(r *Reservation) bool {
	if !f.linked {
		if f.n == 0 {
			return false
		}
		e := &f.ring[f.head]
		f.table().unpackTo(r, e)
		// Cleared, so that a served reservation's strings are not kept
		// alive by the ring.
		*e = entry{}
		f.head = (f.head + 1) & int32(len(f.ring)-1)
		if f.n--; f.n == 0 {
			f.emptied()
		} else if f.pool != nil && f.n == smallRing/2 && len(f.ring) > smallRing {
			f.shrinkRing()
		}
		return true
	}
	lq := f.long
	n := lq.q.head
	lq.q.remove(inQueue, n)
	lq.idx.remove(n)
	f.n--
	*r = n.r
	f.recycle(n)
	f.compactIfEmpty()
	return true
}

// HeadTag returns the Tag of the reservation Pop would return next, without
// removing it; false when the queue is empty. It reads only that
// reservation's entry, so a caller that knows which queue it will pop soon
// (the simulator) can have its head loaded into the cache early.
func (f *FIFO) HeadTag() (uint64, bool) {
	if f.n == 0 {
		return 0, false
	}
	if !f.linked {
		return f.ring[f.head].tag, true
	}
	return f.long.q.head.r.Tag, true
}

// RemoveRequest drops every queued reservation of requestID and returns how
// many were dropped.
func (f *FIFO) RemoveRequest(requestID string) int {
	if !f.linked {
		return f.removeFromRing(func(e *entry) bool { return e.requestID == requestID })
	}
	c := f.long.idx.drain(inRequest, requestID, f.detach)
	f.compactIfEmpty()
	return c
}

// RemoveApp drops every queued reservation of app and returns how many were
// dropped.
func (f *FIFO) RemoveApp(app string) int {
	if !f.linked {
		t := f.table()
		return f.removeFromRing(func(e *entry) bool { return t.s[e.shape].app == app })
	}
	c := f.long.idx.drain(inApp, app, f.detach)
	f.compactIfEmpty()
	return c
}

// removeFromRing drops the ring's reservations for which drop is true,
// keeping the others in order, and returns how many were dropped.
func (f *FIFO) removeFromRing(drop func(*entry) bool) int {
	t := f.table()
	kept := 0
	for i := range int(f.n) {
		e := &f.ring[f.slot(i)]
		if drop(e) {
			t.release(e.shape)
			continue
		}
		if kept != i {
			f.ring[f.slot(kept)] = *e
		}
		kept++
	}
	for i := kept; i < int(f.n); i++ {
		f.ring[f.slot(i)] = entry{}
	}
	c := int(f.n) - kept
	f.n = int32(kept)
	if kept == 0 {
		f.emptied()
	}
	return c
}

// Len returns the number of queued reservations.
func (f *FIFO) Len() int { return int(f.n) }

// detach unlinks n (already out of the index) from the service order.
func (f *FIFO) detach(n *node) {
	f.long.q.remove(inQueue, n)
	f.n--
	f.recycle(n)
}

// recycle keeps n, unlinked from every list, for reuse by Push, up to a
// bound so that a burst's worth of nodes is not pinned forever.
func (f *FIFO) recycle(n *node) {
	if lq := f.long; lq.nSpare < shrinkAbove {
		*n = node{}
		n.links[inQueue].next = lq.spare
		lq.spare = n
		lq.nSpare++
	}
}

// compactIfEmpty returns an emptied linked FIFO to its ring.
func (f *FIFO) compactIfEmpty() {
	if f.n == 0 {
		f.long.idx.compact()
		f.linked = false
		f.emptied()
	}
}
