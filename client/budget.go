package client

import "time"

// RetryBudget bounds resubmissions: over any sliding Window, the tasks
// resubmitted may be at most max(Min, Fraction × first-attempt tasks
// submitted in that window). The fraction keeps a saturated fleet from
// being sent more work the more it fails (attempts per task stay near
// 1 + Fraction); the floor lets a small or slow run, where 10% of the
// window is a handful of tasks, still recover from a fault.
//
// The zero value allows no resubmission. It is pure: the caller passes the
// time of every event, so tests drive it with a synthetic clock. Not safe
// for concurrent use: its owner serialises calls. Memory is one entry per
// submission within the window.
type RetryBudget struct {
	Fraction float64
	Window   time.Duration
	Min      int

	first, retries []budgetEvent // oldest first
	nFirst, nRetry int           // sums of the events in the window
}

type budgetEvent struct {
	at time.Time
	n  int
}

// AddFirst records n first-attempt tasks submitted at now.
func (b *RetryBudget) AddFirst(now time.Time, n int) {
	b.first = append(b.first, budgetEvent{now, n})
	b.nFirst += n
}

// Limit is how many resubmitted tasks the window ending at now allows.
func (b *RetryBudget) Limit(now time.Time) int {
	b.expire(now)
	return max(b.Min, int(b.Fraction*float64(b.nFirst)))
}

// Used is how many resubmitted tasks the window ending at now holds.
func (b *RetryBudget) Used(now time.Time) int {
	b.expire(now)
	return b.nRetry
}

// TryRetry charges n resubmitted tasks at now if they fit the budget, and
// reports whether they did. A job is resubmitted whole or not at all, so
// a refusal charges nothing.
func (b *RetryBudget) TryRetry(now time.Time, n int) bool {
	if b.Used(now)+n > b.Limit(now) {
		return false
	}
	b.retries = append(b.retries, budgetEvent{now, n})
	b.nRetry += n
	return true
}

// expire drops events older than the window: an event at t counts while
// now - t < Window.
func (b *RetryBudget) expire(now time.Time) {
	cut := now.Add(-b.Window)
	b.first, b.nFirst = dropBefore(b.first, b.nFirst, cut)
	b.retries, b.nRetry = dropBefore(b.retries, b.nRetry, cut)
}

func dropBefore(evs []budgetEvent, sum int, cut time.Time) ([]budgetEvent, int) {
	i := 0
	for i < len(evs) && !evs[i].at.After(cut) {
		sum -= evs[i].n
		i++
	}
	if i == 0 {
		return evs, sum
	}
	// Copy down rather than reslice, so the backing array does not grow
	// without bound over a long run.
	n := copy(evs, evs[i:])
	return evs[:n], sum
}
