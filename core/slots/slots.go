package slots

import (
	"fmt"
	"math"
	"slices"

	"github.com/sparrowfleet/sparrow/core/queue"
	"github.com/sparrowfleet/sparrow/core/samestr"
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
	// The fields every Enqueue, Next, Start and Finished reads come
	// first, in as few cache lines as they fit, and the rest is behind
	// rare: a simulator touches thousands of Cores in turn, and waits on
	// every line it touches.
	slots     int32
	fetching  int32
	maxQueued int32
	// countsUsers says the discipline implements queue.UserCounter (kept
	// in rare.users), and rare.queuedReq is then not kept: Enqueue and
	// Next skip two map operations per reservation.
	countsUsers bool
	// accounts says the discipline keeps launch and finish accounts
	// (rare.account).
	accounts bool
	// hasApps says rare.appList is not empty, and firstApp is its first
	// app, which Enqueue checks first without following rare.
	hasApps  bool
	queue    queue.Discipline
	firstApp string
	// running lists the running tasks with the reservation each ran for.
	// A node has a handful of slots, so a linear scan of a slice finds a
	// task faster than hashing its two-string key; runIdx (key -> position
	// in running) is built only once more than smallRunning tasks run.
	running []runningTask
	runIdx  map[TaskKey]int
	// runInline is running's first array, inside the Core, so that a
	// one-slot node's running task shares the Core's memory instead of
	// costing a pointer chase to a separate array.
	runInline [1]runningTask
	rare      *coreRare
}

// coreRare is the part of a Core that the per-reservation path of a FIFO
// node monitor with one app does not read.
type coreRare struct {
	users queue.UserCounter
	// account is the queue discipline's launch and finish hook, if it
	// keeps one (Choosy does).
	account queue.Accounting
	// appList holds the keys of apps, which Enqueue scans instead of
	// hashing into apps while there are few.
	appList []string
	// apps indexes appList once it has held more than smallApps apps.
	apps map[string]bool
	// Per-request counts, for the coordinator's view of who uses this
	// node: queued reservations by request (every reservation of a request
	// has the request's user and app), kept only when the discipline
	// cannot count its queued users itself (see Core.countsUsers). Running
	// tasks by user are counted from running when Usage is asked.
	queuedReq map[string]*requestCount
	spareRC   []*requestCount // emptied counts, for reuse
	// res holds the reservations of running tasks that carry more than
	// their request and app (runningTask.res), freeRes its unused slots.
	res     []queue.Reservation
	freeRes []int32
}

// runningTask is a running task as a Core keeps it: a reservation that is
// only its task's request and an app (what Started records) is kept as the
// app, any other in rare.res, so that the common entry is 56 bytes, not a
// RunningTask's 128.
type runningTask struct {
	key TaskKey
	app string
	res int32 // index in rare.res, or -1: the reservation is {key.RequestID, app}
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
	c := &Core{}
	c.init(slots, q)
	return c, nil
}

// Init makes c, in place, the Core New(slots, q) returns, so that a caller
// holding many Cores (a simulator of 100,000 node monitors) can lay them out
// in one slice next to their queues. A Core must not be copied after Init.
func (c *Core) Init(slots int, q queue.Discipline) error {
	if slots <= 0 {
		return fmt.Errorf("slots must be positive, got %d", slots)
	}
	if q == nil {
		return fmt.Errorf("nil queue discipline")
	}
	c.init(slots, q)
	return nil
}

func (c *Core) init(slots int, q queue.Discipline) {
	account, _ := q.(queue.Accounting)
	users, _ := q.(queue.UserCounter)
	*c = Core{
		slots:       int32(min(slots, math.MaxInt32)),
		maxQueued:   DefaultMaxQueued,
		queue:       q,
		accounts:    account != nil,
		countsUsers: users != nil,
		rare:        &coreRare{users: users, account: account},
	}
	c.running = c.runInline[:0]
}

// SetMaxQueued changes the queue bound; n <= 0 restores the default.
func (c *Core) SetMaxQueued(n int) {
	if n <= 0 {
		n = DefaultMaxQueued
	}
	c.maxQueued = int32(min(n, math.MaxInt32))
}

// Queue returns the discipline, so that weights can be changed at run time.
func (c *Core) Queue() queue.Discipline { return c.queue }

// AddApp records that an executor for app runs on this node.
func (c *Core) AddApp(app string) {
	if c.hasApp(app) {
		return
	}
	rr := c.rare
	rr.appList = append(rr.appList, app)
	c.firstApp, c.hasApps = rr.appList[0], true
	switch {
	case rr.apps != nil:
		rr.apps[app] = true
	case len(rr.appList) > smallApps:
		rr.apps = make(map[string]bool, len(rr.appList))
		for _, a := range rr.appList {
			rr.apps[a] = true
		}
	}
}

// smallApps is how many apps a Core finds by scanning appList before it
// indexes them in the apps map.
const smallApps = 8

// hasApp is HasApp for the per-reservation path.
func (c *Core) hasApp(app string) bool {
	if c.hasApps && samestr.Equal(c.firstApp, app) {
		return true
	}
	rr := c.rare
	if len(rr.appList) > smallApps {
		return rr.apps[app]
	}
	return slices.Contains(rr.appList, app)
}

// RemoveApp forgets app's executor and drops its queued reservations,
// returning how many were dropped. Running tasks are left to finish or fail.
func (c *Core) RemoveApp(app string) int {
	delete(c.rare.apps, app)
	rr := c.rare
	rr.appList = slices.DeleteFunc(rr.appList, func(a string) bool { return a == app })
	c.firstApp, c.hasApps = "", len(rr.appList) > 0
	if c.hasApps {
		c.firstApp = rr.appList[0]
	}
	for id, rc := range c.rare.queuedReq {
		if rc.app == app {
			delete(c.rare.queuedReq, id)
		}
	}
	return c.queue.RemoveApp(app)
}

// HasApp reports whether an executor for app is registered.
func (c *Core) HasApp(app string) bool { return c.hasApp(app) }

// Apps returns the registered apps, in no particular order.
func (c *Core) Apps() []string { return slices.Clone(c.rare.appList) }

// Enqueue queues n reservations like r. It refuses (returns an error) a
// reservation for an app with no executor here, so that it is not queued
// forever, and any that would pass the queue bound.
func (c *Core) Enqueue(r queue.Reservation, n int) error { return c.EnqueueFrom(&r, n) }

// EnqueueFrom is Enqueue of *r, which it reads field by field (see
// queue.FIFO.PushFrom): for a caller that sets a field of one
// reservation after another and queues each.
func (c *Core) EnqueueFrom(r *queue.Reservation, n int) error {
	switch {
	case n <= 0:
		return fmt.Errorf("request %q: number of reservations must be positive, got %d", r.RequestID, n)
	case !c.hasApp(r.App):
		return fmt.Errorf("request %q: no executor registered for app %q", r.RequestID, r.App)
	case c.queue.Len()+n > int(c.maxQueued):
		return fmt.Errorf("request %q: queue full (%d queued, limit %d)", r.RequestID, c.queue.Len(), c.maxQueued)
	}
	if f, isFIFO := c.queue.(*queue.FIFO); isFIFO {
		for i := 0; i < n; i++ {
			f.PushFrom(r)
		}
	} else {
		for i := 0; i < n; i++ {
			c.queue.Push(*r)
		}
	}
	if c.countsUsers {
		return nil
	}
	rr := c.rare
	if rr.queuedReq == nil {
		rr.queuedReq = make(map[string]*requestCount)
	}
	rc := rr.queuedReq[r.RequestID]
	if rc == nil {
		if k := len(rr.spareRC); k > 0 {
			rc = rr.spareRC[k-1]
			rr.spareRC = rr.spareRC[:k-1]
			*rc = requestCount{user: r.User, app: r.App}
		} else {
			rc = &requestCount{user: r.User, app: r.App}
		}
		rr.queuedReq[r.RequestID] = rc
	}
	rc.n += n
	return nil
}

// Cancel drops the queued reservations of a request and returns how many.
func (c *Core) Cancel(requestID string) int {
	delete(c.rare.queuedReq, requestID)
	return c.queue.RemoveRequest(requestID)
}

// Next returns the next reservation to fetch a task for, and holds a slot
// for it, if a slot is free and a reservation is queued. The caller must
// answer each one with exactly one Started or Released.
func (c *Core) Next() (r queue.Reservation, ok bool) {
	ok = c.NextInto(&r)
	return r, ok
}

// NextInto is Next into *r, which it leaves alone when it returns false:
// a caller on a hot path keeps one variable for every reservation it
// takes, since a reservation returned by value is stored 8 bytes at a
// time and copied out 16 at a time, a read the CPU cannot serve from its
// pending stores, which stalls (queue.FIFO.PopInto, which the default
// discipline pops with, avoids the same copy).
func (c *Core) NextInto(r *queue.Reservation) bool {
	if c.Free() == 0 {
		return false
	}
	var ok bool
	if f, isFIFO := c.queue.(*queue.FIFO); isFIFO {
		ok = f.PopInto(r)
	} else {
		var popped queue.Reservation
		if popped, ok = c.queue.Pop(); ok {
			*r = popped
		}
	}
	if !ok {
		return false
	}
	c.fetching++
	if c.countsUsers {
		return true
	}
	rr := c.rare
	if rc := rr.queuedReq[r.RequestID]; rc != nil {
		if rc.n--; rc.n <= 0 {
			delete(rr.queuedReq, r.RequestID)
			if len(rr.spareRC) < spareCounts {
				rr.spareRC = append(rr.spareRC, rc)
			}
		}
	}
	return true
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
func (c *Core) Start(key TaskKey, r queue.Reservation) bool { return c.start(key, &r) }

// start is Start of *r, which it reads field by field, and it files the
// running task in place: values built and then copied whole are read back
// in wider loads than they were stored with, which stalls.
func (c *Core) start(key TaskKey, r *queue.Reservation) bool {
	c.Released()
	if c.find(key) >= 0 {
		return false
	}
	c.running = append(c.running, runningTask{})
	c.packInto(&c.running[len(c.running)-1], key, r)
	if c.runIdx != nil {
		c.runIdx[key] = len(c.running) - 1
	} else if len(c.running) > smallRunning {
		c.runIdx = make(map[TaskKey]int, len(c.running))
		for i := range c.running {
			c.runIdx[c.running[i].key] = i
		}
	}
	if c.accounts {
		c.rare.account.Launched(r.User)
	}
	return true
}

// packInto fills t, a zero runningTask, as the running task of key,
// fetched for r.
func (c *Core) packInto(t *runningTask, key TaskKey, r *queue.Reservation) {
	t.key.RequestID = key.RequestID
	t.key.TaskID = key.TaskID
	t.app = r.App
	t.res = -1
	if samestr.Equal(r.RequestID, key.RequestID) && r.User == "" && r.Group == "" && r.Priority == 0 &&
		r.Scheduler == "" && r.Tag == 0 {
		return
	}
	rr := c.rare
	if k := len(rr.freeRes); k > 0 {
		t.res = rr.freeRes[k-1]
		rr.freeRes = rr.freeRes[:k-1]
		rr.res[t.res] = *r
	} else {
		t.res = int32(len(rr.res))
		rr.res = append(rr.res, *r)
	}
}

// reservation returns the reservation t was fetched for.
func (c *Core) reservation(t *runningTask) queue.Reservation {
	if t.res < 0 {
		return queue.Reservation{RequestID: t.key.RequestID, App: t.app}
	}
	return c.rare.res[t.res]
}

// ended accounts the end of a running task's reservation r.
func (c *Core) ended(r queue.Reservation) {
	if c.accounts {
		c.rare.account.Finished(r.User)
	}
}

// Usage returns each user's queued reservations and running tasks here.
// Tasks started by Started, whose user is not known, count under "".
func (c *Core) Usage() map[string]Usage {
	// Running counts come from the running set itself (O(running), at
	// most about the slot count), so Start and Finished keep no per-user
	// map.
	rr := c.rare
	out := make(map[string]Usage, len(rr.queuedReq)+1)
	for i := range c.running {
		u := c.reservation(&c.running[i]).User
		x := out[u]
		x.Running++
		out[u] = x
	}
	if c.countsUsers {
		queued := make(map[string]int)
		rr.users.QueuedByUser(queued)
		for u, n := range queued {
			x := out[u]
			x.Queued += n
			out[u] = x
		}
		return out
	}
	for _, rc := range rr.queuedReq {
		x := out[rc.user]
		x.Queued += rc.n
		out[rc.user] = x
	}
	return out
}

// Started is Start for callers that know only the task's app.
func (c *Core) Started(key TaskKey, app string) bool {
	var r queue.Reservation
	r.RequestID = key.RequestID
	r.App = app
	return c.start(key, &r)
}

// FailApp frees the slots of app's running tasks, because its executor is
// gone, and returns them so the caller can report them.
func (c *Core) FailApp(app string) []RunningTask {
	var out []RunningTask
	for i := 0; i < len(c.running); {
		if c.running[i].app != app {
			i++
			continue
		}
		t := RunningTask{Key: c.running[i].key, Reservation: c.reservation(&c.running[i])}
		out = append(out, t)
		c.removeAt(i) // moves the last task to i, which is checked next
		c.ended(t.Reservation)
	}
	return out
}

// smallRunning is how many running tasks a Core finds by scanning before it
// indexes them in a map.
const smallRunning = 16

// spareCounts bounds the emptied requestCounts a Core keeps for reuse.
const spareCounts = 64

// find returns the position of key in c.running, or -1.
func (c *Core) find(key TaskKey) int {
	if c.runIdx != nil {
		if i, ok := c.runIdx[key]; ok {
			return i
		}
		return -1
	}
	for i := range c.running {
		if k := &c.running[i].key; samestr.Equal(k.RequestID, key.RequestID) && samestr.Equal(k.TaskID, key.TaskID) {
			return i
		}
	}
	return -1
}

// removeAt removes the running task at position i, moving the last one
// into its place.
func (c *Core) removeAt(i int) {
	last := len(c.running) - 1
	if c.runIdx != nil {
		delete(c.runIdx, c.running[i].key)
		if i != last {
			c.runIdx[c.running[last].key] = i
		}
	}
	if k := c.running[i].res; k >= 0 {
		rr := c.rare
		rr.res[k] = queue.Reservation{}
		rr.freeRes = append(rr.freeRes, k)
	}
	if i != last {
		c.running[i] = c.running[last]
	}
	c.running[last] = runningTask{}
	c.running = c.running[:last]
}

// Finished frees the slot of a running task. It returns false for a task
// that is not running here, so that a stray or repeated report cannot free a
// slot twice.
func (c *Core) Finished(key TaskKey) bool {
	i := c.find(key)
	if i < 0 {
		return false
	}
	if c.accounts {
		c.ended(c.reservation(&c.running[i]))
	}
	c.removeAt(i)
	return true
}

// Slots returns the configured number of slots.
func (c *Core) Slots() int { return int(c.slots) }

// Free returns the number of slots neither fetching nor running.
func (c *Core) Free() int { return int(c.slots) - int(c.fetching) - len(c.running) }

// Queued returns the number of queued reservations.
func (c *Core) Queued() int { return c.queue.Len() }

// Running returns the number of running tasks.
func (c *Core) Running() int { return len(c.running) }

// Fetching returns the number of slots held while fetching a task.
func (c *Core) Fetching() int { return int(c.fetching) }
