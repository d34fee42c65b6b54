package scheduler

import (
	"fmt"
	"time"
)

// holdBook is admission control's record (gate.go) of held submitJob
// calls (hold.go, admission.go): how many are held, the calls waiting
// for a capacity signal, the arrival order of calls held for full
// queues, how long placed calls waited (the refusal's suggested delay),
// when a node monitor last refused reservations as full, and the counts.
//
// First come, first placed: only the oldest call held for full queues
// (the head) places rounds, and a capacity signal goes to it first; the
// others wait and are signalled in turn as the head is answered. Left to
// their own retry timers, whichever round came first would take each
// freed queue position, and the spread of held calls' waits would be as
// wide as the queue of held work is deep. A head that makes no progress
// (no reservation of it accepted) for holdHeadStuck does not block the
// rest: its candidates may be full while others' are not (a constrained
// job), or it may never fit; then every held call places rounds.
//
// It has no lock of its own: it is not safe for concurrent use, and its
// owner serialises every call. A holdState's wake channel may be
// received from without it.
type holdBook struct {
	maxHeld int           // Config.MaxHeldJobs
	maxHold time.Duration // Config.MaxHold
	held    int           // calls counted in HoldStats.Held
	queue   []*holdState  // held calls waiting for a capacity signal, oldest first
	// arrivals is the calls held for full queues, in arrival order; only
	// the first still waiting places rounds.
	arrivals []*holdState
	// waited is a moving average of how long held jobs that were placed
	// waited; it is the refusal's suggested delay.
	waited time.Duration
	// lastFull is when a node monitor last refused reservations as full.
	lastFull time.Time
	stats    HoldStats
}

// holdState is one job's held call. Its owner serialises access to it,
// as to its holdBook; wake is signalled and received from without that.
type holdState struct {
	start   time.Time
	waiting bool // the submitJob call has not been answered
	held    bool // counted in holdBook.held
	pending int  // counted enqueues not yet acknowledged
	// fail is set when re-placement after unreachable node monitors gave
	// up with nothing launched: the request is already forgotten.
	fail error
	// withdrawn means the job was refused: reservations acknowledged
	// afterwards are cancelled.
	withdrawn bool
	// gone means the call's context ended: the job is answered at once.
	gone bool
	next time.Time // the next round, once saturated
	last time.Time // the last round
	// progress is when the call was held or, later, one of its
	// reservations was last accepted.
	progress time.Time
	backoff  time.Duration
	queued   bool          // in holdBook.queue
	wake     chan struct{} // capacity 1: something changed
}

func newHoldState(now time.Time) *holdState {
	return &holdState{start: now, waiting: true, wake: make(chan struct{}, 1)}
}

func (h *holdState) signal() {
	select {
	case h.wake <- struct{}{}:
	default:
	}
}

// holdHeadStuck is how long the head may go without an accepted
// reservation before the calls behind it place rounds too.
const holdHeadStuck = time.Second

// hold counts h as held, unless maxHeld calls are held already: then it
// returns why not, for the refusal.
func (b *holdBook) hold(h *holdState) (over string) {
	if b.held >= b.maxHeld {
		return fmt.Sprintf("%d submitJob calls are already held, the most allowed (--max-held-jobs)", b.held)
	}
	h.held = true
	h.backoff = holdRetryMin
	b.held++
	b.stats.Holds++
	return ""
}

// compact drops from q the calls no longer waiting, once q has grown
// well past the bound on held calls, calling drop on each.
func (b *holdBook) compact(q []*holdState, drop func(*holdState)) []*holdState {
	if len(q) <= 2*b.maxHeld+16 {
		return q
	}
	kept := q[:0]
	for _, h := range q {
		if h.waiting {
			kept = append(kept, h)
		} else if drop != nil {
			drop(h)
		}
	}
	clear(q[len(kept):])
	return kept
}

// order appends h, newly held for full queues, to the arrival order.
func (b *holdBook) order(h *holdState) {
	b.arrivals = append(b.compact(b.arrivals, nil), h)
}

// head returns the oldest call held for full queues still waiting, or
// nil.
func (b *holdBook) head() *holdState { return firstWaiting(&b.arrivals) }

// firstWaiting drops the answered calls from the front of *q and returns
// the first still waiting, or nil.
func firstWaiting(q *[]*holdState) *holdState {
	for len(*q) > 0 && !(*q)[0].waiting {
		(*q)[0] = nil
		*q = (*q)[1:]
	}
	if len(*q) == 0 {
		return nil
	}
	return (*q)[0]
}

// mayPlace reports whether held call h may place a round at now: it is
// the head, or the head is stuck.
func (b *holdBook) mayPlace(h *holdState, now time.Time) bool {
	head := b.head()
	return head == nil || head == h || now.Sub(head.progress) >= holdHeadStuck
}

// bringForward makes h's next round due at most holdMinGap after its
// last, and signals it.
func bringForward(h *holdState) {
	if soon := h.last.Add(holdMinGap); h.next.After(soon) {
		h.next = soon
	}
	h.signal()
}

// signalHead wakes the head for a round now: capacity may have freed, or
// it has just become the head. It reports whether there was one.
func (b *holdBook) signalHead() bool {
	head := b.head()
	if head == nil {
		return false
	}
	bringForward(head)
	return true
}

// wakeOldest signals the longest-waiting call in line for a capacity
// signal, brought forward: capacity may have freed.
func (b *holdBook) wakeOldest() {
	for len(b.queue) > 0 {
		h := b.queue[0]
		b.queue[0] = nil
		b.queue = b.queue[1:]
		h.queued = false
		if !h.waiting {
			continue
		}
		bringForward(h)
		return
	}
}

// wakeAll signals every held call still waiting, so that each looks at
// its state at once (a drain refuses or answers them all).
func (b *holdBook) wakeAll() {
	signalWaiting(b.arrivals)
	signalWaiting(b.queue)
}

// signalWaiting signals every call in q still waiting.
func signalWaiting(q []*holdState) {
	for _, h := range q {
		if h.waiting {
			h.signal()
		}
	}
}

// queueSignal puts held call h in line for a capacity signal.
func (b *holdBook) queueSignal(h *holdState) {
	if h.queued {
		return
	}
	h.queued = true
	b.queue = append(b.compact(b.queue, func(q *holdState) { q.queued = false }), h)
}

// finish marks held call h answered at now; placed says its job was
// placed (or admitted).
func (b *holdBook) finish(h *holdState, now time.Time, placed bool) {
	h.waiting = false
	if !h.held {
		return
	}
	b.signalHead() // the next in line, if h was the head
	b.held--
	d := now.Sub(h.start)
	b.stats.Seconds.Observe(HoldBuckets, d.Seconds())
	if placed {
		if b.waited == 0 {
			b.waited = d
		} else {
			b.waited = (4*b.waited + d) / 5
		}
	}
}

// retryAfter is the delay a saturation refusal suggests.
func (b *holdBook) retryAfter() time.Duration {
	d := b.waited
	if d == 0 {
		d = retryAfterDefault
	}
	return min(max(d, retryAfterMin), b.maxHold).Round(time.Millisecond)
}

// sawFull records a node monitor refusing reservations as full at now.
func (b *holdBook) sawFull(now time.Time) { b.lastFull = now }

// saturated reports whether a node monitor refused reservations as full
// within window before now.
func (b *holdBook) saturated(now time.Time, window time.Duration) bool {
	return !b.lastFull.IsZero() && now.Sub(b.lastFull) < window
}

// snapshot returns the counts.
func (b *holdBook) snapshot() HoldStats {
	st := b.stats
	st.Held = b.held
	st.Seconds = b.stats.Seconds.Clone()
	return st
}
