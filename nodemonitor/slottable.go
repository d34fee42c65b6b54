package nodemonitor

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/sparrowfleet/sparrow/core/queue"
	"github.com/sparrowfleet/sparrow/core/shortjobs"
	"github.com/sparrowfleet/sparrow/core/slots"
)

// outcome is how a task launched here ended.
type outcome int

// The outcomes of a launched task.
const (
	// taskFinished: its executor reported it finished, and not as failed.
	taskFinished outcome = iota
	// taskFailed: its executor reported it failed (STATUS_TASK_FAILED),
	// or it could not be launched (no executor, or launchTask failed).
	taskFailed
	// taskLost: it was running when its executor was declared lost.
	taskLost
	numOutcomes
)

// errDraining refuses reservations while the node monitor drains.
var errDraining = errors.New("node monitor draining: reservations refused")

// slotTable is the node monitor's slots and reservation queue
// (core/slots), with what changes with them: the launch count, the task
// clock, the coordinator's weights on the queue (weightGuide), and the
// drain's refusal of new work.
//
// Lock contract: mu guards every field; every method takes it and
// releases it before returning. No method calls out to RPC or to another
// part, except ready, which asks gone (a set with its own lock, which
// never calls back) while mu is held.
type slotTable struct {
	mu       sync.Mutex
	core     *slots.Core
	launches uint64
	// ended counts the tasks launched here that ended, by outcome: each
	// leaves the running set once, so launches = running + the ended.
	ended [numOutcomes]uint64
	clock taskClock
	guide weightGuide
	// draining refuses reservations and apps from drain on; idle is
	// closed once, while draining, no slot fetches or runs.
	draining bool
	idle     chan struct{}
	// paused refuses reservations and apps until resume (pause.go).
	paused bool
	// short is the long-task-aware policy's state (shortjobs.go), nil
	// without the policy.
	short *shortWork
	// pull is the pull reservations' state (pull.go), nil without pulls.
	pull *pulls
}

func newSlotTable(n int, q queue.Discipline, maxQueued int, now time.Time, short *shortWork) (*slotTable, error) {
	if short != nil {
		q = short.queue()
	}
	if q == nil {
		q = queue.NewFIFO()
	}
	core, err := slots.New(n, q)
	if err != nil {
		return nil, err
	}
	core.SetMaxQueued(maxQueued)
	return &slotTable{core: core, clock: newTaskClock(now), idle: make(chan struct{}), short: short}, nil
}

// state is a snapshot for State.
func (t *slotTable) state() State {
	t.mu.Lock()
	defer t.mu.Unlock()
	apps := t.core.Apps()
	slices.Sort(apps)
	c := t.core
	st := State{
		Slots: c.Slots(), Free: c.Free(), Fetching: c.Fetching(), Running: c.Running(),
		Queued: c.Queued(), Launches: t.launches, Apps: apps, Draining: t.draining, Paused: t.paused,
		Finished: t.ended[taskFinished], Failed: t.ended[taskFailed], Lost: t.ended[taskLost],
	}
	if t.pull != nil {
		st.PullTasks, st.PullsEmpty = t.pull.task, t.pull.empty
	}
	if t.short != nil {
		st.WorkUpdates = t.short.workUpdates
	}
	return st
}

// usage returns each user's queued reservations and running tasks.
func (t *slotTable) usage() map[string]slots.Usage {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.core.Usage()
}

// addApp records an executor for app at now; while draining or paused it
// records nothing, so that the node offers no app. It reports whether a pull was
// queued: a scheduler's backlog of app is pulled from at once.
func (t *slotTable) addApp(app string, now time.Time) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.draining || t.paused {
		return false
	}
	t.core.AddApp(app)
	return t.pullAppsChangedLocked(now)
}

// apps returns the sorted app list.
func (t *slotTable) apps() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.appsLocked()
}

// removeApp forgets app, drops its queued reservations and fails its
// running tasks, returning them and how many reservations it dropped.
// They are counted lost, but for launching, the tasks whose launch found
// the executor gone, if any, which are counted failed.
func (t *slotTable) removeApp(app string, now time.Time, launching []slots.TaskKey) (failed []slots.RunningTask, dropped int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	dropped = t.core.RemoveApp(app)
	failed = t.core.FailApp(app)
	for _, f := range failed {
		if slices.Contains(launching, f.Key) {
			t.ended[taskFailed]++
		} else {
			t.ended[taskLost]++
		}
	}
	t.pullAppRemovedLocked(app, now)
	if t.short != nil {
		t.short.appRemoved(app)
		for _, f := range failed {
			t.short.ended(f.Key, now, false)
		}
	}
	t.clock.observe(now, t.core.Running(), len(failed))
	t.checkIdleLocked()
	return failed, dropped
}

func (t *slotTable) appsLocked() []string {
	apps := t.core.Apps()
	slices.Sort(apps)
	return apps
}

// enqueue queues count reservations like r, giving r's user its guided
// weight first when guidance is in force, and h's word on the job to the
// long-task-aware policy if it runs. It fails, queueing nothing, for an
// app with no executor, a full queue, or a draining or paused node.
func (t *slotTable) enqueue(r queue.Reservation, count int, h jobHint) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.draining {
		return errDraining
	}
	if t.paused {
		return errPaused
	}
	t.guide.guide(t.core.Queue(), r.User)
	if err := t.core.Enqueue(r, count); err != nil {
		return err
	}
	if t.short != nil {
		t.short.queued(r, count, h)
	}
	return nil
}

// overrunDue runs the overrun watch (shortWork.overrunDue) at now.
func (t *slotTable) overrunDue(now time.Time) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.short != nil && t.short.overrunDue(now)
}

// takeAdvert returns the long-work advert (shortjobs.Monitor.Advert2) and
// whether it changed since the last call that returned true
// (shortjobs.Monitor.AdvertChanged); false without the policy.
func (t *slotTable) takeAdvert() ([2]byte, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.short == nil || !t.short.mon.AdvertChanged() {
		return [2]byte{}, false
	}
	return t.short.mon.Advert2(), true
}

// setWork gives the long-task-aware policy a scheduler's update of
// request's remaining work and reports whether it had reservations
// queued here to reorder (false without the policy).
func (t *slotTable) setWork(request string, work float64) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.short != nil && t.short.setWork(request, work)
}

// cancel drops request's queued reservations and returns how many.
func (t *slotTable) cancel(request string) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := t.core.Cancel(request)
	if t.short != nil {
		t.short.cancelled(request, n)
	}
	return n
}

// guided reports whether the coordinator's weights order the queue.
func (t *slotTable) guided() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.guide.active()
}

// ready takes every reservation that a free slot can take off the queue,
// holding a slot for each. A reservation whose scheduler gone reports
// gone frees its slot at once, uncalled. If offer is set, the first offers
// of them for offer's request and scheduler are returned apart, in took,
// for the caller to run offered tasks in their slots; the rest are
// returned in ready, to fetch. Each one returned must be answered with
// exactly one start or released. free is how many slots are left free.
func (t *slotTable) ready(offer *queue.Reservation, offers int, gone *schedulerSet) (ready, took []queue.Reservation, free int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for {
		r, more := t.core.Next()
		if !more {
			t.checkIdleLocked()
			return ready, took, t.core.Free()
		}
		if t.short != nil {
			t.short.fetching(r.RequestID)
		}
		sched, pull := shortjobs.PullScheduler(r.RequestID)
		if pull {
			t.pullFetchingLocked(sched)
		}
		if gone.has(r.Scheduler) {
			t.releasedLocked(r.RequestID)
			if pull && t.pull != nil {
				delete(t.pull.heard, sched)
				t.pull.p.Gone(sched)
			}
			continue
		}
		if offer != nil && len(took) < offers && r.RequestID == offer.RequestID && r.Scheduler == offer.Scheduler {
			took = append(took, r)
			continue
		}
		ready = append(ready, r)
	}
}

// released frees the slot held for a fetch of request that produced no
// task.
func (t *slotTable) released(request string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.releasedLocked(request)
	t.checkIdleLocked()
}

func (t *slotTable) releasedLocked(request string) {
	t.core.Released()
	if t.short != nil {
		t.short.noTask(request)
	}
}

// start turns the slot held for r's fetch into the running task key, at
// now; remaining and est are the getTask answer's unlaunched tasks and
// their estimated duration, for the long-task-aware policy (0: none). It
// returns false, freeing the slot, if key already runs here.
func (t *slotTable) start(key slots.TaskKey, r queue.Reservation, now time.Time, remaining int, est float64) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.core.Start(key, r) {
		if t.short != nil {
			t.short.noTask(r.RequestID)
		}
		t.checkIdleLocked()
		return false
	}
	if t.short != nil {
		t.short.launched(key, r, remaining, est, now)
	}
	t.launches++
	t.clock.observe(now, t.core.Running(), 0)
	return true
}

// finish frees the slots of those of keys running here, at now, counting
// them ended as how, and reports for each whether it ran here. A key not
// running frees nothing, so a repeated report cannot free a slot twice.
func (t *slotTable) finish(keys []slots.TaskKey, now time.Time, how outcome) []bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	freed := make([]bool, len(keys))
	n := 0
	for i, k := range keys {
		if t.core.Finished(k) {
			freed[i] = true
			n++
			t.ended[how]++
			if t.short != nil {
				t.short.ended(k, now, !t.draining)
			}
		}
	}
	t.clock.observe(now, t.core.Running(), n)
	t.checkIdleLocked()
	return freed
}

// taskMillis closes the task clock's period at now (taskClock.period).
func (t *slotTable) taskMillis(now time.Time) uint64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.clock.period(now, t.core.Running())
}

// setWeights sets users' weights, all or none.
func (t *slotTable) setWeights(weights map[string]float64) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	q, ok := t.core.Queue().(queue.Weights)
	if !ok {
		return fmt.Errorf("set weights: the %T queue discipline has no weights", t.core.Queue())
	}
	for user, w := range weights {
		if err := queue.CheckWeight(w); err != nil {
			return fmt.Errorf("set weights: user %q: %w", user, err)
		}
	}
	for user, w := range weights {
		if err := q.SetWeight(user, w); err != nil {
			return fmt.Errorf("set weights: user %q: %w", user, err)
		}
	}
	return nil
}

// applyGuidance installs g on the queue (weightGuide.apply).
func (t *slotTable) applyGuidance(g Guidance) (bool, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.guide.apply(t.core.Queue(), g, maps.Keys(t.core.Usage()))
}

// dropGuidance returns the queue to its local weights.
func (t *slotTable) dropGuidance() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.guide.drop(t.core.Queue())
}

// drain refuses reservations and apps from now on and drops the queued
// reservations, returning how many it dropped. Running and fetching slots
// go on; idle is closed once none is left.
func (t *slotTable) drain() (dropped int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.draining {
		return 0
	}
	t.draining = true
	t.pullDrainLocked()
	for _, app := range t.core.Apps() {
		dropped += t.core.RemoveApp(app)
		if t.short != nil {
			t.short.appRemoved(app)
		}
	}
	t.checkIdleLocked()
	return dropped
}

// idleCh is closed once the node drains and no slot fetches or runs.
func (t *slotTable) idleCh() <-chan struct{} { return t.idle }

// busy returns how many slots run a task and how many fetch one.
func (t *slotTable) busy() (running, fetching int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.core.Running(), t.core.Fetching()
}

func (t *slotTable) checkIdleLocked() {
	if !t.draining || t.core.Running() > 0 || t.core.Fetching() > 0 {
		return
	}
	select {
	case <-t.idle:
	default:
		close(t.idle)
	}
}
