package queue

// FIFO serves reservations in arrival order, the behaviour of the basic
// Sparrow node monitor. The zero value is an empty queue ready to use.
// It is not safe for concurrent use.
type FIFO struct {
	q list // service order, linked through inQueue
	n int
	// spare heads a list of unlinked nodes for reuse (chained through
	// their inQueue next link), so that a node monitor that queues and
	// serves reservations all day does not allocate one each. A list
	// through the nodes themselves, not a slice of pointers, so that
	// reusing one touches only the node being written anyway.
	spare  *node
	nSpare int
	idx    index // last, as its rarely used maps are at its end
}

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
func (f *FIFO) QueuedByUser(out map[string]int) { f.idx.queuedByUser(out) }

// NewFIFO returns an empty FIFO queue.
func NewFIFO() *FIFO { return &FIFO{} }

// Push appends r to the tail of the queue.
func (f *FIFO) Push(r Reservation) {
	n := f.spare
	if n != nil {
		f.spare = n.links[inQueue].next
		f.nSpare--
		n.links[inQueue].next = nil
		n.r = r
	} else {
		n = &node{r: r}
	}
	f.q.pushBack(inQueue, n)
	f.idx.add(n)
	f.n++
}

// Pop removes and returns the oldest queued reservation; false when empty.
func (f *FIFO) Pop() (Reservation, bool) {
	n := f.q.head
	if n == nil {
		return Reservation{}, false
	}
	f.q.remove(inQueue, n)
	f.idx.remove(n)
	f.n--
	r := n.r
	f.recycle(n)
	f.compactIfEmpty()
	return r, true
}

// RemoveRequest drops every queued reservation of requestID and returns how
// many were dropped.
func (f *FIFO) RemoveRequest(requestID string) int {
	c := f.idx.drain(inRequest, requestID, f.detach)
	f.compactIfEmpty()
	return c
}

// RemoveApp drops every queued reservation of app and returns how many were
// dropped.
func (f *FIFO) RemoveApp(app string) int {
	c := f.idx.drain(inApp, app, f.detach)
	f.compactIfEmpty()
	return c
}

// Len returns the number of queued reservations.
func (f *FIFO) Len() int { return f.n }

// detach unlinks n (already out of the index) from the service order.
func (f *FIFO) detach(n *node) {
	f.q.remove(inQueue, n)
	f.n--
	f.recycle(n)
}

// recycle keeps n, unlinked from every list, for reuse by Push, up to a
// bound so that a burst's worth of nodes is not pinned forever.
func (f *FIFO) recycle(n *node) {
	if f.nSpare < shrinkAbove {
		*n = node{}
		n.links[inQueue].next = f.spare
		f.spare = n
		f.nSpare++
	}
}

func (f *FIFO) compactIfEmpty() {
	if f.n == 0 {
		f.idx.compact()
	}
}
