package shortjobs

import (
	"container/heap"
	"iter"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/sparrowfleet/sparrow/core/queue"
)

// Pulls let a slot freed anywhere in the fleet take a waiting short task,
// as a central scheduler's global queue would, while no central scheduler
// exists. Sampling alone cannot: a short job's probes reach a few nodes,
// and when every node has long work (a burst of long jobs), its tasks wait
// behind the long tasks of those few, while slots free elsewhere take long
// reservations.
//
// A scheduler keeps the short jobs that still have unlaunched tasks after
// a wait (Backlog) and advertises, through gossip, the least remaining
// work among them, rounded up to a power of two (AdvertWork) so that the
// advert changes seldom; none when the backlog is empty. A node monitor
// that hears it queues one standing pull reservation for that scheduler
// (Puller) in its SRPT queue with that remaining work, so that the next
// slot it frees asks that scheduler for a task unless the node holds a
// reservation of a job with less work left, as a central queue ordering
// all jobs by remaining work would. The scheduler answers with a task of
// its backlogged job with the least remaining work among those with a
// task the asking node may run (Ascend), through the same
// placement.Request as every other answer (AddProbes, then Assign), so a
// task is still handed out at most once. A pull that got a task is queued
// again while the backlog is advertised; one that got none is retried
// after a delay or at the next advert.

// pullPrefix starts every pull reservation's request id. It holds a NUL
// byte, which no request id a scheduler accepts can contain.
const pullPrefix = "\x00pull\x00"

// PullRequestID is the request id of the standing pull reservation for
// scheduler sched.
func PullRequestID(sched string) string { return pullPrefix + sched }

// PullScheduler reports whether id is a pull reservation's request id
// and, if so, for which scheduler.
func PullScheduler(id string) (sched string, ok bool) {
	return strings.CutPrefix(id, pullPrefix)
}

// Backlog is a scheduler's short jobs with unlaunched tasks, each with
// its estimated remaining work, for answering pulls shortest first. The
// scheduler adds a job once it has waited (Set), updates it whenever a
// task of it is handed out, and removes it when none is left or the job
// ends. Not safe for concurrent use.
type Backlog struct {
	jobs map[string]backlogEntry // each job's current entry
	h    backlogHeap             // current and stale entries
	seq  uint64
}

type backlogEntry struct {
	work float64
	seq  uint64
	id   string
}

// NewBacklog returns an empty Backlog.
func NewBacklog() *Backlog { return &Backlog{jobs: make(map[string]backlogEntry)} }

// Set records job id's remaining work; work <= 0 (or NaN) removes it.
func (b *Backlog) Set(id string, work float64) {
	if !(work > 0) {
		b.Remove(id)
		return
	}
	if old, ok := b.jobs[id]; ok && old.work == work {
		return
	}
	e := backlogEntry{work: work, seq: b.seq, id: id}
	b.seq++
	b.jobs[id] = e
	heap.Push(&b.h, e)
	if len(b.h) > 64 && len(b.h) > 4*len(b.jobs) {
		b.compact()
	}
}

// Remove forgets job id.
func (b *Backlog) Remove(id string) { delete(b.jobs, id) }

// Has reports whether job id is in the backlog.
func (b *Backlog) Has(id string) bool {
	_, ok := b.jobs[id]
	return ok
}

// Len returns the number of jobs in the backlog.
func (b *Backlog) Len() int { return len(b.jobs) }

// AdvertWork is the advert for a backlog whose least remaining work is
// least: least rounded up to a power of two (at least 1), or 0 for an
// empty backlog (ok false).
func AdvertWork(least float64, ok bool) float64 {
	if !ok || !(least > 0) {
		return 0
	}
	if least <= 1 {
		return 1
	}
	return math.Exp2(math.Ceil(math.Log2(least)))
}

// Least returns the job with the least remaining work, the earliest
// recorded among equals.
func (b *Backlog) Least() (id string, work float64, ok bool) {
	for len(b.h) > 0 {
		if top := b.h[0]; b.jobs[top.id] == top {
			return top.id, top.work, true
		}
		heap.Pop(&b.h)
	}
	return "", 0, false
}

// Ascend yields the jobs in the order Least would return them were each
// removed in turn: least remaining work first, the earliest recorded
// among equals. It costs O(k log k) for the first k jobs yielded (plus
// the stale entries among them), so a caller that stops early pays for
// what it looked at, not for the backlog. The backlog must not change
// while Ascend yields.
func (b *Backlog) Ascend() iter.Seq2[string, float64] {
	return func(yield func(string, float64) bool) {
		if len(b.h) == 0 {
			return
		}
		// A heap's entries come out in order when one walks down from
		// the root keeping the frontier (the entries whose parent was
		// taken) in a heap of its own: its least is the next in order.
		// The root goes first, before the frontier is built, so that a
		// caller taking only the least pays what Least does.
		f := frontier{h: b.h}
		for i := 0; ; i = heap.Pop(&f).(int) {
			if e := b.h[i]; b.jobs[e.id] == e && !yield(e.id, e.work) {
				return
			}
			for _, c := range [2]int{2*i + 1, 2*i + 2} {
				if c < len(b.h) {
					heap.Push(&f, c)
				}
			}
			if len(f.ix) == 0 {
				return
			}
		}
	}
}

// frontier is a heap of indexes into a backlogHeap, in that heap's order.
type frontier struct {
	h  backlogHeap
	ix []int
}

func (f *frontier) Len() int           { return len(f.ix) }
func (f *frontier) Less(i, j int) bool { return f.h.Less(f.ix[i], f.ix[j]) }
func (f *frontier) Swap(i, j int)      { f.ix[i], f.ix[j] = f.ix[j], f.ix[i] }
func (f *frontier) Push(x any)         { f.ix = append(f.ix, x.(int)) }
func (f *frontier) Pop() any {
	i := f.ix[len(f.ix)-1]
	f.ix = f.ix[:len(f.ix)-1]
	return i
}

// compact drops the stale entries that updates left in the heap.
func (b *Backlog) compact() {
	keep := b.h[:0]
	for _, e := range b.h {
		if b.jobs[e.id] == e {
			keep = append(keep, e)
		}
	}
	clear(b.h[len(keep):])
	b.h = keep
	heap.Init(&b.h)
}

type backlogHeap []backlogEntry

func (h backlogHeap) Len() int { return len(h) }
func (h backlogHeap) Less(i, j int) bool {
	if h[i].work != h[j].work {
		return h[i].work < h[j].work
	}
	return h[i].seq < h[j].seq
}
func (h backlogHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *backlogHeap) Push(x any)   { *h = append(*h, x.(backlogEntry)) }
func (h *backlogHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	*h = old[:len(old)-1]
	return e
}

// PullAction is what a node monitor does with its queue after a Puller
// call.
type PullAction uint8

// The pull actions.
const (
	// PullNone: nothing.
	PullNone PullAction = iota
	// PullQueue: queue one reservation Puller.Reservation(sched) and give
	// it Puller.Work(sched) (SRPT.SetWork).
	PullQueue
	// PullCancel: remove the queued pull reservation (slots.Core.Cancel
	// with PullRequestID(sched)).
	PullCancel
)

// Puller is a node monitor's standing pull reservations, at most one per
// scheduler, queued or fetching. Times are durations since any fixed
// origin. Not safe for concurrent use: the node monitor calls it under the
// lock that guards its queue.
type Puller struct {
	app   string
	retry time.Duration
	state map[string]*pullState
}

type pullState struct {
	work     float64 // the scheduler's last advert; 0: no backlog
	queued   bool
	fetching bool
	retryAt  time.Duration // after an empty answer: queue again from then (0: not waiting)
}

// NewPuller returns a Puller whose reservations name app (a node monitor
// queues only reservations of apps it runs; the scheduler answers a pull
// only with a task the node may run), and whose pull that got no task is
// queued again after retry while its scheduler still advertises a
// backlog (retry > 0).
func NewPuller(app string, retry time.Duration) *Puller {
	return &Puller{app: app, retry: retry, state: make(map[string]*pullState)}
}

// Reservation is the pull reservation for scheduler sched.
func (p *Puller) Reservation(sched string) queue.Reservation {
	return queue.Reservation{RequestID: PullRequestID(sched), App: p.app, Scheduler: sched}
}

func (p *Puller) get(sched string) *pullState {
	s := p.state[sched]
	if s == nil {
		s = &pullState{}
		p.state[sched] = s
	}
	return s
}

// Heard records scheduler sched's advert: the least remaining work of its
// short backlog (AdvertWork; 0 or less: none). When the answer is
// PullNone and sched's pull is queued, the caller updates its work
// (SRPT.SetWork with Work).
func (p *Puller) Heard(sched string, least float64) PullAction {
	s := p.get(sched)
	s.work = max(least, 0)
	backlog := s.work > 0
	s.retryAt = 0
	switch {
	case backlog && !s.queued && !s.fetching:
		s.queued = true
		return PullQueue
	case !backlog && s.queued:
		s.queued = false
		p.tidy(sched, s)
		return PullCancel
	}
	p.tidy(sched, s)
	return PullNone
}

// Fetching records that sched's pull reservation was handed a slot.
func (p *Puller) Fetching(sched string) {
	s := p.get(sched)
	s.queued, s.fetching = false, true
}

// Answered records, at now, the answer to sched's pull: got reports
// whether it carried a task. A pull that got a task is queued again at
// once while the scheduler advertises a backlog; one that got none is
// queued again by Due after the retry delay, or by the scheduler's next
// advert, so that a node does not ask again and again for nothing.
func (p *Puller) Answered(sched string, got bool, now time.Duration) PullAction {
	s := p.get(sched)
	s.fetching = false
	switch {
	case got && s.work > 0:
		s.queued = true
		return PullQueue
	case !got && s.work > 0:
		s.retryAt = max(now+p.retry, 1)
	}
	p.tidy(sched, s)
	return PullNone
}

// NextRetry returns the earliest time at which Due has a pull to queue
// again, if any.
func (p *Puller) NextRetry() (time.Duration, bool) {
	var at time.Duration
	found := false
	for _, s := range p.state {
		if s.retryAt > 0 && (!found || s.retryAt < at) {
			at, found = s.retryAt, true
		}
	}
	return at, found
}

// Due appends to dst, sorted, the schedulers whose pull is to be queued
// again at now (PullQueue for each), and marks them queued.
func (p *Puller) Due(dst []string, now time.Duration) []string {
	start := len(dst)
	for sched, s := range p.state {
		if s.retryAt > 0 && s.retryAt <= now {
			s.retryAt = 0
			if s.work > 0 && !s.queued && !s.fetching {
				s.queued = true
				dst = append(dst, sched)
			}
		}
	}
	slices.Sort(dst[start:])
	return dst
}

// Gone forgets scheduler sched (it left the fleet); the caller cancels a
// queued pull reservation if the answer is PullCancel.
func (p *Puller) Gone(sched string) PullAction {
	s := p.state[sched]
	if s == nil {
		return PullNone
	}
	delete(p.state, sched)
	if s.queued {
		return PullCancel
	}
	return PullNone
}

// Sticky returns the remaining task count to give Monitor.Ended for a
// task of class c that ended with remaining tasks of its job unlaunched,
// whose estimated remaining work is work: none for a long job when some
// scheduler advertises a short backlog with less work left, so that the
// freed slot serves that pull before the long job's next task, as a
// central queue ordering jobs by remaining work would; remaining
// otherwise.
func (p *Puller) Sticky(c Class, remaining int, work float64) int {
	if c == Long {
		for _, s := range p.state {
			if s.work > 0 && !(work <= s.work) {
				return 0
			}
		}
	}
	return remaining
}

// Work returns the remaining work sched's pull reservation is queued
// with: its last advert.
func (p *Puller) Work(sched string) float64 {
	if s := p.state[sched]; s != nil {
		return s.work
	}
	return 0
}

// Queued reports whether sched's pull reservation is queued.
func (p *Puller) Queued(sched string) bool {
	s := p.state[sched]
	return s != nil && s.queued
}

// tidy forgets a scheduler with nothing to remember.
func (p *Puller) tidy(sched string, s *pullState) {
	if s.work == 0 && !s.queued && !s.fetching && s.retryAt == 0 {
		delete(p.state, sched)
	}
}
