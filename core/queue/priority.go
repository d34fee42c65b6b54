package queue

import "container/heap"

// Priority keeps one queue per priority value and always serves the
// numerically smallest priority that has anything queued, as Sparrow node
// monitors do to shield high-priority users from low-priority ones (§4.2,
// §7.6). There is no preemption and no aging: a lower priority is served only
// when every more urgent queue is empty.
//
// Within one priority, users share by weighted fair queuing exactly as in
// Fair (each level is a Fair). All levels share one weight table, so
// SetWeight applies at every priority, and one request/app index, so
// RemoveRequest and RemoveApp cost O(removed) however many levels exist.
// Levels are created on first use and forgotten as soon as they drain.
//
// Priority implements Discipline and Weights; create it with NewPriority. It
// is not safe for concurrent use.
type Priority struct {
	weights *weightTable
	idx     index
	levels  map[int32]*level
	order   levelHeap // non-empty levels, most urgent first
	peak    int       // most levels held since the last reset
	n       int
}

var (
	_ Discipline = (*Priority)(nil)
	_ Weights    = (*Priority)(nil)
)

// level is the fair queue of one priority value.
type level struct {
	prio int32
	fair *Fair
	pos  int // index in Priority.order
}

// NewPriority returns an empty priority queue whose levels share users by
// weight. Users absent from weights get defaultWeight. Every weight must be
// finite and > 0. The map is copied.
func NewPriority(defaultWeight float64, weights map[string]float64) (*Priority, error) {
	wt, err := newWeightTable(defaultWeight, weights)
	if err != nil {
		return nil, err
	}
	return &Priority{weights: wt}, nil
}

// SetWeight sets user's weight at every priority, effective from the next
// Pop, and rescales its lead at each priority as Fair.SetWeight does. w
// must be finite and > 0; otherwise an error wrapping ErrInvalidWeight is
// returned and nothing changes.
func (p *Priority) SetWeight(user string, w float64) error {
	old := p.weights.get(user)
	if err := p.weights.set(user, w); err != nil {
		return err
	}
	// Each level keeps its own virtual time.
	for _, l := range p.levels {
		l.fair.reweigh(user, old, w)
	}
	return nil
}

// Weight returns user's configured weight, or the default weight.
func (p *Priority) Weight(user string) float64 { return p.weights.get(user) }

// Len returns the number of queued reservations across all priorities.
func (p *Priority) Len() int { return p.n }

// Push queues r at priority r.Priority.
func (p *Priority) Push(r Reservation) {
	lv := p.levels[r.Priority]
	if lv == nil {
		if p.levels == nil {
			p.levels = make(map[int32]*level)
		}
		lv = &level{prio: r.Priority, fair: newFair(p.weights, &p.idx)}
		p.levels[r.Priority] = lv
		p.peak = max(p.peak, len(p.levels))
		heap.Push(&p.order, lv)
	}
	lv.fair.Push(r)
	p.n++
}

// Pop removes and returns the fair-share choice among the reservations of the
// smallest queued priority; false when empty.
func (p *Priority) Pop() (Reservation, bool) {
	if len(p.order) == 0 {
		return Reservation{}, false
	}
	lv := p.order[0]
	r, _ := lv.fair.Pop() // a level in order is never empty
	p.n--
	if lv.fair.Len() == 0 {
		heap.Pop(&p.order)
		delete(p.levels, lv.prio)
	}
	p.compactIfEmpty()
	return r, true
}

// RemoveRequest drops every queued reservation of requestID, at any
// priority, and returns how many were dropped.
func (p *Priority) RemoveRequest(requestID string) int {
	c := p.idx.drain(inRequest, requestID, p.detach)
	p.compactIfEmpty()
	return c
}

// RemoveApp drops every queued reservation of app, at any priority, and
// returns how many were dropped.
func (p *Priority) RemoveApp(app string) int {
	c := p.idx.drain(inApp, app, p.detach)
	p.compactIfEmpty()
	return c
}

// detach unlinks n, already out of the shared index, from its level, and
// forgets the level if that emptied it.
func (p *Priority) detach(n *node) {
	lv := p.levels[n.r.Priority]
	lv.fair.detach(n)
	lv.fair.trimIdle()
	p.n--
	if lv.fair.Len() == 0 {
		heap.Remove(&p.order, lv.pos)
		delete(p.levels, lv.prio)
	}
}

func (p *Priority) compactIfEmpty() {
	if p.n != 0 {
		return
	}
	p.idx.compact()
	if p.peak > shrinkAbove {
		p.levels, p.order, p.peak = nil, nil, 0
	}
}

// levelHeap is a min-heap of levels by priority value.
type levelHeap []*level

func (h levelHeap) Len() int           { return len(h) }
func (h levelHeap) Less(i, j int) bool { return h[i].prio < h[j].prio }

func (h levelHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].pos = i
	h[j].pos = j
}

func (h *levelHeap) Push(x any) {
	lv := x.(*level)
	lv.pos = len(*h)
	*h = append(*h, lv)
}

func (h *levelHeap) Pop() any {
	old := *h
	last := len(old) - 1
	lv := old[last]
	old[last] = nil
	*h = old[:last]
	return lv
}
