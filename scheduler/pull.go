package scheduler

import (
	"maps"
	"slices"
	"time"

	"github.com/sparrowfleet/sparrow/core/placement"
	"github.com/sparrowfleet/sparrow/core/shortjobs"
	"github.com/sparrowfleet/sparrow/thrift/gen-go/sparrowrpc"
)

// DefaultPullTick is how often the daemon runs PullSweep: how late a
// short job joins the backlog at most after Config.PullAfter, and the
// least time between two backlog adverts in the gossip metadata.
const DefaultPullTick = 100 * time.Millisecond

// AppHostView is a NodeView that also says whether a node monitor hosts
// an app without listing the app's candidates. A pull is answered with a
// task of an app the asking node monitor hosts; with a NodeView without
// it, the app's candidates are searched.
type AppHostView interface {
	NodeView
	// HostsApp reports whether the live node monitor at addr (its
	// InternalService address) advertises an executor for app.
	HostsApp(addr, app string) bool
}

// PullAdvert is a scheduler's short-backlog advert, which the daemon
// gossips (membership.Meta.Backlog, BacklogApps) so that node monitors
// hosting a backlogged app pull from it.
type PullAdvert struct {
	// Work is the least remaining work among the backlogged jobs
	// (shortjobs.AdvertWork); 0: the backlog is empty.
	Work float64
	// Apps are the apps with a backlogged job, sorted; none when Work is
	// 0. It is shared with the scheduler: callers must not change it.
	Apps []string
}

// pullBook is the scheduler's side of pulls (shortjobs.Backlog): its
// short jobs that still have unlaunched tasks Config.PullAfter after
// submission, one backlog per app, and the advert (the least remaining
// work among them, and their apps) that the daemon gossips.
//
// A short job is queued when it is submitted (submitted) and joins the
// backlog when PullSweep finds it due; it leaves when its last task is
// handed out (set), and a job that ended otherwise (given up, refused) is
// dropped lazily: when it reaches the front of its app's backlog, or when
// PullSweep tidies the book. So a sweep costs O(jobs that became due or
// left), amortised, never O(live requests).
//
// It has no lock of its own: it is not safe for concurrent use, and its
// owner serialises every call. A nil *pullBook is pulls off.
type pullBook struct {
	after time.Duration
	apps  map[string]*shortjobs.Backlog // each app's backlogged jobs
	in    map[string]*request           // the backlogged requests by id
	// due holds, from index head on, the short requests submitted and
	// not yet looked at by PullSweep, in submission order. Their
	// submission times never decrease: SubmitJob stamps a request with
	// the scheduler's clock, which never goes back, and queues it here
	// under the same hold of the scheduler's lock. (Were a clock to go
	// back, a request would wait behind the one queued before it.)
	due  []*request
	head int
	// tidyAt is the size of in at which PullSweep next drops every
	// ended request from it: twice its size after the last tidy, at
	// least minPullTidy, so that tidying costs O(1) per job backlogged,
	// amortised, and in holds no more than that.
	tidyAt int
	advert PullAdvert // the advert last taken by PullSweep
	// appsChanged is set when an app's backlog is created or emptied
	// since PullSweep last listed the apps, so that a sweep lists and
	// sorts them only when they may have changed.
	appsChanged bool
	// answered counts pulls answered; pulled those that got a task.
	answered, pulled uint64
}

// minPullTidy is the least size of pullBook.in that triggers a tidy.
const minPullTidy = 1024

func newPullBook(after time.Duration, short *shortPolicy) *pullBook {
	if after <= 0 || short == nil {
		return nil
	}
	return &pullBook{
		after: after, apps: make(map[string]*shortjobs.Backlog), in: make(map[string]*request),
		tidyAt: minPullTidy,
	}
}

// pullable reports whether r may join the backlog once due: a short job
// with unlaunched tasks. Constraints and placement preferences do not
// keep a job out: a pull is answered only with a task the asking node
// may run (pullFits).
func pullable(r *request) bool {
	return r.short.class == shortjobs.Short && r.Unlaunched() > 0
}

// pullWork is r's estimated remaining work for the backlog: its
// unlaunched tasks times their estimated duration, or their count when
// the duration is unknown.
func pullWork(r *request) float64 {
	if r.short.est > 0 {
		return float64(r.Unlaunched()) * r.short.est
	}
	return float64(r.Unlaunched())
}

// submitted queues r, just submitted, to join the backlog once due, if
// it is a short job.
func (b *pullBook) submitted(r *request) {
	if pullable(r) {
		b.due = append(b.due, r)
	}
}

// popDue returns the next queued request submitted at least after before
// now, and takes it off the queue.
func (b *pullBook) popDue(now time.Time) (*request, bool) {
	if b.head == len(b.due) || now.Before(b.due[b.head].submitted.Add(b.after)) {
		return nil, false
	}
	r := b.due[b.head]
	b.due[b.head] = nil
	b.head++
	if 2*b.head >= len(b.due) {
		// Moving the rest down costs no more than the pops since the
		// last move.
		n := copy(b.due, b.due[b.head:])
		clear(b.due[n:])
		b.due, b.head = b.due[:n], 0
	}
	return r, true
}

// set records r's remaining work in its app's backlog, or drops r when
// it has none left.
func (b *pullBook) set(r *request) {
	if r.Unlaunched() == 0 {
		b.remove(r)
		return
	}
	bl := b.apps[r.app]
	if bl == nil {
		bl = shortjobs.NewBacklog()
		b.apps[r.app] = bl
		b.appsChanged = true
	}
	bl.Set(r.ID, pullWork(r))
	b.in[r.ID] = r
}

// remove drops r from the backlog.
func (b *pullBook) remove(r *request) {
	if b.in[r.ID] != r {
		return
	}
	delete(b.in, r.ID)
	if bl := b.apps[r.app]; bl != nil {
		bl.Remove(r.ID)
		if bl.Len() == 0 {
			delete(b.apps, r.app)
			b.appsChanged = true
		}
	}
}

// drop forgets the entry id of app's backlog bl, found to be no backlogged
// job of app any more.
func (b *pullBook) drop(app string, bl *shortjobs.Backlog, id string) {
	if r := b.in[id]; r != nil && r.app == app {
		b.remove(r)
		return
	}
	bl.Remove(id)
	if bl.Len() == 0 {
		delete(b.apps, app)
		b.appsChanged = true
	}
}

// pullLaunchedLocked follows a task of r handed out (a getTask answer, a
// sticky fetch, a taken offer, a pull): its remaining work changes.
func (s *Scheduler) pullLaunchedLocked(r *request) {
	if s.pull != nil && s.pull.in[r.ID] == r {
		s.pull.set(r)
	}
}

// pullSubmittedLocked queues r, just submitted and live, to join the
// backlog once due.
func (s *Scheduler) pullSubmittedLocked(r *request) {
	if s.pull != nil {
		s.pull.submitted(r)
	}
}

// pullEntryLocked returns the backlogged request of app's backlog entry
// id, or false if the entry is stale: its job ended, launched every task,
// or its id now names another app's job.
func (s *Scheduler) pullEntryLocked(app, id string) (*request, bool) {
	r := s.pull.in[id]
	if r == nil || r.app != app || !s.book.live(r) || r.Unlaunched() == 0 {
		return nil, false
	}
	return r, true
}

// PullSweep adds to the backlog the short jobs submitted at least
// Config.PullAfter before now that still have unlaunched tasks, drops
// ended ones it comes across, and returns the backlog advert and whether
// it changed since the last call: its work, or its set of apps. The
// daemon calls it every DefaultPullTick and gossips a changed advert;
// without pulls it returns no advert, false. It costs O(jobs that became
// due or are dropped, plus apps with a backlog), amortised, and sorting
// the apps when an app's backlog appeared or emptied.
func (s *Scheduler) PullSweep(now time.Time) (advert PullAdvert, changed bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.pull
	if b == nil {
		return PullAdvert{}, false
	}
	for r, ok := b.popDue(now); ok; r, ok = b.popDue(now) {
		if s.book.live(r) && pullable(r) {
			b.set(r)
		}
	}
	if len(b.in) >= b.tidyAt {
		for _, r := range b.in {
			if _, ok := s.pullEntryLocked(r.app, r.ID); !ok {
				b.remove(r)
			}
		}
		b.tidyAt = max(2*len(b.in), minPullTidy)
	}
	least, ok := 0.0, false
	for app, bl := range b.apps {
		for {
			id, w, has := bl.Least()
			if !has {
				break
			}
			if _, live := s.pullEntryLocked(app, id); !live {
				b.drop(app, bl, id)
				continue
			}
			if !ok || w < least {
				least, ok = w, true
			}
			break
		}
	}
	// Every app left in b.apps has a live job: the sweep above dropped
	// the stale entries in front of each, and emptied backlogs with them.
	w := shortjobs.AdvertWork(least, ok)
	changed = w != b.advert.Work
	if b.appsChanged {
		b.appsChanged = false
		if apps := slices.Sorted(maps.Keys(b.apps)); !slices.Equal(apps, b.advert.Apps) {
			b.advert.Apps, changed = apps, true
		}
	}
	b.advert.Work = w
	return b.advert, changed
}

// hostsApp reports whether node monitor addr hosts app, by the view.
func (s *Scheduler) hostsApp(addr, app string) bool {
	if v, ok := s.view.(AppHostView); ok {
		return v.HostsApp(addr, app)
	}
	for _, n := range s.view.Candidates(app) {
		if n.Addr == addr {
			return true
		}
	}
	return false
}

// pullFits reports whether a pull from node n may be answered with a
// task of r, under exactly the rules a reservation on n would be: n
// satisfies r's job constraints (reservations go only to nodes that do),
// and r has a task that Assign gives a reservation on n, an unlaunched
// task whose placement preferences (as widened so far, locality.go) allow
// n, or a task without preferences neither handed out nor offered. It
// costs O(r's tasks) only once every task of r without preferences is
// handed out or offered.
func pullFits(r *request, n placement.Node) bool {
	for _, c := range r.cons {
		if !c.Matches(n) {
			return false
		}
	}
	if r.Spare() {
		return true
	}
	if !r.HasConstrained() {
		return false
	}
	for i, t := range r.Tasks() {
		if t.Constrained() && !r.IsLaunched(i) && t.Allows(n) {
			return true
		}
	}
	return false
}

// pullFirstLocked returns the job of app's backlog bl with the least
// remaining work that has a task for node n (pullFits), passing over the
// jobs in skip and dropping stale entries it meets. A job with no task
// for n stays in the backlog for other nodes; n pays for the jobs it
// passes over.
func (s *Scheduler) pullFirstLocked(app string, bl *shortjobs.Backlog, n placement.Node, skip map[*request]bool) (*request, float64, bool) {
	var stale []string
	var found *request
	var work float64
	for id, w := range bl.Ascend() {
		r, ok := s.pullEntryLocked(app, id)
		if !ok {
			stale = append(stale, id)
			continue
		}
		if !skip[r] && pullFits(r, n) {
			found, work = r, w
			break
		}
	}
	for _, id := range stale {
		s.pull.drop(app, bl, id)
	}
	return found, work, found != nil
}

// pullLocked picks, for a pull from node monitor addr, the backlogged job
// with the least remaining work, among the apps addr hosts, that has a
// task addr may run (pullFits); files a reservation for addr on it and
// assigns it a task, as a sticky fetch does, so that a task is handed out
// at most once. The reservation is one of its own, answered at once: a
// reservation addr already holds for the job stays, and the job's
// coverage of its constrained tasks is as it was.
func (s *Scheduler) pullLocked(addr string) (*request, int, bool) {
	b := s.pull
	node, known := s.view.Node(addr)
	if !known {
		return nil, 0, false
	}
	var skip map[*request]bool
	for {
		var best *request
		var bestWork float64
		for app, bl := range b.apps {
			if !s.hostsApp(addr, app) {
				continue
			}
			r, w, ok := s.pullFirstLocked(app, bl, node, skip)
			if ok && (best == nil || w < bestWork || (w == bestWork && r.app < best.app)) {
				best, bestWork = r, w
			}
		}
		if best == nil {
			return nil, 0, false
		}
		best.AddProbes([]placement.Probe{{Node: node, Count: 1}})
		if idx, ok := best.Assign(addr); ok {
			return best, idx, true
		}
		// Not expected, since pullFits found a task for addr; the
		// reservation is used up, and the job stays backlogged.
		if skip == nil {
			skip = make(map[*request]bool)
		}
		skip[best] = true
	}
}

// answerPull answers node monitor addr's pull (a getTask, or fetchTask
// fetch, whose request id is shortjobs.PullRequestID): a task of its
// backlogged job with the least remaining work among those with a task
// addr may run (pullLocked), named with its request id, app and user, or
// nothing.
func (s *Scheduler) answerPull(addr string, fetch int64) []*sparrowrpc.TTaskLaunchSpec {
	s.mu.Lock()
	if s.pull == nil {
		s.stats.EmptyGetTasks++
		s.running.fetchAnswered(addr, fetch, runningTask{}, nil)
		s.mu.Unlock()
		return []*sparrowrpc.TTaskLaunchSpec{}
	}
	s.pull.answered++
	r, idx, got := s.pullLocked(addr)
	if !got {
		s.stats.EmptyGetTasks++
		s.running.fetchAnswered(addr, fetch, runningTask{}, nil)
		s.mu.Unlock()
		return []*sparrowrpc.TTaskLaunchSpec{}
	}
	s.pull.pulled++
	s.launchedLocked(r, idx, addr, fetch)
	spec := &sparrowrpc.TTaskLaunchSpec{
		TaskId: r.specs[idx].TaskId, Message: r.specs[idx].Message,
		RequestId: &r.ID, AppId: &r.app, User: r.user,
	}
	task := runningTask{app: r.app, request: r.ID, task: spec.TaskId}
	s.short.answer(spec, r.short, r.Unlaunched(), task, s.now())
	s.running.fetchAnswered(addr, fetch, task, spec)
	cancel := s.forgetLaunchedLocked(r)
	s.heldGetTaskLocked(r)
	s.mu.Unlock()
	for _, p := range cancel {
		go s.cancel(r.ID, p.Node.Addr)
	}
	return []*sparrowrpc.TTaskLaunchSpec{spec}
}
