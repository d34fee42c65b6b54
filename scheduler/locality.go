package scheduler

import (
	"slices"
	"time"

	"github.com/sparrowfleet/sparrow/core/locality"
	"github.com/sparrowfleet/sparrow/core/placement"
	"github.com/sparrowfleet/sparrow/internal/pricegossip"
	"github.com/sparrowfleet/sparrow/thrift/gen-go/sparrowrpc"
)

// Relaxing placement preferences, the scheduler's side.
//
// A task's TPlacementPreference names nodes and racks, and a
// delayThreshold in milliseconds.
//
//   - Strict (delayThreshold ≤ 0, what original Sparrow clients send): the
//     task is only ever reserved on and given to its preferred nodes and
//     racks, as original Sparrow does.
//   - Relaxed by delay (delayThreshold > 0, opt-in per task): if the task
//     has not launched delayThreshold after submission it is widened to
//     its home racks (the racks of its live preferred nodes, plus its
//     preferred racks) and ceil(d) further reservations are placed on
//     live nodes there that hold none for the request; after
//     2·delayThreshold it is widened to the whole cluster the same way.
//     Late binding then gives it to whichever node asks first; the old
//     reservations stay and are answered empty once it has launched.
//   - Guided by prices (the same opt-in, while the scheduler holds the
//     coordinator's prices and they are younger than Config.LocalityStale):
//     at submission, at each delay step and whenever newer prices arrive,
//     each unlaunched relaxable task is priced with locality.Choose —
//     node: the cheapest of its live preferred nodes; rack: ψ·input plus
//     the cheapest of its home racks; cluster: ξ·input plus the cluster
//     price — and widened at once to the cheapest level if that is wider
//     than what it has. While fresh prices price its preferred nodes they
//     alone decide: the delay does not widen a task the prices keep local
//     (its queue is, by the flow's reckoning, worth waiting for). A task
//     is never narrowed. Without fresh prices (no coordinator, or a dead
//     one, after Config.LocalityStale), or with prices that know none of
//     its preferred nodes, the delay applies, every step already passed
//     at once.
//
// The input size is TPlacementPreference.inputBytes, or
// Config.LocalityInputBytes when unset or negative. Launches of tasks with
// preferences are counted by how local they were (Stats.Locality).
//
// A task is handed out at most once however many reservations ask for it:
// placement.Request.Widen changes only which nodes may take an unlaunched
// task, and Assign hands each task index out once.
//
// Timing uses one heap of requests keyed by their next delay step, not a
// timer per task: the daemon's loop sleeps until the earliest step (or
// until newer prices arrive) and then calls Relax; an idle scheduler, or
// one with no relaxable task pending, never wakes for it.

// Defaults for the locality settings.
const (
	// DefaultLocalityStale is how long a set of prices guides placement
	// after it arrived: three of the coordinator's one-second periods.
	DefaultLocalityStale = 3 * time.Second
	// DefaultLocalityInputBytes is a task's input size when its request
	// does not say: one 128 MiB block.
	DefaultLocalityInputBytes = 128 << 20
	// relaxMinGap bounds how often the daemon's loop runs Relax, so that
	// a stream of requests with distinct deadlines costs at most 100
	// wake-ups a second; steps are taken up to this late.
	relaxMinGap = 10 * time.Millisecond
)

// Relaxation is one task's opt-in to relaxation, from its request.
type Relaxation struct {
	// Task indexes Job.Tasks.
	Task int
	// Delay is the task's delayThreshold.
	Delay time.Duration
	// InputBytes is the task's input size, or -1 for the scheduler's
	// default.
	InputBytes int64
}

// relaxOf returns task i's relaxation, if it has preferences and a
// positive delayThreshold. Negative thresholds and sizes are taken as
// absent, never refused: an original client never sends them.
func relaxOf(i int, t placement.Task, p *sparrowrpc.TPlacementPreference) (Relaxation, bool) {
	if !t.Constrained() || p.DelayThreshold <= 0 {
		return Relaxation{}, false
	}
	rx := Relaxation{Task: i, Delay: time.Duration(p.DelayThreshold) * time.Millisecond, InputBytes: -1}
	if p.InputBytes != nil && *p.InputBytes >= 0 {
		rx.InputBytes = *p.InputBytes
	}
	return rx, true
}

// LocalityStats count relaxation and how local launches were.
type LocalityStats struct {
	// Tasks widened to their home racks or to the cluster, by cause: the
	// delay passed, or the prices said waiting costs more.
	WidenedRackByDelay, WidenedRackByPrices       uint64
	WidenedClusterByDelay, WidenedClusterByPrices uint64
	// Launches of tasks with preferences: on a node the client allowed
	// (a preferred node, or a node of a preferred rack), elsewhere in a
	// preferred node's rack, or elsewhere in the cluster.
	LaunchedNode, LaunchedRack, LaunchedCluster uint64
	// PricesAccepted counts price sets installed; PricesVersion is the
	// current one's version and PricesFresh whether it guides placement.
	PricesAccepted uint64
	PricesVersion  uint64
	PricesFresh    bool
	// Relaxing is the number of requests with a task that may still widen.
	Relaxing int
}

// relaxTask is a relaxable task's state.
type relaxTask struct {
	idx   int
	orig  placement.Task // the client's preferences
	delay time.Duration
	input int64
	level locality.Level
	home  []string // home racks, resolved at the first widening or pricing
	homed bool
}

// relaxState is a request's relaxable tasks, in task order.
type relaxState struct {
	submitted time.Time
	tasks     []relaxTask
	at        time.Time // the next delay step, the heap's key
	pos       int       // index in relaxer.q, -1 when not queued
}

func newRelaxState(job Job, now time.Time, defInput int64) *relaxState {
	st := &relaxState{submitted: now, pos: -1, tasks: make([]relaxTask, len(job.Relax))}
	for i, rx := range job.Relax {
		in := rx.InputBytes
		if in < 0 {
			in = defInput
		}
		st.tasks[i] = relaxTask{idx: rx.Task, orig: job.Tasks[rx.Task], delay: rx.Delay, input: in}
	}
	return st
}

// find returns the relaxable task with index idx, or nil.
func (st *relaxState) find(idx int) *relaxTask {
	if st == nil {
		return nil
	}
	i, ok := slices.BinarySearchFunc(st.tasks, idx, func(t relaxTask, idx int) int { return t.idx - idx })
	if !ok {
		return nil
	}
	return &st.tasks[i]
}

// next returns r's next delay step: the earliest time an unlaunched task
// below cluster level is due to widen, or false if none can.
func (st *relaxState) next(r *request) (time.Time, bool) {
	var at time.Time
	ok := false
	for i := range st.tasks {
		t := &st.tasks[i]
		if t.level >= locality.ClusterLevel || r.IsLaunched(t.idx) {
			continue
		}
		due := st.submitted.Add(locality.DelayStep(t.level, t.delay))
		if !ok || due.Before(at) {
			at, ok = due, true
		}
	}
	return at, ok
}

// RelaxWake is signalled when NextRelax may have become earlier.
func (s *Scheduler) RelaxWake() <-chan struct{} { return s.relax.wake }

// NextRelax returns when Relax should next run: the earliest delay step
// of a queued request, or now if newer prices are waiting to be applied.
// ok is false when nothing is queued.
func (s *Scheduler) NextRelax() (at time.Time, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.relax.next(s.now)
}

// Relax widens the relaxable tasks that are due at now: those whose delay
// step has come, and, when newer prices arrived since the last call and
// are fresh, every pending relaxable task the prices say should widen. The
// extra reservations go out through the same path as any other (a failed
// enqueue re-places them). The daemon calls it from its loop; tests call
// it with a chosen time.
func (s *Scheduler) Relax(now time.Time) {
	type send struct {
		r      *request
		probes []placement.Probe
	}
	var sends []send
	s.mu.Lock()
	due, fresh := s.relax.due(now)
	for _, r := range due {
		if !s.book.live(r) || r.Launched() {
			continue
		}
		if probes := s.relaxLocked(r, now, fresh); len(probes) > 0 {
			sends = append(sends, send{r, probes})
		}
		s.scheduleRelaxLocked(r, now)
	}
	s.mu.Unlock()
	for _, x := range sends {
		s.enqueue(x.r, x.probes)
	}
}

// widening causes, for the stats.
const (
	byDelay = iota
	byPrices
)

// relaxLocked widens r's due tasks at now (by delay, and by the prices
// when fresh) and returns the reservations it placed for them, already
// recorded in r; the caller sends them.
func (s *Scheduler) relaxLocked(r *request, now time.Time, fresh bool) []placement.Probe {
	var (
		index   *placement.RackIndex
		widened []placement.Task
	)
	resolve := func(t *relaxTask) {
		if index == nil {
			_, index = s.relax.rackIndex(s.view, r.app)
		}
		if !t.homed {
			t.home, t.homed = index.HomeRacks(t.orig), true
		}
	}
	for i := range r.loc.tasks {
		t := &r.loc.tasks[i]
		if t.level >= locality.ClusterLevel || r.IsLaunched(t.idx) {
			continue
		}
		// Fresh prices that know the task's preferred nodes decide
		// alone; otherwise the delay does.
		target, cause, priced := t.level, byDelay, false
		if fresh {
			resolve(t)
			var l locality.Level
			if l, _, priced = locality.Choose(s.relax.prices, index.Names(t.orig), t.home, t.input); priced && l > target {
				target, cause = l, byPrices
			}
		}
		if !priced {
			target = max(target, locality.DelayLevel(now.Sub(r.loc.submitted), t.delay))
		}
		if target <= t.level {
			continue
		}
		resolve(t)
		w := placement.Widen(t.orig, target, t.home)
		if !r.Widen(t.idx, w) {
			continue
		}
		t.level = target
		s.relax.countWiden(target, cause)
		widened = append(widened, w)
	}
	if len(widened) == 0 {
		return nil
	}
	// Only on node monitors holding none of r's reservations: a widened
	// task may already have one on a node it allowed before.
	probes, starved, err := s.pipe.place(r, placeOptions{tasks: widened, ratio: r.ratio, holders: holdersDropped, widened: true})
	if err != nil {
		// r.ratio was checked at submission; this would be a bug.
		s.log.Error().Err(err).Str("request", r.ID).Msg("cannot place widened tasks' reservations")
		return nil
	}
	r.AddProbes(probes)
	s.log.Debug().Str("request", r.ID).Int("widened", len(widened)).Int("starved", len(starved)).
		Int("nodes", len(probes)).Msg("relaxed placement preferences")
	return probes
}

// SetPrices installs the coordinator's prices, received at at, if they
// are newer than the current ones, or the current ones are stale (a
// restarted coordinator starts its versions again). Prices of the current
// version only renew its age. Safe for concurrent use; it never blocks on
// RPC, so gossip handlers may call it.
func (s *Scheduler) SetPrices(p locality.Prices, at time.Time) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.relax.setPrices(p, at)
}

// scheduleRelaxLocked queues r, if it is live, for its next delay step, or
// takes it off the queue.
func (s *Scheduler) scheduleRelaxLocked(r *request, now time.Time) {
	if !s.book.live(r) {
		s.relax.remove(r)
		return
	}
	s.relax.schedule(r, now)
}

// onGossip installs the prices in a user message from the coordinator and
// ignores every other message. It runs on memberlist's goroutines and
// must not block: it decodes, then holds s.mu only to install.
func (s *Scheduler) onGossip(b []byte) {
	if !pricegossip.IsPrices(b) {
		return
	}
	p, err := pricegossip.Decode(b)
	if err != nil {
		s.log.Warn().Err(err).Int("bytes", len(b)).Msg("dropping malformed locality prices")
		return
	}
	if s.SetPrices(p, s.now()) {
		s.log.Debug().Uint64("version", p.Version).Int("nodes", len(p.Node)).Msg("locality prices installed")
	}
}
