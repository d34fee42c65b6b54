package queue

// Every queued reservation lives in one node that is threaded onto three
// intrusive doubly linked lists at once: its service queue (the FIFO list, or
// its user's flow), the list of its request, and the list of its app. Popping
// a node or removing a whole request/app then unlinks each affected node in
// O(1), so there are no tombstones, Len is a plain counter, and memory is
// exactly proportional to what is queued.

// linkKind selects which of a node's lists an operation walks.
type linkKind int

const (
	inQueue   linkKind = iota // service order: the FIFO list or a user's flow
	inRequest                 // all queued nodes with one RequestID
	inApp                     // all queued nodes with one App
	numLinks
)

// shrinkAbove is the number of map keys / heap entries above which a
// container that has drained empty is reallocated. Go maps never shrink, so
// without this a one-off burst of many distinct requests or users would pin
// its peak memory forever; below the threshold we keep the allocation to
// avoid churn on node monitors whose queue is often briefly empty.
const shrinkAbove = 1024

type link struct{ prev, next *node }

type node struct {
	r     Reservation
	seq   uint64 // arrival order in the owning discipline, for deterministic ties
	links [numLinks]link
	owner [numLinks]*list // index headers the node is filed under (inRequest, inApp)
	flow  *flow           // owning per-user flow; nil under FIFO
}

// list is a doubly linked list threaded through node.links[k]. It is a small
// value (no length, no sentinel) so the index can store lists directly in
// maps without allocating a header per key.
type list struct{ head, tail *node }

func (l *list) empty() bool { return l.head == nil }

func (l *list) pushBack(k linkKind, n *node) {
	n.links[k] = link{prev: l.tail}
	if l.tail == nil {
		l.head = n
	} else {
		l.tail.links[k].next = n
	}
	l.tail = n
}

func (l *list) remove(k linkKind, n *node) {
	ln := &n.links[k]
	if ln.prev == nil {
		l.head = ln.next
	} else {
		ln.prev.links[k].next = ln.next
	}
	if ln.next == nil {
		l.tail = ln.prev
	} else {
		ln.next.links[k].prev = ln.prev
	}
	*ln = link{}
}

// index finds the queued nodes of a request or an app without scanning the
// queue. Keys are deleted as soon as their list empties, so it never holds
// more keys than there are queued reservations.
//
// The maps hold list headers by pointer and every node points at the
// headers it is filed under, so that unlinking a node (every Pop) touches a
// map only when its list empties, and filing one (every Push) costs one map
// lookup per list instead of a lookup and a store. Emptied headers are kept
// on a free list for reuse, so a steady stream of requests allocates none.
type index struct {
	byKey [numLinks]map[string]*list // only inRequest and inApp are used
	spare []*list                    // emptied headers, for reuse
	// last caches, per list kind, the header most recently filed into
	// and its key, so that consecutive pushes for one app (or one
	// request's n reservations) skip the map. Cleared when that header
	// is released.
	lastKey  [numLinks]string
	lastList [numLinks]*list
	peak     int // most keys held since the last reset
	// grown[k] records that byKey[k] has held more than smallKeys keys
	// since it was last allocated. Go maps never shrink, and one that has
	// grown past a single group probes slowly once the churn of request
	// IDs has filled it with tombstones; so when such a map empties it is
	// dropped, and the next add allocates a small one again.
	grown [numLinks]bool
}

func indexKey(k linkKind, r *Reservation) string {
	if k == inRequest {
		return r.RequestID
	}
	return r.App
}

func (ix *index) add(n *node) {
	for _, k := range [...]linkKind{inRequest, inApp} {
		m := ix.byKey[k]
		if m == nil {
			m = make(map[string]*list)
			ix.byKey[k] = m
		}
		key := indexKey(k, &n.r)
		var l *list
		if ix.lastList[k] != nil && ix.lastKey[k] == key {
			l = ix.lastList[k]
		} else {
			l = m[key]
		}
		if l == nil {
			if ns := len(ix.spare); ns > 0 {
				l = ix.spare[ns-1]
				ix.spare = ix.spare[:ns-1]
			} else {
				l = &list{}
			}
			m[key] = l
			ix.peak = max(ix.peak, len(m))
			if len(m) > smallKeys {
				ix.grown[k] = true
			}
		}
		l.pushBack(k, n)
		n.owner[k] = l
		ix.lastKey[k], ix.lastList[k] = key, l
	}
}

// remove unlinks n from its request and app lists.
func (ix *index) remove(n *node) {
	ix.unlink(inRequest, n)
	ix.unlink(inApp, n)
}

func (ix *index) unlink(k linkKind, n *node) {
	l := n.owner[k]
	l.remove(k, n)
	n.owner[k] = nil
	if l.empty() {
		delete(ix.byKey[k], indexKey(k, &n.r))
		ix.release(k, l)
		ix.dropIfEmpty(k)
	}
}

// smallKeys is the number of keys a Go map holds in its single-group small
// form.
const smallKeys = 8

// dropIfEmpty forgets byKey[k] if it is empty and has grown past its small
// form (see index.grown).
func (ix *index) dropIfEmpty(k linkKind) {
	if ix.grown[k] && len(ix.byKey[k]) == 0 {
		ix.byKey[k] = nil
		ix.grown[k] = false
	}
}

// release keeps an emptied header for reuse, up to a bound, so that the
// spare list never outgrows what a busy node monitor needed recently.
func (ix *index) release(k linkKind, l *list) {
	if ix.lastList[k] == l {
		ix.lastKey[k], ix.lastList[k] = "", nil
	}
	if len(ix.spare) < shrinkAbove {
		ix.spare = append(ix.spare, l)
	}
}

// drain removes from the index every node filed under key in list k (a
// request or an app), calls detach on each so the discipline can unlink it
// from its service queue, and returns how many there were. Cost is
// proportional to the number of nodes removed, never to the queue length.
func (ix *index) drain(k linkKind, key string, detach func(*node)) int {
	m := ix.byKey[k]
	l, ok := m[key]
	if !ok {
		return 0
	}
	delete(m, key) // the whole list goes, so skip per-node head/tail updates
	other := inApp
	if k == inApp {
		other = inRequest
	}
	count := 0
	for n := l.head; n != nil; {
		next := n.links[k].next
		n.links[k] = link{}
		n.owner[k] = nil
		ix.unlink(other, n)
		detach(n)
		count++
		n = next
	}
	*l = list{}
	ix.release(k, l)
	ix.dropIfEmpty(k)
	return count
}

// queuedByUser adds to out, for every queued node, one reservation under its
// user. Cost is proportional to the number of queued reservations.
func (ix *index) queuedByUser(out map[string]int) {
	for _, l := range ix.byKey[inRequest] {
		for n := l.head; n != nil; n = n.links[inRequest].next {
			out[n.r.User]++
		}
	}
}

// compact releases oversized maps. The caller must only call it when nothing
// is queued.
func (ix *index) compact() {
	if ix.peak > shrinkAbove {
		*ix = index{}
	}
}
