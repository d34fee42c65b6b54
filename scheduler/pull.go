package scheduler

import (
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

// pullBook is the scheduler's side of pulls (shortjobs.Backlog): its
// short jobs that still have unlaunched tasks Config.PullAfter after
// submission, one backlog per app, and the advert of the least remaining
// work among them that the daemon gossips.
//
// It has no lock of its own: it is not safe for concurrent use, and its
// owner serialises every call. A nil *pullBook is pulls off.
type pullBook struct {
	after  time.Duration
	apps   map[string]*shortjobs.Backlog // each app's backlogged jobs
	in     map[string]*request           // the backlogged requests by id
	advert float64                       // the advert last taken by PullSweep
	// answered counts pulls answered; pulled those that got a task.
	answered, pulled uint64
}

func newPullBook(after time.Duration, short *shortPolicy) *pullBook {
	if after <= 0 || short == nil {
		return nil
	}
	return &pullBook{after: after, apps: make(map[string]*shortjobs.Backlog), in: make(map[string]*request)}
}

// pullable reports whether r may join the backlog: a short job with
// unlaunched tasks that any node monitor hosting its app may run (no
// constraint, no placement preference).
func pullable(r *request) bool {
	return r.short.class == shortjobs.Short && r.Unlaunched() > 0 && !r.HasConstrained() && r.loc == nil
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

// set records r's remaining work in its app's backlog, or drops r when
// it has none left.
func (b *pullBook) set(r *request) {
	bl := b.apps[r.app]
	if bl == nil {
		bl = shortjobs.NewBacklog()
		b.apps[r.app] = bl
	}
	if r.Unlaunched() == 0 {
		b.remove(r)
		return
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
		}
	}
}

// launchedLocked follows a task of r handed out (a getTask answer, a
// sticky fetch, a taken offer, a pull): its remaining work changes.
func (s *Scheduler) pullLaunchedLocked(r *request) {
	if s.pull != nil && s.pull.in[r.ID] == r {
		s.pull.set(r)
	}
}

// PullSweep adds to the backlog the short jobs submitted at least
// Config.PullAfter before now that still have unlaunched tasks, drops
// those that have none or ended, and returns the backlog advert
// (shortjobs.AdvertWork) and whether it changed since the last call. The
// daemon calls it every DefaultPullTick and gossips a changed advert;
// without pulls it returns 0, false.
func (s *Scheduler) PullSweep(now time.Time) (advert float64, changed bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.pull
	if b == nil {
		return 0, false
	}
	for id, r := range b.in {
		if !s.book.live(r) || r.Unlaunched() == 0 {
			b.remove(r)
			delete(b.in, id)
		}
	}
	for r := range s.book.all() {
		if b.in[r.ID] != r && pullable(r) && !now.Before(r.submitted.Add(b.after)) {
			b.set(r)
		}
	}
	least, ok := 0.0, false
	for _, bl := range b.apps {
		if _, w, has := bl.Least(); has && (!ok || w < least) {
			least, ok = w, true
		}
	}
	w := shortjobs.AdvertWork(least, ok)
	if w == b.advert {
		return w, false
	}
	b.advert = w
	return w, true
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

// pullLocked picks, for a pull from node monitor addr, the backlogged job
// with the least remaining work among the apps addr hosts, files a
// reservation for addr on it and assigns it a task, as a sticky fetch
// does, so that a task is handed out at most once. A job that cannot
// give addr a task leaves the backlog.
func (s *Scheduler) pullLocked(addr string) (*request, int, bool) {
	b := s.pull
	node, known := s.view.Node(addr)
	if !known {
		return nil, 0, false
	}
	for {
		var best *request
		var bestWork float64
		for app, bl := range b.apps {
			if !s.hostsApp(addr, app) {
				continue
			}
			for {
				id, w, ok := bl.Least()
				if !ok {
					break
				}
				r := b.in[id]
				if r == nil || !s.book.live(r) || r.Unlaunched() == 0 {
					bl.Remove(id)
					if r != nil {
						delete(b.in, id)
					}
					continue
				}
				if best == nil || w < bestWork || (w == bestWork && r.app < best.app) {
					best, bestWork = r, w
				}
				break
			}
		}
		if best == nil {
			return nil, 0, false
		}
		if !best.Holds(addr) {
			best.AddProbes([]placement.Probe{{Node: node, Count: 1}})
		}
		if idx, ok := best.Assign(addr); ok {
			return best, idx, true
		}
		b.remove(best)
	}
}

// answerPull answers node monitor addr's pull (a getTask, or fetchTask
// fetch, whose request id is shortjobs.PullRequestID): a task of its
// backlogged job with the least remaining work among the apps addr
// hosts, named with its request id, app and user, or nothing.
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
