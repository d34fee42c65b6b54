package nodemonitor

import "time"

// taskClock measures the node's mean task run time for the coordinator's
// locality prices, by Little's law: over a window, the mean run time is
// the integral of the running count over time divided by the tasks that
// finished. That needs no per-task start time (the slot machine keeps
// none): each change of the running count adds the elapsed time times the
// count before it, two field updates under the slot table's lock, no
// allocation. The window is exponential: each report period's busy time
// and finished count enter their own moving averages, whose ratio is the
// mean (a ratio of averages, not an average of per-period ratios, which
// short periods that end mid-task would bias).
//
// Not safe for concurrent use: its owner, slotTable, holds its lock.
type taskClock struct {
	base    time.Time     // origin of the monotonic offsets
	last    time.Duration // offset of the last change
	running int64         // running count since last
	busy    time.Duration // ∫ running dt since the last period
	done    uint64        // tasks finished since the last period
	// avgBusyMs and avgDone are the periods' moving averages, from the
	// first period in which a task finished (avgDone 0: none yet).
	avgBusyMs, avgDone float64
}

// clockWeight is the weight of the newest period in the moving averages:
// about the last ten periods count. Heavier weights follow changes
// sooner but swing with how many tasks happen to end in each period
// (with 0.3 and periods shorter than a task, by ±15%).
const clockWeight = 0.1

func newTaskClock(now time.Time) taskClock { return taskClock{base: now} }

// observe records that from now on running tasks run; finished of the
// tasks that stopped since the last call finished (or failed). now may
// be read before the lock was taken, so it may trail the last change by
// a little: time never runs backwards here.
func (c *taskClock) observe(now time.Time, running int, finished int) {
	at := now.Sub(c.base)
	if at > c.last {
		c.busy += time.Duration(c.running) * (at - c.last)
		c.last = at
	}
	c.running = int64(running)
	c.done += uint64(finished)
}

// period closes a report period at now and returns the mean task run
// time in ms (0 while no task has finished). Until the first task
// finishes, busy time accumulates across periods.
func (c *taskClock) period(now time.Time, running int) uint64 {
	c.observe(now, running, 0)
	busy, done := float64(c.busy)/float64(time.Millisecond), float64(c.done)
	switch {
	case c.avgDone == 0 && done == 0:
		return 0
	case c.avgDone == 0:
		c.avgBusyMs, c.avgDone = busy, done
	default:
		c.avgBusyMs += clockWeight * (busy - c.avgBusyMs)
		c.avgDone += clockWeight * (done - c.avgDone)
	}
	c.busy, c.done = 0, 0
	mean := c.avgBusyMs / c.avgDone
	if mean > 0 && mean < 1 {
		return 1 // shorter than a millisecond, yet measured
	}
	return uint64(mean + 0.5)
}
