package nodemonitor

import (
	"errors"
	"time"
)

// errPaused refuses reservations while the node monitor is paused.
var errPaused = errors.New("node monitor paused: reservations refused")

// SetPaused pauses or resumes taking work, as the machine is taken out
// of service and put back without the node monitor stopping (a cordoned
// Kubernetes node: k8snode). Pausing does what a drain does to new and
// queued work: reservations are refused, queued ones are handed back
// (dropped, for their schedulers to place elsewhere), and the node offers
// no app, so gossip tells schedulers to stop sampling it. Tasks running
// or being fetched go on and are reported as usual. Executors that
// register meanwhile are recorded. Resuming offers every registered
// executor's app again and takes reservations from then on. A drain
// overrides both: a draining node never resumes. Repeated calls with the
// same value do nothing.
func (n *NodeMonitor) SetPaused(paused bool) {
	if paused {
		handed, changed := n.slots.pause(n.now())
		if !changed {
			return
		}
		n.log.Info().Int("reservations_handed_back", handed).Msg("paused: refusing reservations, running tasks go on")
		n.appsChanged()
		return
	}
	pulled, changed := n.slots.resume(appsOf(n.execs.snapshot()), n.now())
	if !changed {
		return
	}
	n.log.Info().Strs("apps", n.slots.apps()).Msg("resumed: taking reservations")
	n.appsChanged()
	if pulled {
		n.drive()
	}
}

func appsOf(backends map[string]string) []string {
	apps := make([]string, 0, len(backends))
	for app := range backends {
		apps = append(apps, app)
	}
	return apps
}

// pause refuses reservations and apps until resume, and drops the queued
// reservations, returning how many it dropped and whether the table was
// neither paused nor draining before. The apps leave the core as they do
// when an executor is lost, so that pulls and the long-task-aware policy
// follow them the same way.
func (t *slotTable) pause(now time.Time) (dropped int, changed bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.paused || t.draining {
		return 0, false
	}
	t.paused = true
	for _, app := range t.core.Apps() {
		dropped += t.core.RemoveApp(app)
		t.pullAppRemovedLocked(app, now)
		if t.short != nil {
			t.short.appRemoved(app)
		}
	}
	return dropped, true
}

// resume ends a pause: apps (those of the executors registered) are
// offered again. It reports whether a pull was queued, and whether the
// table was paused and not draining.
func (t *slotTable) resume(apps []string, now time.Time) (pulled, changed bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.paused || t.draining {
		return false, false
	}
	t.paused = false
	for _, app := range apps {
		t.core.AddApp(app)
	}
	return t.pullAppsChangedLocked(now), true
}
