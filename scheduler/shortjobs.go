package scheduler

import (
	"time"

	"github.com/apache/thrift/lib/go/thrift"

	"github.com/sparrowfleet/sparrow/core/placement"
	"github.com/sparrowfleet/sparrow/core/shortjobs"
	"github.com/sparrowfleet/sparrow/thrift/gen-go/sparrowrpc"
)

// LongWorkView is a NodeView that also knows each node monitor's
// long-work advert (membership.Meta.LongWork). The long-task-aware policy
// steers short jobs away from nodes it reports busy; with a NodeView
// without it, no node is taken as busy.
type LongWorkView interface {
	NodeView
	// LongWork reports whether the node monitor at addr (its
	// InternalService address) advertises long work.
	LongWork(addr string) bool
}

// LongLevelView is a NodeView that also knows the level of each node
// monitor's long work, running and queued, from its advert
// (membership.Meta.LongAdvert, shortjobs.AdvertLevel). With
// shortjobs.Config.LongSteer the long-task-aware policy places long jobs
// on the general nodes of the lowest levels; with a NodeView without it,
// every node is taken as level 0 and long jobs are placed as before.
type LongLevelView interface {
	NodeView
	// LongLevel returns the long-work level the node monitor at addr (its
	// InternalService address) advertises: the second byte of its
	// advert, or, from a node monitor that sends one byte, the level of
	// its count of slots fetching or running long tasks.
	LongLevel(addr string) uint8
}

var _ LongLevelView = (*MembershipView)(nil)

// LongLevel implements LongLevelView from the node monitor's gossip
// metadata; 0 for a node monitor the view does not know.
func (v *MembershipView) LongLevel(addr string) uint8 {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.refresh()
	m, ok := v.hosts[addr]
	if !ok {
		return 0
	}
	return shortjobs.AdvertLevel(m.LongAdvert())
}

// shortJob is what the long-task-aware policy decided about a request at
// submission: its class and estimated task duration (0: unknown), and
// the remaining work sent with its reservations; guessed, that it is a
// short job that stated no estimate of its own, which the overrun rule
// may take as long later (OverrunSweep changes class, est and work then);
// and offerLeft, the tasks neither launched nor offered once its offers
// were planned, sent with each offered task (set before the offers are
// sent, read-only after).
type shortJob struct {
	class     shortjobs.Class
	est       float64
	work      float64
	guessed   bool
	offerLeft int
}

// shortPolicy is the scheduler's side of the long-task-aware policy
// (core/shortjobs): it classes jobs by their own estimate or the app's
// history of task durations, picks their candidate nodes (shortjobs.Steer,
// shortjobs.SteerLong),
// and adds the policy's fields to reservations and getTask answers. The
// history learns from the time between a task's hand-out and its finished
// report.
//
// It has no lock of its own: it is not safe for concurrent use, and its
// owner serialises every call. A nil *shortPolicy is the policy off:
// every method is then a no-op that leaves the scheduler's behaviour
// unchanged.
type shortPolicy struct {
	cfg     shortjobs.Config
	hist    *shortjobs.History
	started map[runningTask]time.Time // tasks handed out, for the history
	// watch holds the guessed short jobs' tasks handed out, for the
	// overrun rule (nil when it is off); dueScratch is OverrunSweep's.
	watch      *overrunWatch
	dueScratch []handOut
	// parts is each app's short-only share, over the node monitors
	// hosting it, as last computed.
	parts map[string]appPartition
	// scratch for steer
	shortOnly, busy []bool
	level           []uint8
	cand            []int32
	hashes          []uint64
	// scratch for refreshWorkLocked
	holders, targets []string
}

// appPartition is an app's short-only share over the node list the view
// gave for it; the view returns the same list until membership changes.
type appPartition struct {
	first *placement.Node
	n     int
	part  shortjobs.Partition
}

// maxPartitions bounds the apps whose short-only share is kept.
const maxPartitions = 1024

func newShortPolicy(cfg *shortjobs.Config) (*shortPolicy, error) {
	if cfg == nil {
		return nil, nil
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &shortPolicy{
		cfg: *cfg, hist: shortjobs.NewHistory(0), started: make(map[runningTask]time.Time),
		parts: make(map[string]appPartition), watch: newOverrunWatch(*cfg),
	}, nil
}

// classify returns the policy's view of a job of app with tasks tasks
// whose request states own seconds per task (0: none).
func (p *shortPolicy) classify(own float64, app string, tasks int) shortJob {
	if p == nil {
		return shortJob{}
	}
	c, est, known := p.cfg.Judge(own, p.hist, app)
	j := shortJob{class: c, guessed: c == shortjobs.Short && !shortjobs.Stated(own)}
	if known {
		j.est, j.work = est, est*float64(tasks)
	}
	return j
}

// steer returns the candidates among nodes for a job of app of class c
// with tasks tasks probed at ratio d: long jobs avoid the short-only share
// and, with Config.LongSteer, go to the general nodes of the lowest
// advertised long-work levels, enough of them for the job's reservations
// (shortjobs.SteerLong); short jobs go to nodes advertising no long work
// when there is one per task (shortjobs.Steer). It returns nodes itself
// when nothing is steered. The short-only share is picked among all the
// node monitors hosting app (view.Candidates), whatever subset of them
// nodes is.
func (p *shortPolicy) steer(app string, nodes []placement.Node, c shortjobs.Class, tasks int, ratio float64, view NodeView) []placement.Node {
	if p == nil || len(nodes) == 0 {
		return nodes
	}
	part := p.partition(app, view.Candidates(app))
	p.shortOnly = p.shortOnly[:0]
	for _, n := range nodes {
		p.shortOnly = append(p.shortOnly, part.ShortOnly(shortjobs.NodeHash(n.Name)))
	}
	// The candidates are p.cand; SteerLong's bool says fewer than the
	// general nodes, not fewer than nodes, so their count decides.
	if c == shortjobs.Long && p.cfg.LongSteer {
		ll, _ := view.(LongLevelView)
		p.level = p.level[:0]
		for _, n := range nodes {
			var l uint8
			if ll != nil {
				l = ll.LongLevel(n.Addr)
			}
			p.level = append(p.level, l)
		}
		want := max(placement.Reservations(ratio, tasks), 1)
		p.cand, _ = shortjobs.SteerLong(p.cand[:0], want, p.shortOnly, p.level)
	} else {
		lw, _ := view.(LongWorkView)
		p.busy = p.busy[:0]
		for _, n := range nodes {
			p.busy = append(p.busy, lw != nil && lw.LongWork(n.Addr))
		}
		p.cand, _ = shortjobs.Steer(p.cand[:0], c, tasks, p.shortOnly, p.busy)
	}
	if len(p.cand) == len(nodes) {
		return nodes
	}
	out := make([]placement.Node, len(p.cand))
	for i, k := range p.cand {
		out[i] = nodes[k]
	}
	return out
}

// partition returns app's short-only share over all, the node monitors
// hosting it, computing it again only when the list changed.
func (p *shortPolicy) partition(app string, all []placement.Node) shortjobs.Partition {
	if p.cfg.ShortShare <= 0 || len(all) == 0 {
		return shortjobs.Partition{}
	}
	if ap, ok := p.parts[app]; ok && ap.first == &all[0] && ap.n == len(all) {
		return ap.part
	}
	p.hashes = p.hashes[:0]
	for _, n := range all {
		p.hashes = append(p.hashes, shortjobs.NodeHash(n.Name))
	}
	part := shortjobs.NewPartition(p.hashes, p.cfg.ShortShare)
	if len(p.parts) >= maxPartitions {
		clear(p.parts)
	}
	p.parts[app] = appPartition{first: &all[0], n: len(all), part: part}
	return part
}

// reservation adds j to an enqueue request.
func (p *shortPolicy) reservation(msg *sparrowrpc.TEnqueueTaskReservationsRequest, j shortJob) {
	if p == nil {
		return
	}
	msg.JobClass = thrift.Int32Ptr(int32(j.class))
	if j.est > 0 {
		msg.TaskSeconds = thrift.Float64Ptr(j.est)
		msg.RemainingWork = thrift.Float64Ptr(j.work)
	}
}

// answer adds to a getTask answer for a request with j the tasks it has
// left unlaunched, so that the node monitor reorders its reservations and
// asks for another when this task ends; and records the hand-out of t at
// now for the history.
func (p *shortPolicy) answer(spec *sparrowrpc.TTaskLaunchSpec, j shortJob, unlaunched int, t runningTask, now time.Time) {
	if p == nil {
		return
	}
	p.launchFields(spec, j, unlaunched)
	p.handedOut(t, j, now)
}

// offer adds to an offered task of a request with j the tasks the job
// had neither launched nor offered when its offers were planned: the
// node monitor that launches it asks the job for another task when it
// ends, as it does for a task a getTask answer brought. It only reads j,
// so it may be called without the owner's lock.
func (p *shortPolicy) offer(spec *sparrowrpc.TTaskLaunchSpec, j shortJob) {
	if p == nil {
		return
	}
	p.launchFields(spec, j, j.offerLeft)
}

// launchFields sets the policy's fields of a task handed to a node
// monitor: the job's unlaunched tasks and estimated task duration.
func (p *shortPolicy) launchFields(spec *sparrowrpc.TTaskLaunchSpec, j shortJob, unlaunched int) {
	spec.RemainingTasks = thrift.Int32Ptr(int32(max(unlaunched, 0)))
	if j.est > 0 {
		spec.TaskSeconds = thrift.Float64Ptr(j.est)
	}
}

// handedOut records that t, a task of a job with j, was handed out (a
// getTask answer, or an offer taken) at now, for the history, and for the
// overrun rule when j is a guessed short job.
func (p *shortPolicy) handedOut(t runningTask, j shortJob, now time.Time) {
	if p == nil {
		return
	}
	if len(p.started) < maxTracked {
		p.started[t] = now
		if j.guessed && j.class == shortjobs.Short {
			p.watch.handedOut(t, now)
		}
	}
}

// runningSince reports whether t, handed out at at, is still running as
// far as the policy tracks it: not reported finished, and not handed out
// again since (a request id used again for another job).
func (p *shortPolicy) runningSince(t runningTask, at time.Time) bool {
	v, ok := p.started[t]
	return ok && v.Equal(at)
}

// finished learns t's duration, reported finished at now.
func (p *shortPolicy) finished(t runningTask, now time.Time) {
	if p == nil {
		return
	}
	if at, ok := p.started[t]; ok {
		delete(p.started, t)
		p.hist.Observe(t.app, now.Sub(at).Seconds())
	}
}

// stickyLocked answers a getTask from addr for r that found no
// reservation of r recorded there: under the policy, a node monitor whose
// slot ended a task of r asks r for another task first (a sticky fetch),
// on a reservation this scheduler never placed. It is recorded as placed
// there, and a task assigned to it if r has one for addr. Without the
// policy, or for a node the view does not know, it assigns nothing.
func (s *Scheduler) stickyLocked(r *request, addr string) (int, bool) {
	if s.short == nil || r.Holds(addr) || r.Unlaunched() == 0 {
		return 0, false
	}
	n, ok := s.view.Node(addr)
	if !ok {
		return 0, false
	}
	r.AddProbes([]placement.Probe{{Node: n, Count: 1}})
	s.stats.StickyFetches++
	return r.Assign(addr)
}
