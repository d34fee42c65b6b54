package queue

// Every queued reservation lives in one node that is threaded onto three
// intrusive doubly linked lists at once: its service queue (the FIFO list, or
// its user's flow), the list of its request, and the list of its app. Popping
// a node or removing a whole request/app then unlinks each affected node in
// O(1), so there are no tombstones, Len is a plain counter, and memory is
// exactly proportional to what is queued. (A FIFO keeps a short queue in a
// plain ring instead and files its reservations in nodes only past ringMax;
// see FIFO.)

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
	// Fields used on every push and pop come first, so that they share
	// cache lines; a simulator touches thousands of indexes in turn.

	// last caches, per list kind, the header most recently filed into
	// and its key, so that consecutive pushes for one app (or one
	// request's n reservations) skip the lookup. Cleared when that header
	// is released.
	lastKey  [numLinks]string
	lastList [numLinks]*list
	// reqInline and appInline hold the headers of a few requests and an
	// app inside the index itself, consulted before byKey: a node monitor
	// usually has reservations of only a few requests and one app queued,
	// and then filing one or emptying a list costs a few string
	// comparisons in memory already at hand instead of hashing into a
	// separately allocated map. An entry is in use while its list is not
	// empty; a key is filed either inline or in the map, never both.
	reqInline [inlineKeys]inlineEntry
	appInline [1]inlineEntry

	byKey [numLinks]map[string]*list // only inRequest and inApp are used
	spare []*list                    // emptied headers, for reuse
	peak  int                        // most keys held since the last reset
	// grown[k] records that byKey[k] has held more than smallKeys keys
	// since it was last allocated. Go maps never shrink, and one that has
	// grown past a single group probes slowly once the churn of request
	// IDs has filled it with tombstones; so when such a map empties it is
	// dropped, and the next add allocates a small one again.
	grown [numLinks]bool
}

// inlineKeys is how many requests an index files inline (see
// index.reqInline).
const inlineKeys = 4

type inlineEntry struct {
	key string
	l   list
}

// find returns the header key is filed under in list kind k, or nil.
func (ix *index) find(k linkKind, key string) *list {
	if ix.lastList[k] != nil && ix.lastKey[k] == key {
		return ix.lastList[k]
	}
	inl := ix.inline(k)
	for i := range inl {
		if e := &inl[i]; !e.l.empty() && e.key == key {
			return &e.l
		}
	}
	if len(ix.byKey[k]) == 0 {
		return nil
	}
	return ix.byKey[k][key]
}

// inline returns the inline entries of list kind k.
func (ix *index) inline(k linkKind) []inlineEntry {
	if k == inRequest {
		return ix.reqInline[:]
	}
	return ix.appInline[:]
}

// inlineOf returns the inline entry of kind k whose header l is, or nil if
// l is a map header.
func (ix *index) inlineOf(k linkKind, l *list) *inlineEntry {
	inl := ix.inline(k)
	for i := range inl {
		if e := &inl[i]; &e.l == l {
			return e
		}
	}
	return nil
}

// forget removes key's header l from the index (the caller empties or has
// emptied it) and keeps map headers for reuse.
func (ix *index) forget(k linkKind, key string, l *list) {
	if ix.lastList[k] == l {
		ix.lastKey[k], ix.lastList[k] = "", nil
	}
	if e := ix.inlineOf(k, l); e != nil {
		*e = inlineEntry{}
		return
	}
	delete(ix.byKey[k], key)
	ix.release(k, l)
	ix.dropIfEmpty(k)
}

func indexKey(k linkKind, r *Reservation) string {
	if k == inRequest {
		return r.RequestID
	}
	return r.App
}

func (ix *index) add(n *node) {
	for _, k := range [...]linkKind{inRequest, inApp} {
		key := indexKey(k, &n.r)
		l := ix.find(k, key)
		if l == nil {
			inl := ix.inline(k)
			for i := range inl {
				if e := &inl[i]; e.l.empty() {
					e.key = key
					l = &e.l
					break
				}
			}
		}
		if l == nil {
			m := ix.byKey[k]
			if m == nil {
				m = make(map[string]*list)
				ix.byKey[k] = m
			}
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
		ix.forget(k, indexKey(k, &n.r), l)
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
		*l = list{}
		ix.spare = append(ix.spare, l)
	}
}

// drain removes from the index every node filed under key in list k (a
// request or an app), calls detach on each so the discipline can unlink it
// from its service queue, and returns how many there were. Cost is
// proportional to the number of nodes removed, never to the queue length.
func (ix *index) drain(k linkKind, key string, detach func(*node)) int {
	l := ix.find(k, key)
	if l == nil {
		return 0
	}
	// The whole list goes, so skip per-node head/tail updates. Unlinking
	// the nodes from the other kind's lists below never touches l.
	head := l.head
	ix.forget(k, key, l)
	other := inApp
	if k == inApp {
		other = inRequest
	}
	count := 0
	for n := head; n != nil; {
		next := n.links[k].next
		n.links[k] = link{}
		n.owner[k] = nil
		ix.unlink(other, n)
		detach(n)
		count++
		n = next
	}
	return count
}

// queuedByUser adds to out, for every queued node, one reservation under its
// user. Cost is proportional to the number of queued reservations.
func (ix *index) queuedByUser(out map[string]int) {
	count := func(l *list) {
		for n := l.head; n != nil; n = n.links[inRequest].next {
			out[n.r.User]++
		}
	}
	for i := range ix.reqInline {
		count(&ix.reqInline[i].l)
	}
	for _, l := range ix.byKey[inRequest] {
		count(l)
	}
}

// compact releases oversized maps. The caller must only call it when nothing
// is queued.
func (ix *index) compact() {
	if ix.peak > shrinkAbove {
		*ix = index{}
	}
}
