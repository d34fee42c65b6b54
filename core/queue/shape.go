package queue

import "github.com/sparrowfleet/sparrow/core/samestr"

// entry is a reservation as a FIFO's ring keeps it: the fields that
// differ from one reservation to the next (request and tag) by value, and
// the rest (app, user, group, priority, scheduler), which a node monitor's
// reservations mostly share, as an index into a shapeTable. At 32 bytes
// rather than a Reservation's 96, a short queue's ring spans a third of the
// cache lines, which is what a simulator of thousands of node monitors
// waits on.
type entry struct {
	requestID string
	tag       uint64
	shape     uint32
}

// shape is what reservations sharing an entry.shape have in common, with
// the number of queued entries that refer to it.
type shape struct {
	app, user, group, scheduler string
	priority                    int32
	refs                        int32
}

// shapeTable interns the shapes of queued entries. A shape lives while
// some entry refers to it; then its strings are dropped and its slot is
// reused. Not safe for concurrent use.
type shapeTable struct {
	s    []shape
	free []uint32 // slots of s with no references, cleared
	last uint32   // the slot acquire matched or filled last
	// idx finds a shape by its fields once s outgrows a linear scan.
	idx map[shapeKey]uint32
}

// shapeKey is a shape's fields, without its count.
type shapeKey struct {
	app, user, group, scheduler string
	priority                    int32
}

// scanShapes is how many shapes acquire scans before it indexes them.
const scanShapes = 8

func (sh *shape) matches(r *Reservation) bool {
	return sh.refs > 0 && samestr.Equal(sh.app, r.App) && samestr.Equal(sh.user, r.User) &&
		samestr.Equal(sh.group, r.Group) && sh.priority == r.Priority && samestr.Equal(sh.scheduler, r.Scheduler)
}

// acquire returns the slot of r's shape, adding it if no queued entry has
// it, and counts one more reference to it.
func (t *shapeTable) acquire(r *Reservation) uint32 {
	if i := t.last; int(i) < len(t.s) && t.s[i].matches(r) {
		t.s[i].refs++
		return i
	}
	i, ok := t.find(r)
	if !ok {
		i = t.add(r)
	}
	t.s[i].refs++
	t.last = i
	return i
}

// find returns the slot holding r's shape, if one is referenced.
func (t *shapeTable) find(r *Reservation) (uint32, bool) {
	if t.idx != nil {
		i, ok := t.idx[shapeKey{r.App, r.User, r.Group, r.Scheduler, r.Priority}]
		return i, ok
	}
	for i := range t.s {
		if t.s[i].matches(r) {
			return uint32(i), true
		}
	}
	return 0, false
}

// add files r's shape, with no references yet, in a free slot or a new one.
func (t *shapeTable) add(r *Reservation) uint32 {
	sh := shape{app: r.App, user: r.User, group: r.Group, scheduler: r.Scheduler, priority: r.Priority}
	var i uint32
	if k := len(t.free); k > 0 {
		i = t.free[k-1]
		t.free = t.free[:k-1]
		t.s[i] = sh
	} else {
		i = uint32(len(t.s))
		t.s = append(t.s, sh)
	}
	switch {
	case t.idx != nil:
		t.idx[sh.key()] = i
	case len(t.s) > scanShapes:
		t.idx = make(map[shapeKey]uint32, len(t.s))
		for j := range t.s {
			if t.s[j].refs > 0 || uint32(j) == i {
				t.idx[t.s[j].key()] = uint32(j)
			}
		}
	}
	return i
}

func (sh *shape) key() shapeKey {
	return shapeKey{sh.app, sh.user, sh.group, sh.scheduler, sh.priority}
}

// release drops one reference to slot i, freeing it with its last.
func (t *shapeTable) release(i uint32) {
	sh := &t.s[i]
	if sh.refs--; sh.refs > 0 {
		return
	}
	if t.idx != nil {
		delete(t.idx, sh.key())
	}
	*sh = shape{}
	t.free = append(t.free, i)
}

// pack turns r into an entry, acquiring its shape.
func (t *shapeTable) pack(r *Reservation) entry {
	return entry{requestID: r.RequestID, tag: r.Tag, shape: t.acquire(r)}
}

// reservation rebuilds the reservation e was packed from, without
// releasing its shape.
func (t *shapeTable) reservation(e *entry) Reservation {
	sh := &t.s[e.shape]
	return Reservation{
		RequestID: e.requestID, App: sh.app, User: sh.user, Group: sh.group,
		Priority: sh.priority, Scheduler: sh.scheduler, Tag: e.tag,
	}
}

// unpackTo is unpack into *r, field by field, not through a value copied
// in (see FIFO.PopInto).
func (t *shapeTable) unpackTo(r *Reservation, e *entry) {
	sh := &t.s[e.shape]
	r.RequestID = e.requestID
	r.App = sh.app
	r.User = sh.user
	r.Group = sh.group
	r.Priority = sh.priority
	r.Scheduler = sh.scheduler
	r.Tag = e.tag
	t.release(e.shape)
}

// unpack is reservation, releasing e's shape.
func (t *shapeTable) unpack(e *entry) Reservation {
	r := t.reservation(e)
	t.release(e.shape)
	return r
}
