package sim

// event is one scheduled occurrence. Events are small values held directly
// in the heap's slice, so scheduling one allocates nothing once the slice
// has grown to the working set.
type event struct {
	t float64 // simulated time, ms
	// key is the scheduling order shifted left 8 bits, over the kind:
	// ties at equal t run first-scheduled first. One word for both keeps
	// an event at 32 bytes, two to a cache line.
	key  uint64
	node int32 // node index, or -1
	slot int32 // job slot, or -1
	task int32 // task index within the job, or -1
	jseq int32 // job sequence number, to detect a reused slot
}

// kindBits is how many low bits of event.key hold the kind.
const kindBits = 8

// kind is the event's kind (evArrival ...).
func (a *event) kind() uint8 { return uint8(a.key) }

func (a *event) before(b *event) bool {
	return a.t < b.t || (a.t == b.t && a.key < b.key)
}

// eventHeap is a 4-ary min-heap on (t, key), key being the sequence
// number over the kind. The sequence tie-break makes
// the processing order, and so every result, a function of the seed alone.
type eventHeap struct {
	ev  []event
	seq uint64
}

func (h *eventHeap) len() int { return len(h.ev) }

func (h *eventHeap) push(e event) {
	e.key |= h.seq << kindBits
	h.seq++
	h.ev = append(h.ev, e)
	ev := h.ev
	i := len(ev) - 1
	for i > 0 {
		p := (i - 1) / 4
		if !e.before(&ev[p]) {
			break
		}
		ev[i] = ev[p]
		i = p
	}
	ev[i] = e
}

func (h *eventHeap) pop() event {
	ev := h.ev
	top := ev[0]
	n := len(ev) - 1
	last := ev[n]
	h.ev = ev[:n]
	if n == 0 {
		return top
	}
	ev = ev[:n]
	i := 0
	for {
		c := 4*i + 1
		if c >= n {
			break
		}
		best := c
		end := min(c+4, n)
		for k := c + 1; k < end; k++ {
			if ev[k].before(&ev[best]) {
				best = k
			}
		}
		if !ev[best].before(&last) {
			break
		}
		ev[i] = ev[best]
		i = best
	}
	ev[i] = last
	return top
}

// agenda is the set of pending events: a heap for events at arbitrary
// times, and a FIFO for events scheduled a fixed delay (RTT/2) after the
// current time. The simulated clock never goes back, so events pushed on
// the FIFO arrive in (t, seq) order already and need no sifting; most of
// the late policy's events (getTask, reply) are of this kind. pop merges
// the two on (t, seq), and both draw seq from one counter, so the
// processing order is exactly that of a single heap.
type agenda struct {
	h eventHeap
	// fixed is a ring buffer (power-of-two length) of fixed-delay events:
	// n of them from head. A ring, not a sliding slice, so that the few
	// hundred events in flight stay in the same, cache-warm memory.
	fixed []event
	head  int
	n     int
}

func (a *agenda) len() int { return a.h.len() + a.n }

// push schedules e at any time not before the current one.
func (a *agenda) push(e event) { a.h.push(e) }

// pushFixed schedules e, whose time must not be before that of any event
// pushed with pushFixed earlier (it is now + a constant delay).
func (a *agenda) pushFixed(e event) {
	e.key |= a.h.seq << kindBits
	a.h.seq++
	if a.n == len(a.fixed) {
		a.grow()
	}
	a.fixed[(a.head+a.n)&(len(a.fixed)-1)] = e
	a.n++
}

// grow doubles the ring, keeping the pending events in order.
func (a *agenda) grow() {
	buf := make([]event, max(64, 2*len(a.fixed)))
	for i := 0; i < a.n; i++ {
		buf[i] = a.fixed[(a.head+i)&(len(a.fixed)-1)]
	}
	a.fixed, a.head = buf, 0
}

// peekFixed returns the k-th pending fixed-delay event (0 is the next), or
// nil if fewer are pending. The caller may read it but not change it.
func (a *agenda) peekFixed(k int) *event {
	if k >= a.n {
		return nil
	}
	return &a.fixed[(a.head+k)&(len(a.fixed)-1)]
}

// pop removes and returns the earliest event; the agenda must not be empty.
func (a *agenda) pop() event {
	if a.n > 0 {
		f := &a.fixed[a.head]
		if len(a.h.ev) == 0 || f.before(&a.h.ev[0]) {
			e := *f
			a.head = (a.head + 1) & (len(a.fixed) - 1)
			a.n--
			return e
		}
	}
	return a.h.pop()
}
