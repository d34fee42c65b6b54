package nodemonitor

import (
	"fmt"
	"maps"
	"sync"
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

// executorRegistry maps each app to the BackendService address of its
// executor here, and counts each one's failed liveness checks in a row.
//
// Lock contract: mu guards both maps; each method takes it and never
// calls out.
type executorRegistry struct {
	mu      sync.Mutex
	backend map[string]string // app -> BackendService address
	misses  map[string]int    // app -> failed checks in a row
}

func newExecutorRegistry() *executorRegistry {
	return &executorRegistry{backend: make(map[string]string), misses: make(map[string]int)}
}

// register records app's executor at addr, replacing any other.
func (e *executorRegistry) register(app, addr string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.backend[app] = addr
	delete(e.misses, app)
}

// lookup returns app's executor address.
func (e *executorRegistry) lookup(app string) (string, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	a, ok := e.backend[app]
	return a, ok
}

// remove forgets app's executor if it is still the one at addr, and
// reports whether it was: a lost executor is handled once, and never a
// new one registered meanwhile.
func (e *executorRegistry) remove(app, addr string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.backend[app] != addr {
		return false
	}
	delete(e.backend, app)
	delete(e.misses, app)
	return true
}

// snapshot returns app -> address.
func (e *executorRegistry) snapshot() map[string]string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return maps.Clone(e.backend)
}

// checked records the outcome of a liveness check of app's executor at
// addr, and reports whether that executor is now lost: executorMisses
// failures in a row. A check of an executor replaced meanwhile counts
// for nothing.
func (e *executorRegistry) checked(app, addr string, alive bool) (lost bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.backend[app] != addr {
		return false
	}
	if alive {
		delete(e.misses, app)
		return false
	}
	e.misses[app]++
	return e.misses[app] >= executorMisses
}

// executorLost handles an app whose executor is gone (the launch of
// launching failed, or it stopped accepting connections; launching is nil
// then): its running tasks are reported failed and their slots freed, its
// queued reservations are dropped, and the node stops advertising the app
// until an executor registers again. The tasks are counted lost, but for
// launching, counted failed.
func (n *NodeMonitor) executorLost(app, backend string, launching *slots.TaskKey, cause error) {
	if !n.execs.remove(app, backend) {
		return // already handled, or a new executor registered meanwhile
	}
	failed, dropped := n.slots.removeApp(app, n.now(), launching)
	n.log.Warn().Err(cause).Str("app", app).Str("backend", backend).Int("running_failed", len(failed)).
		Int("reservations_dropped", dropped).Msg("executor lost; no longer offering the app")
	n.appsChanged()
	for _, t := range failed {
		n.report.finished(t.Reservation.Scheduler, t.Key, app)
		n.report.failed(t.Reservation, t.Key.TaskID, fmt.Sprintf("executor for app %q lost: %v", app, cause))
	}
	n.drive()
}

// checkExecutors checks each registered executor's liveness, each within
// timeout; one that fails executorMisses checks in a row is lost. The
// daemon calls it periodically.
func (n *NodeMonitor) checkExecutors(timeout time.Duration) {
	for app, addr := range n.execs.snapshot() {
		err := n.executors.Alive(addr, timeout)
		if n.execs.checked(app, addr, err == nil) {
			n.executorLost(app, addr, nil, err)
		}
	}
}
