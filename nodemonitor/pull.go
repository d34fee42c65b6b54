package nodemonitor

import (
	"maps"
	"slices"
	"time"

	"github.com/sparrowfleet/sparrow/core/queue"
	"github.com/sparrowfleet/sparrow/core/shortjobs"
	"github.com/sparrowfleet/sparrow/core/slots"
	sparrowrpc "github.com/sparrowfleet/sparrow/thrift/gen-go/sparrowrpc"
)

// pulls is the node monitor's side of pulls (shortjobs.Puller): one
// standing pull reservation per scheduler advertising a short backlog of
// an app this node hosts, queued in the SRPT queue with the scheduler's
// advert as its remaining work; a slot that serves it asks that
// scheduler for a task of any of its backlogged jobs (Config.PullRetry).
//
// The Puller hears, for each scheduler, its advert's work when the
// advert names an app with an executor here (or names none: any app),
// and none otherwise, so that a node hosting none of a scheduler's
// backlogged apps does not ask it for nothing. heard keeps each advert,
// so that an executor registering or leaving changes what the Puller
// hears without waiting for the next advert.
//
// Lock contract: it has no lock; slotTable owns it and every method runs
// with slotTable.mu held. wake runs on the retry timer's goroutine and
// takes the lock itself.
type pulls struct {
	p      *shortjobs.Puller
	origin time.Time
	// heard is each scheduler's last advert with a backlog.
	heard map[string]pullAdvert
	// apps names, for each scheduler whose pull reservation is queued,
	// the app it was queued under (pullAppLocked).
	apps map[string]string
	// task and empty count the pulls whose answer launched a task here
	// and those that launched none (no task, or the call failed).
	task, empty uint64
	// off is set by the drain: no pull is queued from then on.
	off     bool
	timer   *time.Timer
	timerAt time.Duration // when the armed timer fires; 0: none armed
	wake    func()
}

// pullAdvert is a scheduler's backlog advert (membership.Meta.Backlog,
// BacklogApps): its work, and the apps it names, sorted; none: any app.
type pullAdvert struct {
	work float64
	apps []string
}

func newPulls(retry time.Duration, now time.Time) *pulls {
	return &pulls{
		p: shortjobs.NewPuller("", retry), origin: now,
		heard: make(map[string]pullAdvert), apps: make(map[string]string),
	}
}

// at is now as the Puller's time.
func (p *pulls) at(now time.Time) time.Duration { return now.Sub(p.origin) }

// pullActLocked applies the Puller's action a for scheduler sched to the
// queue. A pull that cannot be queued (no app here, a full queue) counts
// as one that got nothing: it is retried after the delay.
func (t *slotTable) pullActLocked(sched string, a shortjobs.PullAction, now time.Time) {
	pl := t.pull
	id := shortjobs.PullRequestID(sched)
	switch a {
	case shortjobs.PullQueue:
		if pl.off {
			pl.p.Gone(sched)
			return
		}
		r := pl.p.Reservation(sched)
		r.App = t.pullAppLocked(sched)
		if r.App == "" || t.core.Enqueue(r, 1) != nil {
			pl.p.Fetching(sched)
			pl.p.Answered(sched, false, pl.at(now))
			t.armPullLocked(now)
			return
		}
		pl.apps[sched] = r.App
		t.short.queued(r, 1, jobHint{known: true, class: shortjobs.Short})
		t.short.mon.Queue().SetWork(id, pl.p.Work(sched))
	case shortjobs.PullCancel:
		delete(pl.apps, sched)
		t.short.cancelled(id, t.core.Cancel(id))
	}
}

// armPullLocked arms the retry timer for the Puller's earliest retry.
func (t *slotTable) armPullLocked(now time.Time) {
	pl := t.pull
	at, ok := pl.p.NextRetry()
	if !ok || pl.off || (pl.timerAt > 0 && pl.timerAt <= at) {
		return
	}
	if pl.timer != nil {
		pl.timer.Stop()
	}
	pl.timerAt = at
	pl.timer = time.AfterFunc(max(at-pl.at(now), 0), pl.wake)
}

// pullAppLocked returns the app sched's pull reservation is queued
// under: the least of the apps both hosted here and named by sched's
// advert (any app hosted here when it names none), or "" when there is
// none, and the advert is, for this node, one of no backlog. The
// scheduler answers a pull with a task of any app this node hosts, so
// the choice only says which app's removal takes the reservation.
func (t *slotTable) pullAppLocked(sched string) string {
	app := ""
	adv := t.pull.heard[sched]
	if len(adv.apps) == 0 {
		for _, a := range t.core.Apps() {
			if app == "" || a < app {
				app = a
			}
		}
		return app
	}
	for _, a := range adv.apps {
		if t.core.HasApp(a) && (app == "" || a < app) {
			app = a
		}
	}
	return app
}

// pullWorkLocked is what the Puller is to hear of sched's last advert:
// its work if it names an app hosted here (pullAppLocked), 0 otherwise.
func (t *slotTable) pullWorkLocked(sched string) float64 {
	if t.pullAppLocked(sched) == "" {
		return 0
	}
	return t.pull.heard[sched].work
}

// pullHeardLocked passes the Puller sched's advert as this node sees it
// (pullWorkLocked) and applies its action; it reports whether a pull was
// queued.
func (t *slotTable) pullHeardLocked(sched string, now time.Time) bool {
	a := t.pull.p.Heard(sched, t.pullWorkLocked(sched))
	if a == shortjobs.PullNone && t.pull.p.Queued(sched) {
		t.short.mon.Queue().SetWork(shortjobs.PullRequestID(sched), t.pull.p.Work(sched))
	}
	t.pullActLocked(sched, a, now)
	return a == shortjobs.PullQueue
}

// pullHeard records scheduler sched's backlog advert w for apps (none:
// any app); it reports whether a pull was queued.
func (t *slotTable) pullHeard(sched string, w float64, apps []string, now time.Time) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.pull == nil || t.pull.off {
		return false
	}
	if w > 0 {
		t.pull.heard[sched] = pullAdvert{work: w, apps: slices.Sorted(slices.Values(apps))}
	} else {
		delete(t.pull.heard, sched)
	}
	return t.pullHeardLocked(sched, now)
}

// pullAppsChangedLocked follows an executor registering or leaving: each
// advert heard whose meaning for this node changed (it now names an app
// hosted here, or no longer does) is passed to the Puller again, so
// that a pull is queued or cancelled at once. It reports whether a pull
// was queued.
func (t *slotTable) pullAppsChangedLocked(now time.Time) bool {
	if t.pull == nil || t.pull.off {
		return false
	}
	queued := false
	for _, sched := range slices.Sorted(maps.Keys(t.pull.heard)) {
		if t.pullWorkLocked(sched) != t.pull.p.Work(sched) {
			queued = t.pullHeardLocked(sched, now) || queued
		}
	}
	return queued
}

// pullGone forgets scheduler sched, which left.
func (t *slotTable) pullGone(sched string, now time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.pull != nil {
		delete(t.pull.heard, sched)
		t.pullActLocked(sched, t.pull.p.Gone(sched), now)
	}
}

// pullDue queues the pulls whose retry delay has passed; it reports
// whether any was queued.
func (t *slotTable) pullDue(now time.Time) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.pull == nil {
		return false
	}
	t.pull.timerAt = 0
	due := t.pull.p.Due(nil, t.pull.at(now))
	for _, sched := range due {
		t.pullActLocked(sched, shortjobs.PullQueue, now)
	}
	t.armPullLocked(now)
	return len(due) > 0
}

// pullFetchingLocked follows slots.Core.Next handing a slot to the pull
// reservation of sched.
func (t *slotTable) pullFetchingLocked(sched string) {
	if t.pull != nil {
		delete(t.pull.apps, sched)
		t.pull.p.Fetching(sched)
	}
}

// pullEmpty frees the slot held for pull reservation r, whose fetch got
// no task (or whose scheduler is gone), and records the answer.
func (t *slotTable) pullEmpty(r queue.Reservation, sched string, now time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.releasedLocked(r.RequestID)
	t.checkIdleLocked()
	if t.pull != nil {
		t.pull.empty++
		t.pullActLocked(sched, t.pull.p.Answered(sched, false, t.pull.at(now)), now)
		t.armPullLocked(now)
	}
}

// startPulled turns the slot held for pull reservation pull into the
// running task key of reservation r, the job the scheduler answered
// with, at now, as start does; and records the answer.
func (t *slotTable) startPulled(key slots.TaskKey, pull, r queue.Reservation, sched string, now time.Time, remaining int, est float64) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	ok := t.core.Start(key, r)
	if ok {
		t.short.launchedAs(key, pull.RequestID, r, remaining, est, now)
		t.launches++
		t.clock.observe(now, t.core.Running(), 0)
	} else {
		t.short.noTask(pull.RequestID)
		t.checkIdleLocked()
	}
	if t.pull != nil {
		if ok {
			t.pull.task++
		} else {
			t.pull.empty++
		}
		t.pullActLocked(sched, t.pull.p.Answered(sched, ok, t.pull.at(now)), now)
		if !ok {
			t.armPullLocked(now)
		}
	}
	return ok
}

// pullAppRemovedLocked follows slots.Core.RemoveApp of app: the pull
// reservations queued under it are gone, and are queued again under
// another app after the retry delay if their advert still names one
// hosted here; the others are forgotten (pullAppsChangedLocked).
func (t *slotTable) pullAppRemovedLocked(app string, now time.Time) {
	if t.pull == nil {
		return
	}
	for sched, a := range t.pull.apps {
		if a == app {
			delete(t.pull.apps, sched)
			t.pull.p.Fetching(sched)
			t.pull.p.Answered(sched, false, t.pull.at(now))
		}
	}
	t.pullAppsChangedLocked(now)
	t.armPullLocked(now)
}

// pullDrainLocked stops pulls for the drain; the queued pull
// reservations went with the apps.
func (t *slotTable) pullDrainLocked() {
	if t.pull == nil {
		return
	}
	t.pull.off = true
	for sched := range t.pull.apps {
		t.pull.p.Gone(sched)
	}
	clear(t.pull.apps)
	clear(t.pull.heard)
	if t.pull.timer != nil {
		t.pull.timer.Stop()
	}
}

// stopPulls stops the retry timer and queues no pull from now on; it
// stops the overrun watch too.
func (t *slotTable) stopPulls() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.short != nil {
		t.short.stopOverrun()
	}
	if t.pull != nil {
		t.pull.off = true
		if t.pull.timer != nil {
			t.pull.timer.Stop()
		}
	}
}

// PullHeard records scheduler service's short-backlog advert
// (membership.Meta.Backlog) for apps (Meta.BacklogApps; none: any app)
// and, with pulls on (Config.PullRetry), queues or cancels this node's
// pull reservation for it: a backlog is pulled from only while its
// advert names an app with an executor here, or names none. The advert
// is kept, so that an executor registering or leaving later starts or
// stops the pull. The daemon calls it when gossip brings the scheduler's
// metadata.
func (n *NodeMonitor) PullHeard(service string, backlog float64, apps []string) {
	if n.slots.pullHeard(service, backlog, apps, n.now()) {
		n.drive()
	}
}

// PullGone forgets scheduler service's backlog: it left.
func (n *NodeMonitor) PullGone(service string) { n.slots.pullGone(service, n.now()) }

// pullWake runs when a pull that got nothing may be queued again.
func (n *NodeMonitor) pullWake() {
	if n.slots.pullDue(n.now()) {
		n.drive()
	}
}

// runPull runs pull reservation r of scheduler sched that reached a free
// slot: getTask with the pull's request id, then the task the scheduler
// chose, launched under its own request id, app and user.
func (n *NodeMonitor) runPull(r queue.Reservation, sched string) {
	gt := n.report.getTaskAddr(r.Scheduler)
	specs, err := n.fetch.ask(r, gt)
	if err != nil || len(specs) == 0 {
		if err != nil {
			n.log.Warn().Err(err).Str("scheduler", gt).Msg("pull failed")
		}
		n.slots.pullEmpty(r, sched, n.now())
		n.drive()
		return
	}
	if len(specs) > 1 {
		n.log.Error().Int("tasks", len(specs)).Str("scheduler", gt).Msg("pull returned several tasks for one slot")
		for _, extra := range specs[1:] {
			er := pulledReservation(r, extra)
			n.report.finished(er.Scheduler, slots.TaskKey{RequestID: er.RequestID, TaskID: extra.TaskId}, er.App)
			n.report.failed(er, extra.TaskId, "node monitor got several tasks for one pull")
		}
	}
	spec := specs[0]
	real := pulledReservation(r, spec)
	key := slots.TaskKey{RequestID: real.RequestID, TaskID: spec.TaskId}
	ok := n.slots.startPulled(key, r, real, sched, n.now(), int(spec.GetRemainingTasks()), spec.GetTaskSeconds())
	if !ok {
		n.log.Error().Str("request", real.RequestID).Str("task", spec.TaskId).Msg("pulled task already running here; not launching it twice")
		n.drive()
		return
	}
	n.launchStarted(real, key, spec)
	n.drive()
}

// pulledReservation is the reservation a pulled task runs under: the
// request id, app and user the scheduler named (the pull's own where it
// named none), from the pull's scheduler.
func pulledReservation(pull queue.Reservation, spec *sparrowrpc.TTaskLaunchSpec) queue.Reservation {
	r := queue.Reservation{RequestID: spec.GetRequestId(), App: spec.GetAppId(), Scheduler: pull.Scheduler}
	if r.RequestID == "" {
		r.RequestID = pull.RequestID
	}
	if r.App == "" {
		r.App = pull.App
	}
	if u := spec.GetUser(); u != nil {
		r.User, r.Group, r.Priority = u.User, u.Group, u.Priority
	}
	return r
}
