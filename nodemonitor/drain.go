package nodemonitor

import (
	"time"
)

// DefaultDrainTimeout is how long a drain waits, by default, for the
// tasks running on a node monitor to finish.
const DefaultDrainTimeout = 30 * time.Second

// DrainResult says what a drain did.
type DrainResult struct {
	// Handed is how many queued reservations were dropped for their
	// schedulers to place elsewhere.
	Handed int
	// Unfinished is how many tasks still ran, or were being fetched, when
	// the drain's time was up.
	Unfinished int
	// Waited is how long the drain waited for running tasks.
	Waited time.Duration
}

// Drain takes the node out of service without losing work. From the call
// on, reservations (with or without an offer) are refused, so schedulers
// place them elsewhere, and the node offers no app: Config.OnAppsChanged
// gets an empty list, which the daemon advertises in gossip, so that
// schedulers stop sampling the node and place the reservations they hold
// on it elsewhere at once. Its queued reservations are dropped. Tasks
// running, and those being fetched (a fetched task is launched), go on
// until they finish or timeout passes; Drain returns then. Executors
// that register meanwhile are recorded but offer no app. A node monitor
// does not come back from a drain: the daemon leaves gossip next.
func (n *NodeMonitor) Drain(timeout time.Duration) DrainResult {
	start := time.Now()
	handed := n.slots.drain()
	n.log.Info().Int("reservations_handed_back", handed).Dur("timeout", timeout).Msg("draining: refusing reservations, waiting for running tasks")
	n.appsChanged()
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-n.slots.idleCh():
	case <-t.C:
	}
	running, fetching := n.slots.busy()
	res := DrainResult{Handed: handed, Unfinished: running + fetching, Waited: time.Since(start)}
	ev := n.log.Info()
	if res.Unfinished > 0 {
		// Their schedulers report them lost once the node leaves gossip.
		ev = n.log.Warn()
	}
	ev.Int("unfinished", res.Unfinished).Dur("waited", res.Waited).Msg("drained")
	return res
}
