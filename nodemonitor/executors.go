package nodemonitor

import (
	"errors"
	"fmt"
	"maps"
	"net"
	"sync"
	"time"

	"github.com/sparrowfleet/sparrow/core/slots"
)

// Executor liveness defaults.
const (
	DefaultExecutorCheck = time.Second
	// An executor is lost when its failed checks in a row weigh
	// executorLostWeight: a refused or reset connection weighs
	// executorRefusedWeight (two in a row), a check that timed out 1 (ten
	// in a row). The executor runs beside the node monitor, so a dead one
	// refuses at once; a timeout more often says that this process, or
	// the machine, was too busy to see the connect complete in time, and
	// withdrawing the app for it would make a starved node stop offering
	// work it can run.
	executorLostWeight    = 10
	executorRefusedWeight = 5
)

// executorRegistry maps each app to the BackendService address of its
// executor here and the extensions that executor serves
// (sparrowrpc.BACKEND_* bits), and counts each one's failed liveness
// checks in a row.
//
// Lock contract: mu guards the maps; each method takes it and never
// calls out.
type executorRegistry struct {
	mu       sync.Mutex
	backend  map[string]string // app -> BackendService address
	features map[string]int32  // app -> the executor's BACKEND_* bits
	misses   map[string]int    // app -> weight of the failed checks in a row
}

func newExecutorRegistry() *executorRegistry {
	return &executorRegistry{backend: make(map[string]string), features: make(map[string]int32), misses: make(map[string]int)}
}

// register records app's executor at addr, serving the extensions in
// features, replacing any other.
func (e *executorRegistry) register(app, addr string, features int32) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.backend[app] = addr
	e.features[app] = features
	delete(e.misses, app)
}

// lookup returns app's executor address and the extensions it serves.
func (e *executorRegistry) lookup(app string) (addr string, features int32, ok bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	a, ok := e.backend[app]
	return a, e.features[app], ok
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
	delete(e.features, app)
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
// addr (err nil: alive), and reports whether that executor is now lost:
// failures in a row weighing executorLostWeight. A check of an executor
// replaced meanwhile counts for nothing.
func (e *executorRegistry) checked(app, addr string, err error) (lost bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.backend[app] != addr {
		return false
	}
	if err == nil {
		delete(e.misses, app)
		return false
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		e.misses[app]++
	} else {
		e.misses[app] += executorRefusedWeight
	}
	return e.misses[app] >= executorLostWeight
}

// executorLost handles an app whose executor is gone (the launch of
// launching failed, or it stopped accepting connections; launching is nil
// then): its running tasks are reported failed and their slots freed, its
// queued reservations are dropped, and the node stops advertising the app
// until an executor registers again. The tasks are counted lost, but for
// launching, counted failed.
func (n *NodeMonitor) executorLost(app, backend string, launching []slots.TaskKey, cause error) {
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
		if n.execs.checked(app, addr, err) {
			n.executorLost(app, addr, nil, err)
		}
	}
}
