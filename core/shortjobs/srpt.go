package shortjobs

import (
	"container/heap"
	"math"

	"github.com/sparrowfleet/sparrow/core/queue"
)

// SRPT is a node monitor's reservation queue for the long-task-aware
// policy. It implements queue.Discipline and queue.UserCounter.
//
// Pop serves, in this order of precedence:
//
//  1. the oldest queued reservation, once the limit (NewSRPT) counts the
//     reservations served since it was queued: no reservation is ever
//     passed over (a younger one served while it waits) more than the
//     limit times;
//  2. a sticky reservation (PushSticky): a slot just freed by a task of a
//     job asks that job for another task first, oldest sticky first;
//  3. the reservation with the smallest (priority, class, job's
//     estimated remaining work, arrival): shortest remaining work first,
//     the priorities of original Sparrow above it, arrival order between
//     equals. The class counts only when SetClassFirst is on: short jobs'
//     reservations (every request not marked long by SetLong) then come
//     before long ones whatever their remaining work, so that a short job
//     with many tasks never waits behind a long task with less work left. A request without an estimate (SetWork) has infinite
//     remaining work, so such requests are served in arrival order after
//     every estimated one.
//
// SRPT is an alternative to the fair and priority disciplines, not a layer
// over them: users' weights play no part. The zero value is not usable;
// use NewSRPT. Not safe for concurrent use.
type SRPT struct {
	limit int
	seq   uint64 // arrival counter
	pops  uint64 // Pop counter

	ready  itemHeap // non-sticky items by (priority, rank, work, seq)
	sticky []*item  // sticky items in arrival order
	order  []*item  // every item in arrival order from head; removed ones are skipped
	head   int
	byReq  map[string][]*item // queued items of each request
	work   map[string]float64
	long   map[string]bool // requests marked long (SetLong) with items queued
	n      int
	nLong  int // queued items of long requests
	spare  []*item

	classFirst bool
}

type item struct {
	r      queue.Reservation
	seq    uint64
	popsAt uint64 // SRPT.pops when queued
	work   float64
	idx    int   // position in ready, or -1
	sticky bool  // in sticky, not in ready
	long   bool  // of a request marked long
	rank   uint8 // 1 for a long request's item under classFirst, else 0
	gone   bool  // served or removed
}

var (
	_ queue.Discipline  = (*SRPT)(nil)
	_ queue.UserCounter = (*SRPT)(nil)
)

// NewSRPT returns an empty SRPT queue whose reservations are passed over
// at most starveLimit times (values below 1 take DefaultStarveLimit). A
// node monitor's queue takes its Config.StarveLimit times its slots
// (NewMonitor).
func NewSRPT(starveLimit int) *SRPT {
	if starveLimit < 1 {
		starveLimit = DefaultStarveLimit
	}
	return &SRPT{limit: starveLimit, byReq: make(map[string][]*item), work: make(map[string]float64), long: make(map[string]bool)}
}

// SetClassFirst turns on (or off) serving every short request's
// reservations before any long request's (see SRPT), among those of one
// priority. Call it before the first Push.
func (q *SRPT) SetClassFirst(on bool) { q.classFirst = on }

// SetLong marks request id as a long job's: its queued reservations, and
// those pushed for it while any stay queued, count in LongQueued and, with
// SetClassFirst, come after short ones. Like SetWork it is ignored for a
// request with nothing queued, and forgotten when the request's last
// queued reservation leaves.
func (q *SRPT) SetLong(id string) {
	list := q.byReq[id]
	if len(list) == 0 {
		return
	}
	q.long[id] = true
	for _, it := range list {
		if !it.long {
			it.long = true
			it.rank = q.rankOf(true)
			q.nLong++
			if it.idx >= 0 {
				heap.Fix(&q.ready, it.idx)
			}
		}
	}
}

func (q *SRPT) rankOf(long bool) uint8 {
	if long && q.classFirst {
		return 1
	}
	return 0
}

// LongQueued returns how many queued reservations (sticky ones included)
// belong to requests marked long.
func (q *SRPT) LongQueued() int { return q.nLong }

// SetWork sets the estimated remaining work of request id (its unlaunched
// tasks times their estimated duration) and reorders its queued
// reservations. The node monitor calls it after queueing a request's
// reservations, when their probe carries an estimate, and whenever a
// scheduler's answer updates it. It is ignored for a request with no
// reservation queued, and the estimate is forgotten when the request's
// last queued reservation leaves, so nothing is kept for requests gone.
// NaN or negative work is ignored.
func (q *SRPT) SetWork(id string, work float64) {
	list := q.byReq[id]
	if math.IsNaN(work) || work < 0 || len(list) == 0 {
		return
	}
	q.work[id] = work
	for _, it := range list {
		it.work = work
		if it.idx >= 0 {
			heap.Fix(&q.ready, it.idx)
		}
	}
}

func (q *SRPT) newItem(r queue.Reservation) *item {
	var it *item
	if k := len(q.spare); k > 0 {
		it = q.spare[k-1]
		q.spare = q.spare[:k-1]
	} else {
		it = &item{}
	}
	w, ok := q.work[r.RequestID]
	if !ok {
		w = math.Inf(1)
	}
	*it = item{r: r, seq: q.seq, popsAt: q.pops, work: w, idx: -1, long: q.long[r.RequestID]}
	if it.long {
		it.rank = q.rankOf(true)
		q.nLong++
	}
	q.seq++
	q.order = append(q.order, it)
	q.byReq[r.RequestID] = append(q.byReq[r.RequestID], it)
	q.n++
	return it
}

// Push implements queue.Discipline.
func (q *SRPT) Push(r queue.Reservation) {
	heap.Push(&q.ready, q.newItem(r))
}

// PushSticky queues r ahead of every non-sticky reservation (see SRPT):
// the node monitor calls it when a task of r's request ends and the
// request may have tasks left, then serves the freed slot as usual.
func (q *SRPT) PushSticky(r queue.Reservation) {
	it := q.newItem(r)
	it.sticky = true
	q.sticky = append(q.sticky, it)
}

// Pop implements queue.Discipline.
func (q *SRPT) Pop() (queue.Reservation, bool) {
	if q.n == 0 {
		return queue.Reservation{}, false
	}
	q.trimOrder()
	var it *item
	if old := q.order[q.head]; q.pops-old.popsAt >= uint64(q.limit) {
		it = old
	} else if len(q.sticky) > 0 {
		it = q.sticky[0]
	} else {
		it = q.ready[0]
	}
	q.pops++
	r := it.r
	q.remove(it)
	return r, true
}

// trimOrder drops served and removed items from the front of order.
func (q *SRPT) trimOrder() {
	for q.head < len(q.order) && q.order[q.head].gone {
		q.free(q.order[q.head])
		q.order[q.head] = nil
		q.head++
	}
	if q.head == len(q.order) || (q.head >= 64 && 2*q.head >= len(q.order)) {
		n := copy(q.order, q.order[q.head:])
		clear(q.order[n:])
		q.order = q.order[:n]
		q.head = 0
	}
}

// remove takes it out of the queue (it stays in order, marked gone, until
// trimmed).
func (q *SRPT) remove(it *item) {
	it.gone = true
	q.n--
	if it.long {
		q.nLong--
	}
	if it.sticky {
		for k, s := range q.sticky {
			if s == it {
				q.sticky = append(q.sticky[:k], q.sticky[k+1:]...)
				break
			}
		}
	} else if it.idx >= 0 {
		heap.Remove(&q.ready, it.idx)
	}
	id := it.r.RequestID
	list := q.byReq[id]
	for k, x := range list {
		if x == it {
			list = append(list[:k], list[k+1:]...)
			break
		}
	}
	if len(list) == 0 {
		delete(q.byReq, id)
		delete(q.work, id)
		delete(q.long, id)
	} else {
		q.byReq[id] = list
	}
}

// free returns a trimmed item for reuse.
func (q *SRPT) free(it *item) {
	*it = item{}
	if len(q.spare) < 1024 {
		q.spare = append(q.spare, it)
	}
}

// RemoveRequest implements queue.Discipline.
func (q *SRPT) RemoveRequest(id string) int {
	list := append([]*item(nil), q.byReq[id]...)
	for _, it := range list {
		q.remove(it)
	}
	q.trimOrder()
	return len(list)
}

// RemoveApp implements queue.Discipline.
func (q *SRPT) RemoveApp(app string) int {
	var drop []*item
	for _, it := range q.order[q.head:] {
		if !it.gone && it.r.App == app {
			drop = append(drop, it)
		}
	}
	for _, it := range drop {
		q.remove(it)
	}
	q.trimOrder()
	return len(drop)
}

// Len implements queue.Discipline.
func (q *SRPT) Len() int { return q.n }

// QueuedByUser implements queue.UserCounter.
func (q *SRPT) QueuedByUser(out map[string]int) {
	for _, it := range q.order[q.head:] {
		if !it.gone {
			out[it.r.User]++
		}
	}
}

// itemHeap orders items by (priority, rank, work, seq).
type itemHeap []*item

func (h itemHeap) Len() int { return len(h) }
func (h itemHeap) Less(i, j int) bool {
	a, b := h[i], h[j]
	if a.r.Priority != b.r.Priority {
		return a.r.Priority < b.r.Priority
	}
	if a.rank != b.rank {
		return a.rank < b.rank
	}
	if a.work != b.work {
		return a.work < b.work
	}
	return a.seq < b.seq
}
func (h itemHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].idx = i
	h[j].idx = j
}
func (h *itemHeap) Push(x any) {
	it := x.(*item)
	it.idx = len(*h)
	*h = append(*h, it)
}
func (h *itemHeap) Pop() any {
	old := *h
	it := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	it.idx = -1
	return it
}
