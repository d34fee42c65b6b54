package queue

// FIFO serves reservations in arrival order, the behaviour of the basic
// Sparrow node monitor. The zero value is an empty queue ready to use.
// It is not safe for concurrent use.
type FIFO struct {
	q   list // service order, linked through inQueue
	idx index
	n   int
}

var _ Discipline = (*FIFO)(nil)

// NewFIFO returns an empty FIFO queue.
func NewFIFO() *FIFO { return &FIFO{} }

// Push appends r to the tail of the queue.
func (f *FIFO) Push(r Reservation) {
	n := &node{r: r}
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
	f.compactIfEmpty()
	return n.r, true
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
}

func (f *FIFO) compactIfEmpty() {
	if f.n == 0 {
		f.idx.compact()
	}
}
