package nodemonitor

import (
	"time"

	"github.com/sparrowfleet/sparrow/core/queue"
	"github.com/sparrowfleet/sparrow/core/shortjobs"
	"github.com/sparrowfleet/sparrow/core/slots"
	sparrowrpc "github.com/sparrowfleet/sparrow/thrift/gen-go/sparrowrpc"
)

// jobHint is what a reservation or a getTask answer says of its job under
// the long-task-aware policy. known is false when the scheduler sent none
// (it runs without the policy, or is original Sparrow).
type jobHint struct {
	known bool
	class shortjobs.Class
	est   float64 // estimated task duration, seconds; 0: none
	work  float64 // estimated remaining work, seconds; 0: none
}

// hintOf reads the policy's optional fields of an enqueue request.
func hintOf(req *sparrowrpc.TEnqueueTaskReservationsRequest) jobHint {
	if req == nil || req.JobClass == nil {
		return jobHint{}
	}
	h := jobHint{known: true, class: shortjobs.Short, est: req.GetTaskSeconds(), work: req.GetRemainingWork()}
	if req.GetJobClass() != 0 {
		h.class = shortjobs.Long
	}
	return h
}

// shortWork is the node monitor's side of the long-task-aware policy: a
// shortjobs.Monitor (the SRPT queue, the long-work count, the sticky rule)
// and what the daemon keeps around it: the class of each request with
// reservations queued or fetching here, the class, remaining tasks, start
// and reservation of each task running here, and the per-app history of
// task durations that classes requests whose scheduler sent no class.
//
// Lock contract: it has no lock; slotTable owns it and calls every method
// with slotTable.mu held, around the matching slots.Core call. Whether
// the long-work advert changed is asked of mon after each event
// (slotTable.takeAdvert).
type shortWork struct {
	cfg shortjobs.Config
	mon *shortjobs.Monitor
	// pull is the pull reservations' Puller, nil without pulls: a long
	// task's end serves an advertised shorter backlog before its job's
	// next task (shortjobs.Puller.Sticky).
	pull *shortjobs.Puller
	hist *shortjobs.History
	reqs map[string]*shortReq
	runs map[slots.TaskKey]shortRun
	// workUpdates counts the remaining-work updates applied (setWork).
	workUpdates uint64
	// The overrun watch (Config.Overrun): timer fires wake when the
	// earliest short task running here reaches the cutoff (timerAt; zero
	// when none is armed). wake, set by the NodeMonitor, takes
	// slotTable.mu itself and calls overrunDue.
	timer   *time.Timer
	timerAt time.Time
	wake    func()
	off     bool // the watch is stopped (Close)
}

type shortReq struct {
	app      string
	class    shortjobs.Class
	queued   int // reservations queued here
	fetching int // reservations whose slot fetches a task
}

type shortRun struct {
	// class is the class the task's fetch was counted under; overran is
	// set once a short task has run for the cutoff (Config.Overrun), from
	// when it counts as long work.
	class     shortjobs.Class
	overran   bool
	remaining int
	est       float64
	r         queue.Reservation
	at        time.Time
}

// newShortWork returns the policy's state for a node of nslots slots.
func newShortWork(cfg shortjobs.Config, nslots int) *shortWork {
	return &shortWork{
		cfg: cfg, mon: shortjobs.NewMonitor(cfg, nslots), hist: shortjobs.NewHistory(0),
		reqs: make(map[string]*shortReq), runs: make(map[slots.TaskKey]shortRun),
	}
}

// queue is the reservation queue for slots.Core.
func (w *shortWork) queue() queue.Discipline { return w.mon.Queue() }

// req returns id's entry, making it for app and class c if absent.
func (w *shortWork) req(id, app string, c shortjobs.Class) *shortReq {
	q := w.reqs[id]
	if q == nil {
		q = &shortReq{app: app, class: c}
		w.reqs[id] = q
	}
	return q
}

// classOf returns id's class; an unknown request is long, as a job
// without an estimate is.
func (w *shortWork) classOf(id string) shortjobs.Class {
	if q := w.reqs[id]; q != nil {
		return q.class
	}
	return shortjobs.Long
}

// forget drops id's entry once nothing of it is queued or fetching here.
func (w *shortWork) forget(id string) {
	if q := w.reqs[id]; q != nil && q.queued <= 0 && q.fetching <= 0 {
		delete(w.reqs, id)
	}
}

// queued follows slots.Core.Enqueue of count reservations like r. A
// reservation without a class is classed by the app's history.
func (w *shortWork) queued(r queue.Reservation, count int, h jobHint) {
	c := h.class
	if !h.known {
		est, ok := w.hist.Estimate(r.App)
		c = w.cfg.Classify(est, ok)
	}
	w.req(r.RequestID, r.App, c).queued += count
	w.mon.QueuedClass(r.RequestID, c, h.work)
}

// setWork applies a scheduler's update of id's remaining work
// (updateRemainingWork) and reports whether id has reservations queued
// here to reorder; an update for any other request is ignored, so that
// nothing is kept for a request gone from here.
func (w *shortWork) setWork(id string, work float64) bool {
	if q := w.reqs[id]; q == nil || q.queued <= 0 {
		return false
	}
	w.mon.Queued(id, work)
	w.workUpdates++
	return true
}

// cancelled follows slots.Core.Cancel, which dropped n queued
// reservations of id.
func (w *shortWork) cancelled(id string, n int) {
	if q := w.reqs[id]; q != nil {
		q.queued = max(0, q.queued-n)
		w.forget(id)
	}
}

// appRemoved follows slots.Core.RemoveApp: app's queued reservations are
// gone.
func (w *shortWork) appRemoved(app string) {
	for id, q := range w.reqs {
		if q.app == app {
			q.queued = 0
			w.forget(id)
		}
	}
}

// fetching follows slots.Core.Next handing out a reservation of id.
func (w *shortWork) fetching(id string) {
	q := w.reqs[id]
	if q == nil {
		q = w.req(id, "", shortjobs.Long)
	}
	q.queued = max(0, q.queued-1)
	q.fetching++
	w.mon.Fetching(q.class)
}

// noTask follows slots.Core.Released: the fetch for id got no task.
func (w *shortWork) noTask(id string) {
	c := w.classOf(id)
	if q := w.reqs[id]; q != nil {
		q.fetching = max(0, q.fetching-1)
		w.forget(id)
	}
	w.mon.NoTask(c)
}

// launched follows slots.Core.Start of key for reservation r at now;
// remaining and est are the getTask answer's unlaunched tasks of the job
// and their estimated duration (0: the scheduler sent none). The task
// keeps the class its fetch was counted under, so that its end undoes
// exactly what the fetch did to the long-work count.
func (w *shortWork) launched(key slots.TaskKey, r queue.Reservation, remaining int, est float64, now time.Time) {
	w.launchedAs(key, r.RequestID, r, remaining, est, now)
}

// launchedAs is launched for a task of r fetched by a reservation of
// request fetched (a pull's, for a pulled task): the task keeps that
// fetch's class.
func (w *shortWork) launchedAs(key slots.TaskKey, fetched string, r queue.Reservation, remaining int, est float64, now time.Time) {
	c := w.classOf(fetched)
	if q := w.reqs[fetched]; q != nil {
		q.fetching = max(0, q.fetching-1)
		w.forget(fetched)
	}
	w.runs[key] = shortRun{class: c, remaining: remaining, est: est, r: r, at: now}
	w.mon.Launched(r.RequestID, remaining, est)
	if c == shortjobs.Short {
		w.armOverrun(now.Add(w.cutoff()), now)
	}
}

// cutoff is Config.Cutoff as a duration.
func (w *shortWork) cutoff() time.Duration {
	return time.Duration(w.cfg.Cutoff * float64(time.Second))
}

// armOverrun arms the overrun watch for at, unless it is off, stopped,
// or armed for no later.
func (w *shortWork) armOverrun(at, now time.Time) {
	if !w.cfg.Overrun || w.wake == nil || w.off || !w.timerAt.IsZero() && !w.timerAt.After(at) {
		return
	}
	if w.timer != nil {
		w.timer.Stop()
	}
	w.timerAt = at
	w.timer = time.AfterFunc(max(at.Sub(now), 0), w.wake)
}

// overrunDue counts every short task that has run for the cutoff by now
// as long work from now on (shortjobs.Monitor.Overran), re-arms the watch
// for the next, and reports whether any task overran.
func (w *shortWork) overrunDue(now time.Time) bool {
	w.timerAt = time.Time{}
	cut := w.cutoff()
	var next time.Time
	over := false
	for key, run := range w.runs {
		if run.class != shortjobs.Short || run.overran {
			continue
		}
		if due := run.at.Add(cut); due.After(now) {
			if next.IsZero() || due.Before(next) {
				next = due
			}
			continue
		}
		run.overran = true
		w.runs[key] = run
		w.mon.Overran()
		over = true
	}
	if !next.IsZero() {
		w.armOverrun(next, now)
	}
	return over
}

// stopOverrun stops the overrun watch for good.
func (w *shortWork) stopOverrun() {
	w.off = true
	if w.timer != nil {
		w.timer.Stop()
	}
}

// ended follows slots.Core.Finished (or FailApp, sticky false) of key at
// now: its duration joins the app's history and, if sticky and its job
// had tasks left when it launched, a sticky reservation of the same
// request is queued.
func (w *shortWork) ended(key slots.TaskKey, now time.Time, sticky bool) {
	run, ok := w.runs[key]
	if !ok {
		return
	}
	delete(w.runs, key)
	w.hist.Observe(run.r.App, now.Sub(run.at).Seconds())
	remaining := run.remaining
	if !sticky {
		remaining = 0
	}
	// An overrun task ends as the long work it has counted as; its
	// request keeps the class it was queued under.
	ends := run.class
	if run.overran {
		ends = shortjobs.Long
	}
	if w.pull != nil && remaining > 0 {
		remaining = w.pull.Sticky(ends, remaining, float64(remaining)*run.est)
	}
	if remaining > 0 {
		w.req(run.r.RequestID, run.r.App, run.class).queued++
	}
	w.mon.Ended(ends, remaining, run.r)
}
