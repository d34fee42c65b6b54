package shortjobs

import (
	"math"

	"github.com/sparrowfleet/sparrow/core/queue"
)

// Monitor is the policy's node-monitor side: the SRPT queue, the long-work
// count and the sticky rule, so that the node monitor daemon and the
// simulator apply the same rules. The node monitor gives Queue to its
// slots.Core as the queue discipline and calls the methods below where
// their comments say; those returning a bool report that the advert
// changed and should be gossiped (Advert). Not safe for concurrent use:
// the node monitor calls it under the lock that guards its slots.Core.
type Monitor struct {
	q    *SRPT
	long LongWork

	levels          bool // advertise the long-work level (Config.LongSteer)
	shortStickyOnly bool
	sent            [2]byte // the advert last reported by AdvertChanged
}

// NewMonitor returns a Monitor for a node of slots slots, whose queue
// passes a reservation over at most c.StarveLimit times per slot
// (StarveLimitFor).
func NewMonitor(c Config, slots int) *Monitor {
	m := &Monitor{q: NewSRPT(StarveLimitFor(c.StarveLimit, slots)), levels: c.LongSteer, shortStickyOnly: c.ShortStickyOnly}
	m.q.SetClassFirst(c.ClassFirst)
	return m
}

// StarveLimitFor returns the pass-over bound of the queue of a node of
// slots slots under a bound of perSlot per slot: their product, at least
// 1, saturated at the largest int.
func StarveLimitFor(perSlot, slots int) int {
	perSlot, slots = max(perSlot, 1), max(slots, 1)
	if perSlot > math.MaxInt/slots {
		return math.MaxInt
	}
	return perSlot * slots
}

// Queue returns the reservation queue, for slots.Core.
func (m *Monitor) Queue() *SRPT { return m.q }

// Queued is called after slots.Core.Enqueue queued reservations of request
// id whose probe estimated the job's remaining work as work (tasks times
// estimated task duration; 0 or less when the job gave no estimate).
func (m *Monitor) Queued(id string, work float64) {
	if work > 0 {
		m.q.SetWork(id, work)
	}
}

// QueuedClass is Queued for a job of class c: a long job's queued
// reservations count in the node's long-work level (Advert2) and, under
// Config.ClassFirst, are served after short jobs'.
func (m *Monitor) QueuedClass(id string, c Class, work float64) {
	if c == Long {
		m.q.SetLong(id)
	}
	m.Queued(id, work)
}

// Fetching is called when slots.Core.Next hands out a reservation of a
// job of class c: a slot now fetches its task.
func (m *Monitor) Fetching(c Class) bool {
	if c == Long {
		return m.long.Add(1)
	}
	return false
}

// NoTask is called when a fetch for a job of class c got no task: the
// slot is released.
func (m *Monitor) NoTask(c Class) bool {
	if c == Long {
		return m.long.Add(-1)
	}
	return false
}

// Launched is called when a fetch for request id got a task, with the
// number of its job's tasks still unlaunched and their estimated duration
// as the scheduler's answer gives them: the request's queued reservations
// are reordered by the remaining work. The caller keeps remaining with the
// running task, for Ended.
func (m *Monitor) Launched(id string, remaining int, estimate float64) {
	if estimate > 0 {
		m.q.SetWork(id, float64(remaining)*estimate)
	}
}

// Overran is called when a task of a short job has run here for the
// cutoff (under Config.Overrun): from then on it counts as long work, in
// the advert and the level, and its end is reported to Ended as Long. It
// reports whether the advert may have changed.
func (m *Monitor) Overran() bool { return m.long.Add(1) }

// Ended is called when a task of a job of class c ended, its slot being
// free, before the node monitor serves its queue. remaining is what
// Launched was given for the task: if the job still had tasks then, r (a
// reservation of the same request) is queued sticky, so that the slot
// asks that job's scheduler for another task first.
func (m *Monitor) Ended(c Class, remaining int, r queue.Reservation) bool {
	if remaining > 0 && (c == Short || !m.shortStickyOnly) {
		m.q.PushSticky(r)
		if c == Long {
			m.q.SetLong(r.RequestID)
		}
	}
	if c == Long {
		return m.long.Add(-1)
	}
	return false
}

// Advert returns the node's advertisement (see LongWork.Advert).
func (m *Monitor) Advert() byte { return m.long.Advert() }

// LongWork returns the node's current count of slots fetching or running
// long tasks.
func (m *Monitor) LongWork() int { return m.long.Count() }

// Advert2 returns the node's two-byte advertisement: Advert, then, under
// Config.LongSteer, the LongLevel of its long work running, being fetched
// and queued (0 otherwise). Readers of one byte (AdvertBusy) see the same
// first byte as before; AdvertLevel reads the second.
func (m *Monitor) Advert2() [2]byte {
	var a [2]byte
	a[0] = m.long.Advert()
	if m.levels {
		a[1] = LongLevel(m.long.Count() + m.q.LongQueued())
	}
	return a
}

// AdvertChanged reports whether the advertisement worth gossiping changed
// since the last call that returned true: whether the node holds long
// work running (AdvertBusy), or, under Config.LongSteer, its long-work
// level. The node monitor calls it after handling each event and gossips
// Advert2 when it returns true.
func (m *Monitor) AdvertChanged() bool {
	a := m.Advert2()
	now := [2]byte{min(a[0], 1), a[1]}
	if now == m.sent {
		return false
	}
	m.sent = now
	return true
}
