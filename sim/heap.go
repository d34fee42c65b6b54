package sim

import (
	"math"
	"unsafe"
)

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
	h.insert(e)
}

// insert adds e, whose key already holds its sequence number.
func (h *eventHeap) insert(e event) {
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

// agenda is the set of pending events: a FIFO for events scheduled a fixed
// delay after the current time (one delay per run: RTT/2, or the late
// policy's round trip), a timing wheel (if useWheel was called) for other
// events due within its span, and a heap for the rest. The simulated clock
// never goes back, so events pushed on the FIFO arrive in (t, seq) order
// already and need no sifting; the late policy's empty replies are of this
// kind. pop takes the earliest of the
// three on (t, seq), and all draw seq from one counter, so the processing
// order is exactly that of a single heap.
type agenda struct {
	h eventHeap
	// fixed is a ring buffer (power-of-two length) of fixed-delay events:
	// n of them from head. A ring, not a sliding slice, so that the few
	// hundred events in flight stay in the same, cache-warm memory.
	fixed []event
	head  int
	n     int
	wh    *wheel // nil: every other event is on the heap
	// staged holds the last few events pushed with a wheel in use, each
	// with its sequence number, whose wheel slot pushAt started loading:
	// stageN of them, the newest just before stageAt. An event is filed
	// on the wheel (or the heap) when its place in the ring is needed, by
	// which time its slot is in cache, and every one is filed before pop
	// could pass it (stageMin is at or below the earliest staged time).
	staged   [stageLen]event
	stageN   int
	stageAt  int
	stageMin float64
}

// stageLen is how many pushes an event bound for the wheel waits, its
// wheel slot loading, before it is filed: a power of two.
const stageLen = 4

func (a *agenda) len() int {
	n := a.h.len() + a.n + a.stageN
	if a.wh != nil {
		n += a.wh.n
	}
	return n
}

// useWheel makes the agenda keep events due within wheelBuckets buckets of
// width ms from the current time on a timing wheel, whose push and pop
// cost O(1) instead of the heap's O(log n). The width only sets speed:
// about twice the mean gap between pending events is best. It must be
// called before the first push; a width that is not positive and finite
// leaves every event on the heap.
func (a *agenda) useWheel(width float64) {
	if !(width > 0) || math.IsInf(width, 0) {
		return
	}
	a.wh = newWheel(width)
}

// push schedules e at any time not before the current one.
func (a *agenda) push(e event) { a.pushAt(e.t, e.key, e.node, e.slot, e.task, e.jseq) }

// pushAt is push of the event of these fields, which it writes in place
// one by one: an event built in a variable and copied whole is read back
// in wider loads than its fields were stored with, and the CPU stalls on
// such a read while the stores are pending, once per event.
func (a *agenda) pushAt(t float64, kind uint64, node, slot, task, jseq int32) {
	a.pushKeyedAt(t, a.newKey(kind), node, slot, task, jseq)
}

// newKey returns the key of an event of this kind pushed now: the next
// sequence number over the kind.
func (a *agenda) newKey(kind uint64) uint64 {
	k := kind | a.h.seq<<kindBits
	a.h.seq++
	return k
}

// pushKeyedAt is pushAt of an event whose key (newKey) was drawn
// earlier: an event that is ordered as one drawn then, among those at
// its time.
func (a *agenda) pushKeyedAt(t float64, key uint64, node, slot, task, jseq int32) {
	if a.wh == nil {
		a.h.insert(event{t: t, key: key, node: node, slot: slot, task: task, jseq: jseq})
		return
	}
	i := a.stageAt
	e := &a.staged[i]
	if a.stageN == stageLen {
		a.file(e)
	} else {
		if a.stageN == 0 {
			a.stageMin = math.Inf(1)
		}
		a.stageN++
	}
	e.t, e.key = t, key
	e.node, e.slot, e.task, e.jseq = node, slot, task, jseq
	a.stageAt = (i + 1) & (stageLen - 1)
	a.stageMin = min(a.stageMin, t)
	a.wh.load(t)
}

// file puts e, a staged event, on the wheel, or on the heap if the wheel
// has no room for it.
func (a *agenda) file(e *event) {
	if !a.wh.addAt(e.t, e.key, e.node, e.slot, e.task, e.jseq) {
		a.h.insert(*e)
	}
}

// fileStaged files every staged event.
func (a *agenda) fileStaged() {
	for k := a.stageN; k > 0; k-- {
		a.file(&a.staged[(a.stageAt-k)&(stageLen-1)])
	}
	a.stageN = 0
}

// pushFixed schedules e, whose time must not be before that of any event
// pushed with pushFixed earlier (it is now + a constant delay).
func (a *agenda) pushFixed(e event) { a.pushFixedAt(e.t, e.key, e.node, e.slot, e.task, e.jseq) }

// pushFixedAt is pushFixed of the event of these fields, written in place
// (see pushAt).
func (a *agenda) pushFixedAt(t float64, kind uint64, node, slot, task, jseq int32) {
	a.pushFixedKeyedAt(t, a.newKey(kind), node, slot, task, jseq)
}

// pushFixedKeyedAt is pushFixedAt of an event whose key was drawn earlier
// (see pushKeyedAt). Among the fixed-delay events due at one time, keys
// must be pushed in increasing order.
func (a *agenda) pushFixedKeyedAt(t float64, key uint64, node, slot, task, jseq int32) {
	if a.n == len(a.fixed) {
		a.grow()
	}
	e := &a.fixed[(a.head+a.n)&(len(a.fixed)-1)]
	e.t, e.key = t, key
	e.node, e.slot, e.task, e.jseq = node, slot, task, jseq
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

// peekTimed returns the earliest pending event not on the fixed-delay
// FIFO and not staged, or nil if there is none: a hint, as a staged event
// may come before it. The caller may read it but not change it.
func (a *agenda) peekTimed() *event {
	var best *event
	if a.wh != nil && a.wh.n > 0 {
		best = &a.wh.ev[a.wh.first()]
	}
	if len(a.h.ev) > 0 && (best == nil || a.h.ev[0].before(best)) {
		best = &a.h.ev[0]
	}
	return best
}

// peekWheel returns an event about k events after the earliest on the
// timing wheel, or nil: the k-th in bucket order from the first bucket
// that may hold one, within the next aheadBuckets buckets. Events in one
// bucket are in no order, so it is a hint, for loading what a coming
// event will touch; the caller may read it but not change it.
func (a *agenda) peekWheel(k int) *event {
	if a.wh == nil {
		return nil
	}
	return a.wh.ahead(k)
}

// pop removes and returns the earliest event; the agenda must not be empty.
func (a *agenda) pop() event {
	const fromFixed, fromWheel, fromHeap = 1, 2, 3
	var best *event
	from := 0
	var wi int32
choose:
	if a.n > 0 {
		best, from = &a.fixed[a.head], fromFixed
	}
	if a.wh != nil && a.wh.n > 0 {
		wi = a.wh.first()
		if e := &a.wh.ev[wi]; best == nil || e.before(best) {
			best, from = e, fromWheel
		}
	}
	if len(a.h.ev) > 0 && (best == nil || a.h.ev[0].before(best)) {
		best, from = &a.h.ev[0], fromHeap
	}
	if a.stageN > 0 && (best == nil || a.stageMin <= best.t) {
		// A staged event may come first: file them all and choose again.
		a.fileStaged()
		best, from = nil, 0
		goto choose
	}
	var e event
	switch from {
	case fromFixed:
		e = *best
		a.head = (a.head + 1) & (len(a.fixed) - 1)
		a.n--
	case fromWheel:
		e = a.wh.remove(wi)
	default:
		e = a.h.pop()
	}
	if a.wh != nil {
		a.wh.advance(e.t)
	}
	return e
}

// wheelBuckets is the number of buckets of a timing wheel, a power of two,
// and bucketEvents how many events a bucket holds; an event due in a full
// bucket, or beyond the span, goes on the heap instead. At buckets of twice
// the mean gap between task ends, the span is 2^16 of those gaps: on
// 10,000 slots, six and a half mean task durations, past which few
// exponential tasks run.
const (
	wheelBuckets = 1 << 15
	bucketEvents = 4
)

// wheel is a timing wheel: pending events in buckets of equal width of
// simulated time, bucket b holding events with floor(t/width) = b, for the
// wheelBuckets buckets from the current time's. The buckets form a ring
// (bucket b at b mod wheelBuckets), each up to bucketEvents events in no
// order, side by side, so that the scan for the earliest event, which moves
// forward with the clock, reads memory in order. The earliest event is the
// least (t, seq) of the first non-empty bucket: floor(t/width) never
// decreases as t grows, so an event in a later bucket is never earlier.
type wheel struct {
	inv float64 // 1 / width
	// ev[p*bucketEvents:][:cnt[p]] are the events at ring position p.
	ev  []event
	cnt []uint8
	n   int // events on the wheel
	// base is the bucket of the current time: every event on the wheel is
	// in [base, base+wheelBuckets). Buckets in [base, cur) are empty.
	base, cur int64
	// known says that minI is what first would return.
	known bool
	minI  int32
}

func newWheel(width float64) *wheel {
	return &wheel{
		inv: 1 / width,
		ev:  make([]event, wheelBuckets*bucketEvents),
		cnt: make([]uint8, wheelBuckets),
	}
}

// addAt puts the event of these fields on the wheel, written in place
// (see agenda.pushAt), if it is due within the wheel's span and its
// bucket has room, and reports whether it did.
func (w *wheel) addAt(t float64, key uint64, node, slot, task, jseq int32) bool {
	f := t * w.inv
	if !(f < float64(w.base+wheelBuckets)) {
		return false
	}
	b := int64(f)
	if b < w.base {
		return false // not expected: times are never before the current one
	}
	p := b & (wheelBuckets - 1)
	c := w.cnt[p]
	if c == bucketEvents {
		return false
	}
	e := &w.ev[p*bucketEvents+int64(c)]
	e.t, e.key = t, key
	e.node, e.slot, e.task, e.jseq = node, slot, task, jseq
	w.cnt[p] = c + 1
	w.n++
	if b <= w.cur {
		w.known = false // e may be the earliest
		w.cur = min(w.cur, b)
	}
	return true
}

// first returns the index in ev of the earliest event on the wheel, which
// must not be empty.
func (w *wheel) first() int32 {
	if w.known {
		return w.minI
	}
	w.cur = max(w.cur, w.base)
	for w.cnt[w.cur&(wheelBuckets-1)] == 0 {
		w.cur++
	}
	p := w.cur & (wheelBuckets - 1)
	lo := int32(p * bucketEvents)
	i := lo
	for k := lo + 1; k < lo+int32(w.cnt[p]); k++ {
		if w.ev[k].before(&w.ev[i]) {
			i = k
		}
	}
	w.known, w.minI = true, i
	return i
}

// aheadBuckets bounds the scan of wheel.ahead.
const aheadBuckets = 64

// ahead returns the k-th event in bucket order from the first bucket that
// may hold one (see agenda.peekWheel), or nil if fewer than k+1 are in the
// next aheadBuckets buckets.
func (w *wheel) ahead(k int) *event {
	if w.n == 0 {
		return nil
	}
	b := max(w.cur, w.base)
	for end := b + aheadBuckets; b < end; b++ {
		p := b & (wheelBuckets - 1)
		c := int(w.cnt[p])
		if k < c {
			return &w.ev[p*bucketEvents+int64(k)]
		}
		k -= c
	}
	return nil
}

// load starts loading the slot an event due at t would take on the
// wheel, if it would take one.
func (w *wheel) load(t float64) {
	f := t * w.inv
	if !(f < float64(w.base+wheelBuckets)) || int64(f) < w.base {
		return
	}
	p := int64(f) & (wheelBuckets - 1)
	if c := w.cnt[p]; c < bucketEvents {
		prefetch(uintptr(unsafe.Pointer(&w.ev[p*bucketEvents+int64(c)])), 1)
	}
}

// remove takes ev[i], which first returned, off the wheel.
func (w *wheel) remove(i int32) event {
	e := w.ev[i]
	p := i / bucketEvents
	last := p*bucketEvents + int32(w.cnt[p]) - 1
	w.ev[i] = w.ev[last]
	w.cnt[p]--
	w.n--
	w.known = false
	return e
}

// advance moves the wheel's base to the bucket of time t, the current
// time, which must not be after that of any event on the wheel.
func (w *wheel) advance(t float64) {
	if f := t * w.inv; f < float64(w.base+wheelBuckets) {
		w.base = max(w.base, int64(f))
	} else if w.n == 0 && f < 1<<62 {
		// The clock jumped past the span; with nothing on the wheel the
		// span can follow it.
		w.base = int64(f)
	}
}
