package scheduler

import (
	"container/heap"
	"time"

	"github.com/sparrowfleet/sparrow/core/locality"
	"github.com/sparrowfleet/sparrow/core/placement"
)

// relaxer is the locality relaxation part (locality.go states the
// semantics): the queue of requests with a relaxable task pending, keyed
// by their next delay step; the coordinator's prices and when they
// arrived; a rack index per app; and the counts of widenings and of how
// local launches were. It decides when a request is due, not what its
// tasks widen to.
//
// It has no lock of its own: it is not safe for concurrent use, and its
// owner serialises every call, except that wake may be received from
// anywhere.
type relaxer struct {
	stale time.Duration // how long prices guide placement
	q     relaxHeap
	// wake is signalled when the earliest step may have become earlier.
	wake     chan struct{}
	prices   locality.Prices
	pricesAt time.Time
	have     bool // prices installed
	// repriceDue says newer prices arrived since the last due.
	repriceDue bool
	racks      rackIndexes
	stats      LocalityStats
}

func newRelaxer(stale time.Duration) relaxer {
	return relaxer{stale: stale, wake: make(chan struct{}, 1)}
}

// fresh reports whether the installed prices guide placement at now.
func (x *relaxer) fresh(now time.Time) bool {
	return x.have && now.Sub(x.pricesAt) <= x.stale
}

// schedule queues r for its next delay step, or takes it off the queue
// if no task can widen any more. A step already past at now is one fresh
// prices overrode: it is checked again when those prices go stale (newer
// prices re-price it before that).
func (x *relaxer) schedule(r *request, now time.Time) {
	at, ok := r.loc.next(r)
	if !ok {
		x.remove(r)
		return
	}
	if !at.After(now) {
		at = x.pricesAt.Add(x.stale + time.Nanosecond)
		if !at.After(now) {
			at = now.Add(relaxMinGap) // not expected: prices were fresh
		}
	}
	r.loc.at = at
	if r.loc.pos >= 0 {
		heap.Fix(&x.q, r.loc.pos)
	} else {
		heap.Push(&x.q, r)
	}
	if x.q[0] == r {
		x.signal()
	}
}

// remove takes r off the queue, if it is there.
func (x *relaxer) remove(r *request) {
	if r.loc != nil && r.loc.pos >= 0 {
		heap.Remove(&x.q, r.loc.pos)
	}
}

// signal tells the daemon's loop that the earliest step changed.
func (x *relaxer) signal() {
	select {
	case x.wake <- struct{}{}:
	default:
	}
}

// next returns when the queue is next due: the earliest delay step, or
// now() if newer prices wait to be applied; ok is false when nothing is
// queued.
func (x *relaxer) next(now func() time.Time) (at time.Time, ok bool) {
	if len(x.q) == 0 {
		return time.Time{}, false
	}
	if x.repriceDue {
		return now(), true
	}
	return x.q[0].loc.at, true
}

// due takes off the queue the requests due at now: those whose step has
// come and, when newer prices arrived and are fresh, every one. fresh
// says whether the prices guide placement at now.
func (x *relaxer) due(now time.Time) (due []*request, fresh bool) {
	fresh = x.fresh(now)
	if x.repriceDue {
		x.repriceDue = false
		if fresh {
			for len(x.q) > 0 {
				due = append(due, heap.Pop(&x.q).(*request))
			}
		}
	}
	for len(x.q) > 0 && !x.q[0].loc.at.After(now) {
		due = append(due, heap.Pop(&x.q).(*request))
	}
	return due, fresh
}

// setPrices installs p, received at at, if it is newer than the current
// prices or they are stale (a restarted coordinator starts its versions
// again); the current version again only renews its age. It reports
// whether p was installed.
func (x *relaxer) setPrices(p locality.Prices, at time.Time) bool {
	switch {
	case !x.have || p.Version > x.prices.Version || !x.fresh(at):
	case p.Version == x.prices.Version:
		x.pricesAt = at
		return false
	default:
		return false
	}
	x.prices, x.pricesAt, x.have = p, at, true
	x.stats.PricesAccepted++
	if len(x.q) > 0 {
		x.repriceDue = true
		x.signal()
	}
	return true
}

// snapshot returns the counts, with the prices' state at now.
func (x *relaxer) snapshot(now time.Time) LocalityStats {
	st := x.stats
	st.PricesVersion = x.prices.Version
	st.PricesFresh = x.fresh(now)
	st.Relaxing = len(x.q)
	return st
}

// relaxHeap orders queued requests by their next delay step.
type relaxHeap []*request

func (h relaxHeap) Len() int           { return len(h) }
func (h relaxHeap) Less(i, j int) bool { return h[i].loc.at.Before(h[j].loc.at) }
func (h relaxHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].loc.pos, h[j].loc.pos = i, j
}
func (h *relaxHeap) Push(x any) {
	r := x.(*request)
	r.loc.pos = len(*h)
	*h = append(*h, r)
}
func (h *relaxHeap) Pop() any {
	old := *h
	r := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	r.loc.pos = -1
	return r
}

// rackIndexes caches one placement.RackIndex per app over the view's
// candidate slice, which a NodeView returns unchanged until membership
// changes: re-pricing every pending request must not rebuild an O(nodes)
// index for each.
type rackIndexes map[string]struct {
	cands []placement.Node
	index *placement.RackIndex
}

// rackIndex returns app's live candidates in view and an index over
// them.
func (x *relaxer) rackIndex(view NodeView, app string) ([]placement.Node, *placement.RackIndex) {
	cands := view.Candidates(app)
	if e, ok := x.racks[app]; ok && len(e.cands) == len(cands) && (len(cands) == 0 || &e.cands[0] == &cands[0]) {
		return cands, e.index
	}
	if x.racks == nil {
		x.racks = make(rackIndexes)
	}
	idx := placement.NewRackIndex(cands)
	x.racks[app] = struct {
		cands []placement.Node
		index *placement.RackIndex
	}{cands, idx}
	return cands, idx
}

// countWiden counts a task widened to l, for cause.
func (x *relaxer) countWiden(l locality.Level, cause int) {
	st := &x.stats
	switch {
	case l == locality.RackLevel && cause == byDelay:
		st.WidenedRackByDelay++
	case l == locality.RackLevel:
		st.WidenedRackByPrices++
	case cause == byDelay:
		st.WidenedClusterByDelay++
	default:
		st.WidenedClusterByPrices++
	}
}

// countLaunch records how local the launch of r's task idx on addr was,
// if the task has preferences.
func (x *relaxer) countLaunch(r *request, idx int, addr string) {
	orig, level := r.Tasks()[idx], locality.NodeLevel
	if t := r.loc.find(idx); t != nil {
		orig = t.orig
		if n, ok := r.NodeOf(addr); ok && t.level > locality.NodeLevel {
			level = placement.LaunchLevel(orig, t.home, n)
		}
	}
	if !orig.Constrained() {
		return
	}
	switch level {
	case locality.NodeLevel:
		x.stats.LaunchedNode++
	case locality.RackLevel:
		x.stats.LaunchedRack++
	default:
		x.stats.LaunchedCluster++
	}
}
