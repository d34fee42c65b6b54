package scheduler

import "time"

// First come, first placed among held calls (issue 15).
//
// Jobs held because node monitors refused their reservations as full
// compete for each queue position that frees. Left to their own retry
// timers, whichever round happens to come first takes it, so held jobs
// progress together, slowly, and the spread of their waits is wide: in
// `sparrow bench overload` at 10x, with 64 calls held and a queue of held
// work about 20 s deep, a tenth of them passed --max-hold (30 s) and were
// refused, and the client resubmitted them. Placing the oldest held job
// first makes every wait about the depth of that queue.
//
// So only the oldest held call (the head) places rounds, and a capacity
// signal (a getTask) goes to it first. The others wait, and are signalled
// in turn as the head is answered. A head that makes no progress (no
// reservation of it accepted) for holdHeadStuck does not block the rest:
// its candidates may be full while others' are not (a constrained job), or
// it may never fit (more reservations than its node monitors queue);
// then every held call places rounds, as they did before the order.

// holdHeadStuck is how long the head may go without an accepted
// reservation before the calls behind it place rounds too.
const holdHeadStuck = time.Second

// orderHeld appends h, newly held, to the arrival order. Called with s.mu
// held.
func (s *Scheduler) orderHeld(h *holdState) {
	hb := &s.hold
	if len(hb.order) > 2*s.cfg.MaxHeldJobs+16 {
		// Calls answered behind a stuck head leave entries; drop them.
		kept := hb.order[:0]
		for _, q := range hb.order {
			if q.waiting {
				kept = append(kept, q)
			}
		}
		clear(hb.order[len(kept):])
		hb.order = kept
	}
	hb.order = append(hb.order, h)
}

// heldHead returns the oldest held call still waiting, or nil. Called
// with s.mu held.
func (s *Scheduler) heldHead() *holdState {
	hb := &s.hold
	for len(hb.order) > 0 && !hb.order[0].waiting {
		hb.order[0] = nil
		hb.order = hb.order[1:]
	}
	if len(hb.order) == 0 {
		return nil
	}
	return hb.order[0]
}

// mayPlaceHeld reports whether held call h may place a round at now: it
// is the head, or the head is stuck. Called with s.mu held.
func (s *Scheduler) mayPlaceHeld(h *holdState, now time.Time) bool {
	head := s.heldHead()
	return head == nil || head == h || headStuck(head, now)
}

// headStuck reports whether the head has had no reservation accepted for
// holdHeadStuck at now.
func headStuck(head *holdState, now time.Time) bool {
	return now.Sub(head.progress) >= holdHeadStuck
}

// signalHead wakes the head for a round now: capacity may have freed, or
// it has just become the head. It reports whether there was one. Called
// with s.mu held.
func (s *Scheduler) signalHead() bool {
	head := s.heldHead()
	if head == nil {
		return false
	}
	if soon := head.last.Add(holdMinGap); head.next.After(soon) {
		head.next = soon
	}
	head.signal()
	return true
}
