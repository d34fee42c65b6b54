package slots

import (
	"fmt"

	"github.com/sparrowfleet/sparrow/core/queue"
)

// DefaultMaxQueued bounds queued reservations, so that a flood of
// reservations cannot grow a node monitor's memory without bound: 100,000
// is some 25,000 jobs' worth at four reservations each, a few tens of MB.
const DefaultMaxQueued = 100_000

// TaskKey identifies a launched task on this node monitor.
type TaskKey struct {
	RequestID string
	TaskID    string
}

// Core is one node monitor's slots and reservation queue.
type Core struct {
	slots     int
	maxQueued int
	fetching  int
	queue     queue.Discipline
	apps      map[string]bool
	running   map[TaskKey]queue.Reservation // task -> the reservation it ran for

	// Per-user counts, for the coordinator's view of who uses this node:
	// queued reservations by request (every reservation of a request has
	// the request's user and app) and running tasks by user.
	queuedReq map[string]*requestCount
	runningBy map[string]int
	// account is the queue discipline's launch and finish hook, if it
	// keeps one (Choosy does).
	account queue.Accounting
}

// requestCount is one request's reservations queued here.
type requestCount struct {
	user, app string
	n         int
}

// Usage is one user's work on this node.
type Usage struct {
	Queued, Running int
}

// RunningTask is a task running in a slot, with the reservation that
// fetched it (its app, user and scheduler).
type RunningTask struct {
	Key         TaskKey
	Reservation queue.Reservation
}

// New returns a Core with the given number of slots, queueing reservations
// in q.
func New(slots int, q queue.Discipline) (*Core, error) {
	if slots <= 0 {
		return nil, fmt.Errorf("slots must be positive, got %d", slots)
	}
	if q == nil {
		return nil, fmt.Errorf("nil queue discipline")
	}
	account, _ := q.(queue.Accounting)
	return &Core{
		slots:     slots,
		maxQueued: DefaultMaxQueued,
		queue:     q,
		apps:      make(map[string]bool),
		running:   make(map[TaskKey]queue.Reservation),
		queuedReq: make(map[string]*requestCount),
		runningBy: make(map[string]int),
		account:   account,
	}, nil
}

// SetMaxQueued changes the queue bound; n <= 0 restores the default.
func (c *Core) SetMaxQueued(n int) {
	if n <= 0 {
		n = DefaultMaxQueued
	}
	c.maxQueued = n
}

// Queue returns the discipline, so that weights can be changed at run time.
func (c *Core) Queue() queue.Discipline { return c.queue }

// AddApp records that an executor for app runs on this node.
func (c *Core) AddApp(app string) { c.apps[app] = true }

// RemoveApp forgets app's executor and drops its queued reservations,
// returning how many were dropped. Running tasks are left to finish or fail.
func (c *Core) RemoveApp(app string) int {
	delete(c.apps, app)
	for id, rc := range c.queuedReq {
		if rc.app == app {
			delete(c.queuedReq, id)
		}
	}
	return c.queue.RemoveApp(app)
}

// HasApp reports whether an executor for app is registered.
func (c *Core) HasApp(app string) bool { return c.apps[app] }

// Apps returns the registered apps, in no particular order.
func (c *Core) Apps() []string {
	out := make([]string, 0, len(c.apps))
	for a := range c.apps {
		out = append(out, a)
	}
	return out
}

// Enqueue queues n reservations like r. It refuses (returns an error) a
// reservation for an app with no executor here, so that it is not queued
// forever, and any that would pass the queue bound.
func (c *Core) Enqueue(r queue.Reservation, n int) error {
	switch {
	case n <= 0:
		return fmt.Errorf("request %q: number of reservations must be positive, got %d", r.RequestID, n)
	case !c.apps[r.App]:
		return fmt.Errorf("request %q: no executor registered for app %q", r.RequestID, r.App)
	case c.queue.Len()+n > c.maxQueued:
		return fmt.Errorf("request %q: queue full (%d queued, limit %d)", r.RequestID, c.queue.Len(), c.maxQueued)
	}
	for i := 0; i < n; i++ {
		c.queue.Push(r)
	}
	rc := c.queuedReq[r.RequestID]
	if rc == nil {
		rc = &requestCount{user: r.User, app: r.App}
		c.queuedReq[r.RequestID] = rc
	}
	rc.n += n
	return nil
}

// Cancel drops the queued reservations of a request and returns how many.
func (c *Core) Cancel(requestID string) int {
	delete(c.queuedReq, requestID)
	return c.queue.RemoveRequest(requestID)
}

// Next returns the next reservation to fetch a task for, and holds a slot
// for it, if a slot is free and a reservation is queued. The caller must
// answer each one with exactly one Started or Released.
func (c *Core) Next() (queue.Reservation, bool) {
	if c.Free() == 0 {
		return queue.Reservation{}, false
	}
	r, ok := c.queue.Pop()
	if !ok {
		return queue.Reservation{}, false
	}
	c.fetching++
	if rc := c.queuedReq[r.RequestID]; rc != nil {
		if rc.n--; rc.n <= 0 {
			delete(c.queuedReq, r.RequestID)
		}
	}
	return r, true
}

// Released frees the slot held for a fetch that produced no task.
func (c *Core) Released() {
	if c.fetching > 0 {
		c.fetching--
	}
}

// Start turns the slot held for a fetch of r into one running task. It
// returns false, and frees the slot, if that task is already running here:
// the fleet never runs a task twice.
func (c *Core) Start(key TaskKey, r queue.Reservation) bool {
	c.Released()
	if _, dup := c.running[key]; dup {
		return false
	}
	c.running[key] = r
	c.runningBy[r.User]++
	if c.account != nil {
		c.account.Launched(r.User)
	}
	return true
}

// ended accounts the end of a running task's reservation r.
func (c *Core) ended(r queue.Reservation) {
	if c.runningBy[r.User]--; c.runningBy[r.User] <= 0 {
		delete(c.runningBy, r.User)
	}
	if c.account != nil {
		c.account.Finished(r.User)
	}
}

// Usage returns each user's queued reservations and running tasks here.
// Tasks started by Started, whose user is not known, count under "".
func (c *Core) Usage() map[string]Usage {
	out := make(map[string]Usage, len(c.runningBy)+len(c.queuedReq))
	for u, n := range c.runningBy {
		out[u] = Usage{Running: n}
	}
	for _, rc := range c.queuedReq {
		x := out[rc.user]
		x.Queued += rc.n
		out[rc.user] = x
	}
	return out
}

// Started is Start for callers that know only the task's app.
func (c *Core) Started(key TaskKey, app string) bool {
	return c.Start(key, queue.Reservation{RequestID: key.RequestID, App: app})
}

// FailApp frees the slots of app's running tasks, because its executor is
// gone, and returns them so the caller can report them.
func (c *Core) FailApp(app string) []RunningTask {
	var out []RunningTask
	for k, r := range c.running {
		if r.App == app {
			out = append(out, RunningTask{Key: k, Reservation: r})
			delete(c.running, k)
			c.ended(r)
		}
	}
	return out
}

// Finished frees the slot of a running task. It returns false for a task
// that is not running here, so that a stray or repeated report cannot free a
// slot twice.
func (c *Core) Finished(key TaskKey) bool {
	r, ok := c.running[key]
	if !ok {
		return false
	}
	delete(c.running, key)
	c.ended(r)
	return true
}

// Slots returns the configured number of slots.
func (c *Core) Slots() int { return c.slots }

// Free returns the number of slots neither fetching nor running.
func (c *Core) Free() int { return c.slots - c.fetching - len(c.running) }

// Queued returns the number of queued reservations.
func (c *Core) Queued() int { return c.queue.Len() }

// Running returns the number of running tasks.
func (c *Core) Running() int { return len(c.running) }

// Fetching returns the number of slots held while fetching a task.
func (c *Core) Fetching() int { return c.fetching }
