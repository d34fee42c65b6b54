package scheduler

import (
	"context"
	"fmt"
	"iter"
	"math"
	"sync"
	"time"

	"github.com/sparrowfleet/sparrow/core/placement"
	"github.com/sparrowfleet/sparrow/internal/fairgossip"
	"github.com/sparrowfleet/sparrow/internal/membership"
)

// Admission by expected queue wait.
//
// With Config.MaxQueueWait = D > 0, submitJob estimates, before placing
// any reservation, how long the job's tasks would wait in node monitors'
// queues; when the wait exceeds D the job is held like a job whose
// reservations were refused as full (hold.go): it counts against
// Config.MaxHeldJobs, is refused past them or past Config.MaxHold with
// the same "fleet saturated ... retry after <d>" message, and is admitted
// (placed as usual) once the estimate drops to D or below. It has no
// reservation anywhere while held, so refusing it is always safe.
//
// What the scheduler knows of node n, and from where:
//
//   - Its own reservations queued at n and its own tasks running there
//     (launched, not yet reported finished): exact and current, with no
//     gossip. They are all the load there is when one scheduler runs.
//   - n's report (fairgossip.Report), which every node monitor sends to
//     every scheduler each report period (1 s), best effort over UDP,
//     coordinator or not (nodemonitor/coordinated.go): its slots, its
//     recent mean task run time, and its queued and running counts over
//     every scheduler. On arrival the scheduler subtracts its own counts
//     of that moment, and keeps the rest as "the others' load", which is
//     then as old as the report.
//
// So the load of n is: own counts now + others' counts at the last
// report. A report older than Config.LoadStale, or one with no mean task
// time yet (no task finished there), leaves n unknown.
//
// The estimate (Positions): with S slots, mean task time T, and B tasks
// ahead (running + share·queued), a new task starting j-th after those
// waits max(0, B + j + 1 − S)·T/S, so n offers floor(S·(1 + D/T) − B)
// positions that start within D. share is 1/d for the default probe
// ratio d: of a job's d·m reservations only m get a task, the rest are
// answered empty or cancelled, so a queued reservation is 1/d of a task.
//
// A job of m tasks is saturated when its candidates (live node monitors
// hosting its app that satisfy its constraints) offer fewer than m such
// positions together: even the m best places, wherever the sampler put
// the d·m reservations, would not start the job's last task within D.
// That is a lower bound on the wait the random sampler gets, so the rule
// holds a job only when no placement could meet D. Any unknown candidate
// makes the job not saturated: a missing report never holds a job.
//
// What it misses: another scheduler's load is up to a report period old
// (more if reports are lost); fair and priority queues do not serve in
// arrival order, so the wait of a given user may be longer or shorter;
// the running tasks' elapsed time is not known (each counts as a whole
// task); constrained jobs are judged over every node that satisfies any
// of their constraints; and a node whose monitor sends no reports (an
// older version) disables admission for jobs that may run on it.
//
// Held jobs are admitted in arrival order, and a new job waits behind
// them: only the oldest looks at the estimate again, when this scheduler
// sees capacity free (getTask wakes the longest-waiting held call), when a
// report arrives, and on a backoff timer (holdRetryMin to holdRetryMax);
// each admission or refusal lets the next look at once. Without the
// order, a younger job's timer could take a position freed for an older
// one, and the longest holds grew to several times the median.

// DefaultLoadStale is how long a node monitor's report counts: three of
// its one-second report periods.
const DefaultLoadStale = 3 * time.Second

// ownRefresh bounds how often the per-node count of this scheduler's
// queued reservations is recomputed from every request; a job admitted in
// between adds its reservations to the count directly, so the count may
// only trail launches and cancellations, by this much, which errs
// towards holding.
const ownRefresh = 10 * time.Millisecond

// NodeLoad is what is known of one node monitor's load.
type NodeLoad struct {
	// Queued is reservations queued there; Running tasks running there.
	Queued, Running float64
	// Slots is the node's slot count; TaskTime its mean task run time.
	Slots    int
	TaskTime time.Duration
	// At is when the report behind the load arrived; zero means none.
	At time.Time
}

// Positions returns how many new tasks could start on the node within
// limit, at now, with share tasks per queued reservation; ok is false
// when the load is unknown: no report, a report older than stale, or no
// slot count or mean task time in it.
func (l NodeLoad) Positions(now time.Time, limit, stale time.Duration, share float64) (n float64, ok bool) {
	if l.At.IsZero() || now.Sub(l.At) > stale || l.Slots <= 0 || l.TaskTime <= 0 {
		return 0, false
	}
	s := float64(l.Slots)
	ahead := l.Running + share*l.Queued
	return max(0, math.Floor(s*(1+float64(limit)/float64(l.TaskTime))-ahead)), true
}

// Wait returns the expected wait of one new task on the node (position
// 0), and whether the load is known.
func (l NodeLoad) Wait(now time.Time, stale time.Duration, share float64) (time.Duration, bool) {
	if _, ok := l.Positions(now, 0, stale, share); !ok {
		return 0, false
	}
	s := float64(l.Slots)
	over := l.Running + share*l.Queued + 1 - s
	return time.Duration(max(0, over) * float64(l.TaskTime) / s), true
}

// Saturated reports whether a job of m tasks is saturated: its candidates'
// loads are all known and offer fewer than m positions that start within
// limit. It stops at the first unknown load or once m positions are found.
func Saturated(loads iter.Seq[NodeLoad], m int, now time.Time, limit, stale time.Duration, share float64) bool {
	have := 0.0
	for l := range loads {
		n, ok := l.Positions(now, limit, stale, share)
		if !ok {
			return false
		}
		if have += n; have >= float64(m) {
			return false
		}
	}
	return true
}

// nodeReport is the latest report of a node monitor, less this
// scheduler's own share at its arrival.
type nodeReport struct {
	othersQueued, othersRunning float64
	slots                       int
	taskTime                    time.Duration
	at                          time.Time
}

// admissionBook is the admission part's load table: the latest report
// of each node monitor less this scheduler's own share at its arrival,
// this scheduler's own queued reservations per node (recounted at most
// once per ownRefresh), and the jobs held by admission in arrival order.
// What runs where it asks its owner for (running), and what is queued
// it is given (refreshOwn, admitted).
//
// It has no lock of its own: it is not safe for concurrent use, and its
// owner serialises every call.
type admissionBook struct {
	maxWait, stale time.Duration         // Config.MaxQueueWait, Config.LoadStale
	share          float64               // tasks per queued reservation: 1/d
	reports        map[string]nodeReport // by node InternalService address
	own            map[string]float64    // this scheduler's queued reservations by node
	ownAt          time.Time
	// queue is the jobs held by admission, oldest first; answered ones
	// are dropped from its front.
	queue        []*holdState
	reportsTaken uint64 // load reports taken
}

// LoadReport is a node monitor's report as the scheduler takes it.
type LoadReport struct {
	Queued, Running uint64
	Slots           int
	TaskTime        time.Duration
}

// enabled reports whether jobs are admitted by expected wait at all.
func (a *admissionBook) enabled() bool { return a.maxWait > 0 }

// refreshOwn recounts this scheduler's queued reservations per node from
// outstanding, unless it did so less than ownRefresh before now.
func (a *admissionBook) refreshOwn(now time.Time, outstanding iter.Seq[placement.Probe]) {
	if a.own != nil && now.Sub(a.ownAt) < ownRefresh && !now.Before(a.ownAt) {
		return
	}
	clear(a.own)
	if a.own == nil {
		a.own = make(map[string]float64)
	}
	for p := range outstanding {
		a.own[p.Node.Addr] += float64(p.Count)
	}
	a.ownAt = now
}

// observe records node monitor addr's report, arrived at now, when this
// scheduler runs running tasks there, and wakes the oldest job held by
// admission to look at the new estimate. The own count must be fresh
// (refreshOwn).
func (a *admissionBook) observe(addr string, rep LoadReport, running int, now time.Time) {
	if a.reports == nil {
		a.reports = make(map[string]nodeReport)
	}
	a.reportsTaken++
	a.reports[addr] = nodeReport{
		othersQueued:  max(0, float64(rep.Queued)-a.own[addr]),
		othersRunning: max(0, float64(rep.Running)-float64(running)),
		slots:         rep.Slots, taskTime: rep.TaskTime, at: now,
	}
	if h := a.head(); h != nil {
		h.signal()
	}
}

// load returns node addr's load, when this scheduler runs running tasks
// there. The own count must be fresh (refreshOwn).
func (a *admissionBook) load(addr string, running int) NodeLoad {
	rep, ok := a.reports[addr]
	if !ok {
		return NodeLoad{}
	}
	return NodeLoad{
		Queued:  a.own[addr] + rep.othersQueued,
		Running: float64(running) + rep.othersRunning,
		Slots:   rep.slots, TaskTime: rep.taskTime, At: rep.at,
	}
}

// saturated reports whether a job of m tasks over candidates is
// saturated at now; running says how many tasks this scheduler runs on
// a node. The own count must be fresh (refreshOwn).
func (a *admissionBook) saturated(candidates []placement.Node, m int, now time.Time, running func(addr string) int) bool {
	loads := func(yield func(NodeLoad) bool) {
		for _, n := range candidates {
			if !yield(a.load(n.Addr, running(n.Addr))) {
				return
			}
		}
	}
	return Saturated(loads, m, now, a.maxWait, a.stale, a.share)
}

// admitted adds an admitted job's reservations to the own count, so that
// the next job sees them before the next refresh.
func (a *admissionBook) admitted(probes []placement.Probe) {
	if !a.enabled() || a.own == nil {
		return
	}
	for _, p := range probes {
		a.own[p.Node.Addr] += float64(p.Count)
	}
}

// ObserveLoad records node monitor addr's report, arrived at now, and
// wakes the oldest job held by admission to look at the new estimate.
func (s *Scheduler) ObserveLoad(addr string, rep LoadReport, now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.gate.adm.refreshOwn(now, s.book.outstanding())
	s.gate.adm.observe(addr, rep, s.running.on(addr), now)
}

// saturatedLocked reports whether a job of m tasks over candidates is
// saturated at now.
func (s *Scheduler) saturatedLocked(candidates []placement.Node, m int, now time.Time) bool {
	s.gate.adm.refreshOwn(now, s.book.outstanding())
	return s.gate.adm.saturated(candidates, m, now, s.running.on)
}

// admitLocked holds a job of m tasks for app, with constraints cons, while it
// is saturated over its candidates, or while jobs held by admission
// before it wait, and returns the candidates to place it on (looked up
// again if it was held: node monitors may have come or gone), or its
// refusal. Held jobs are admitted in arrival order:
// only the oldest looks at the estimate (on a capacity signal, a report,
// or its backoff timer), and each admission lets the next look at once.
// It releases s.mu while it waits.
func (s *Scheduler) admitLocked(ctx context.Context, app string, cons []placement.Constraint, candidates []placement.Node, m int) ([]placement.Node, error) {
	a := &s.gate.adm
	if !a.enabled() {
		return candidates, nil
	}
	if a.head() == nil && !s.saturatedLocked(candidates, m, s.now()) {
		return candidates, nil
	}
	hb := &s.gate.hold
	hb.stats.AdmissionHolds++
	refuse := func(over string) error {
		hb.stats.Refused++
		hb.stats.AdmissionRefused++
		after := hb.retryAfter()
		return refused(saturatedKind(over), after, "fleet saturated: the expected queue wait of the job's %d tasks exceeds --max-queue-wait %v and %s; retry after %v",
			m, s.cfg.MaxQueueWait, over, after)
	}
	h := newHoldState(time.Now())
	if over := hb.hold(h); over != "" {
		return nil, refuse(over)
	}
	a.queue = append(a.queue, h)
	limit := time.NewTimer(s.cfg.MaxHold)
	defer limit.Stop()
	done := ctx.Done()
	for {
		var retry *time.Timer
		var retryC <-chan time.Time
		if a.head() == h {
			hb.queueSignal(h)
			wait := h.backoff/2 + time.Duration(s.place.int63n(int64(h.backoff)/2+1))
			h.backoff = min(2*h.backoff, holdRetryMax)
			retry = time.NewTimer(wait)
			retryC = retry.C
		}
		s.mu.Unlock()
		over := false
		select {
		case <-h.wake:
		case <-retryC:
		case <-limit.C:
			over = true
		case <-done:
			over = true
		}
		if retry != nil {
			retry.Stop()
		}
		s.mu.Lock()
		now := time.Now()
		fresh, err := s.pipe.feasible(app, cons)
		if err != nil {
			hb.finish(h, now, false)
			a.next()
			return nil, err
		}
		candidates = fresh
		if a.head() == h && !s.saturatedLocked(candidates, m, s.now()) {
			hb.finish(h, now, true)
			a.next()
			return candidates, nil
		}
		if over {
			hb.finish(h, now, false)
			a.next()
			return nil, refuse(fmt.Sprintf("the call was held %v, the most allowed (--max-hold)", now.Sub(h.start).Round(time.Millisecond)))
		}
		if s.gate.draining.Load() {
			hb.finish(h, now, false)
			a.next()
			return nil, refuse(shuttingDown)
		}
	}
}

// head returns the oldest job held by admission whose call still waits,
// dropping answered ones, or nil.
func (a *admissionBook) head() *holdState { return firstWaiting(&a.queue) }

// wakeAll signals every job held by admission whose call still waits.
func (a *admissionBook) wakeAll() { signalWaiting(a.queue) }

// next lets the oldest job still held by admission look at the
// estimate at once: one ahead of it was just admitted or refused (and
// answered: holdBook.finish).
func (a *admissionBook) next() {
	if h := a.head(); h != nil {
		h.signal()
	}
}

// onLoadReport takes a node monitor's report from gossip and records it
// under the node's InternalService address. It runs on memberlist's
// goroutines: it decodes, then holds s.mu only to record.
func (d *Daemon) onLoadReport(b []byte) {
	if fairgossip.Kind(b) != "report" {
		return
	}
	r, err := fairgossip.DecodeReport(b)
	if err != nil {
		d.log.Debug().Err(err).Msg("dropping malformed load report")
		return
	}
	addr, ok := d.nodeAddr(r.Node)
	if !ok {
		return
	}
	rep := LoadReport{Slots: int(min(r.Slots, math.MaxInt32)), TaskTime: time.Duration(r.TaskMillis) * time.Millisecond}
	for _, u := range r.Users {
		rep.Queued += u.Queued
		rep.Running += u.Running
	}
	d.ObserveLoad(addr, rep, d.now())
}

// nodeAddr maps a node monitor's member name to its InternalService
// address, through a table rebuilt when the membership changes.
func (d *Daemon) nodeAddr(name string) (string, bool) {
	d.names.mu.Lock()
	defer d.names.mu.Unlock()
	if v := d.Cluster.Version(); d.names.byName == nil || v != d.names.version {
		d.names.version = v
		d.names.byName = make(map[string]string)
		for _, m := range d.Cluster.Members(membership.RoleNodeMonitor) {
			d.names.byName[m.Name] = m.Meta.Internal
		}
	}
	addr, ok := d.names.byName[name]
	return addr, ok && addr != ""
}

// nodeNames maps node monitors' member names to their InternalService
// addresses, for the membership version it was built from.
type nodeNames struct {
	mu      sync.Mutex
	version uint64
	byName  map[string]string
}
