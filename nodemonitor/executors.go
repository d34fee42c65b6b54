package nodemonitor

import (
	"fmt"
	"net"
	"slices"
	"time"

	"github.com/sparrowfleet/sparrow/core/slots"
)

// Executor liveness defaults.
const (
	DefaultExecutorCheck = time.Second
	// executorMisses is how many failed checks in a row mark an executor
	// lost, so one slow accept does not fail its tasks.
	executorMisses = 2
)

// executorLost handles an app whose executor is gone (a launch failed, or
// it stopped accepting connections): its running tasks are reported failed
// and their slots freed, its queued reservations are dropped, and the node
// stops advertising the app until an executor registers again.
func (n *NodeMonitor) executorLost(app, backend string, cause error) {
	n.mu.Lock()
	if n.backend[app] != backend {
		// Already handled, or a new executor registered meanwhile.
		n.mu.Unlock()
		return
	}
	delete(n.backend, app)
	delete(n.misses, app)
	dropped := n.core.RemoveApp(app)
	failed := n.core.FailApp(app)
	n.clock.observe(time.Now(), n.core.Running(), len(failed))
	apps := n.core.Apps()
	n.mu.Unlock()
	slices.Sort(apps)
	n.log.Warn().Err(cause).Str("app", app).Str("backend", backend).Int("running_failed", len(failed)).
		Int("reservations_dropped", dropped).Msg("executor lost; no longer offering the app")
	if n.cfg.OnAppsChanged != nil {
		n.cfg.OnAppsChanged(apps)
	}
	for _, t := range failed {
		n.finished(t.Reservation.Scheduler, t.Key, app)
		n.reportFailed(t.Reservation, t.Key.TaskID, fmt.Sprintf("executor for app %q lost: %v", app, cause))
	}
	n.drive()
}

// finished tells a task's scheduler that it no longer runs here.
func (n *NodeMonitor) finished(scheduler string, key slots.TaskKey, app string) {
	id := fullID(scheduler, key, app)
	n.notify.Add(n.getTaskAddr(scheduler), id)
}

// checkExecutors dials each registered executor; one that fails
// executorMisses checks in a row is lost. The daemon calls it periodically.
func (n *NodeMonitor) checkExecutors(timeout time.Duration) {
	n.mu.Lock()
	backends := make(map[string]string, len(n.backend))
	for app, addr := range n.backend {
		backends[app] = addr
	}
	n.mu.Unlock()
	for app, addr := range backends {
		conn, err := net.DialTimeout("tcp", addr, timeout)
		if err == nil {
			conn.Close()
		}
		n.mu.Lock()
		if n.backend[app] != addr {
			n.mu.Unlock()
			continue
		}
		if err == nil {
			delete(n.misses, app)
			n.mu.Unlock()
			continue
		}
		n.misses[app]++
		lost := n.misses[app] >= executorMisses
		n.mu.Unlock()
		if lost {
			n.executorLost(app, addr, fmt.Errorf("executor at %s stopped accepting connections: %w", addr, err))
		}
	}
}
