package sim

import (
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/sparrowfleet/sparrow/core/placement"
	"github.com/sparrowfleet/sparrow/core/queue"
	"github.com/sparrowfleet/sparrow/core/shortjobs"
	"github.com/sparrowfleet/sparrow/core/slots"
	"github.com/sparrowfleet/sparrow/internal/jobtrace"
)

// TracePolicy is how a job trace is scheduled.
type TracePolicy int

// The trace policies.
const (
	// TraceSparrow is plain Sparrow: batch sampling with late binding over
	// every node, FIFO queues at the node monitors (queue.FIFO), and
	// cancellation of a job's queued reservations once its tasks are all
	// launched.
	TraceSparrow TracePolicy = iota
	// TraceAware is Sparrow with the long-task-aware policy of
	// core/shortjobs: jobs classified by their mean task duration, long
	// jobs kept off the short-only nodes, short jobs steered to nodes
	// whose gossiped advert says they hold no long work, SRPT queues with
	// a pass-over bound, and sticky fetches.
	TraceAware
	// TraceIdeal is the trace on a cluster so large that nothing queues:
	// each job's response time is its longest task plus the late-binding
	// network delay (1.5 RTT).
	TraceIdeal
	// TraceCentral is a reference no sampling scheduler can beat at its
	// own game: one central queue over every slot of the cluster, which
	// gives each freed slot a task of the waiting job with the least
	// estimated remaining work (its unlaunched tasks times its mean task
	// duration), with no network delay but the late-binding delay (1.5
	// RTT) before a job's first dispatch.
	TraceCentral
	// TraceBound is not a scheduler but a bound below every scheduler:
	// per class, times that the mean and the quantiles of the jobs'
	// response times reach under any scheduler on the same slots,
	// placement, order, preemption and knowledge aside (package
	// sim/lowerbound). It is not in "all".
	TraceBound
	numTracePolicies
)

var tracePolicyNames = [...]string{"sparrow", "aware", "ideal", "central", "bound"}

func (p TracePolicy) String() string {
	if p < 0 || p >= numTracePolicies {
		return fmt.Sprintf("TracePolicy(%d)", int(p))
	}
	return tracePolicyNames[p]
}

// ParseTracePolicies parses a comma-separated list of trace policy names,
// or "all".
func ParseTracePolicies(s string) ([]TracePolicy, error) {
	if strings.TrimSpace(s) == "all" {
		return []TracePolicy{TraceIdeal, TraceCentral, TraceSparrow, TraceAware}, nil
	}
	var out []TracePolicy
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		i := -1
		for k, n := range tracePolicyNames {
			if n == f {
				i = k
			}
		}
		if i < 0 {
			return nil, fmt.Errorf("unknown trace policy %q (valid: %s, or all)", f, strings.Join(tracePolicyNames[:], ", "))
		}
		for _, p := range out {
			if p == TracePolicy(i) {
				return nil, fmt.Errorf("trace policy %q listed twice", f)
			}
		}
		out = append(out, TracePolicy(i))
	}
	return out, nil
}

// TraceEstimates is where the aware policy's estimate of a job's mean
// task duration comes from. Jobs are reported in the class of their true
// mean whatever the estimate.
type TraceEstimates int

// The estimate sources.
const (
	// EstimateExact gives each job its true mean task duration.
	EstimateExact TraceEstimates = iota
	// EstimateNoisy gives each job its true mean times a random factor
	// between 0.5 and 2, uniform in its logarithm, drawn from a stream
	// seeded by Seed.
	EstimateNoisy
	// EstimateNone gives no estimate: the scheduler falls back on
	// Aware.Unestimated (shortjobs.Config.Judge). Under
	// UnestimatedByHistory, the trace naming no applications, every job
	// is one application's and the history is the moving mean of every
	// finished task; the first job, with no history, is long.
	EstimateNone
	numEstimates
)

var estimateNames = [...]string{"exact", "noisy", "none"}

func (e TraceEstimates) String() string {
	if e < 0 || e >= numEstimates {
		return fmt.Sprintf("TraceEstimates(%d)", int(e))
	}
	return estimateNames[e]
}

// ParseTraceEstimates parses an estimate source's name.
func ParseTraceEstimates(name string) (TraceEstimates, error) {
	for i, n := range estimateNames {
		if n == name {
			return TraceEstimates(i), nil
		}
	}
	return 0, fmt.Errorf("unknown estimate source %q (valid: %s)", name, strings.Join(estimateNames[:], ", "))
}

// TraceConfig describes one replay of a job trace.
type TraceConfig struct {
	Policy TracePolicy
	// Nodes is the number of node monitors; Slots the slots on each.
	Nodes, Slots int
	// RTT is the network round trip, in ms of simulated time.
	RTT float64
	// ProbeRatio is d.
	ProbeRatio float64
	// TimeScale divides every duration and arrival gap (> 0; 1 replays
	// the trace as recorded).
	TimeScale float64
	// GapScale multiplies every arrival gap (> 0), to change the load:
	// 0.5 doubles it.
	GapScale float64
	// Policy settings of TraceAware (Cutoff in trace seconds, compared
	// with a job's mean task duration before TimeScale).
	Aware shortjobs.Config
	// GossipDelay is how long, in ms, a node's long-work advert, or the
	// scheduler's backlog advert, takes to reach the others (TraceAware).
	GossipDelay float64
	// Pull turns pulls on (TraceAware): PullAfter, in ms, is how long a
	// short job must wait with tasks unlaunched before the scheduler
	// counts it in its backlog and freed slots pull its tasks
	// (shortjobs.Backlog); a pull that got nothing is retried after as
	// long.
	Pull      bool
	PullAfter float64
	// AdaptiveShare sizes the short-only share as the run goes
	// (shortjobs.AdaptiveShare, TraceAware), from the short work arrived
	// and the nodes advertising long work as the scheduler hears them;
	// Aware.ShortShare is then its floor.
	AdaptiveShare bool
	// ShareHold is how long, in simulated time, the adaptive share's
	// target must stay below its step before the share falls one step;
	// 0 is shortjobs.DefaultShareHold.
	ShareHold time.Duration
	// Estimates is where TraceAware's task duration estimates come from.
	Estimates TraceEstimates
	// Seed seeds placement.
	Seed uint64
}

// Validate returns an error naming the first unusable field.
func (c *TraceConfig) Validate() error {
	finitePos := func(v float64) bool { return v > 0 && !math.IsInf(v, 0) }
	switch {
	case c.Policy < 0 || c.Policy >= numTracePolicies:
		return fmt.Errorf("unknown trace policy %d", int(c.Policy))
	case c.Nodes < 1 || c.Nodes > MaxNodes:
		return fmt.Errorf("nodes must be in [1, %d], got %d", MaxNodes, c.Nodes)
	case c.Slots < 1 || c.Slots > 1<<16:
		return fmt.Errorf("slots per node must be in [1, 65536], got %d", c.Slots)
	case math.IsNaN(c.RTT) || math.IsInf(c.RTT, 0) || c.RTT < 0:
		return fmt.Errorf("rtt must be a finite number >= 0 ms, got %v", c.RTT)
	case !finitePos(c.TimeScale):
		return fmt.Errorf("time scale must be a finite number > 0, got %v", c.TimeScale)
	case !finitePos(c.GapScale):
		return fmt.Errorf("arrival gap scale must be a finite number > 0, got %v", c.GapScale)
	case math.IsNaN(c.GossipDelay) || math.IsInf(c.GossipDelay, 0) || c.GossipDelay < 0:
		return fmt.Errorf("gossip delay must be a finite number >= 0 ms, got %v", c.GossipDelay)
	case c.Estimates < 0 || c.Estimates >= numEstimates:
		return fmt.Errorf("unknown estimate source %d", int(c.Estimates))
	case c.Pull && (math.IsNaN(c.PullAfter) || math.IsInf(c.PullAfter, 0) || c.PullAfter < 0):
		return fmt.Errorf("pull delay must be a finite number >= 0 ms, got %v", c.PullAfter)
	case c.ShareHold < 0:
		return fmt.Errorf("adaptive share hold must be >= 0, got %v", c.ShareHold)
	}
	if err := placement.CheckProbeRatio(c.ProbeRatio); err != nil {
		return err
	}
	return c.Aware.Validate()
}

// TraceResult is one replay's outcome. Times are in seconds of simulated
// time (trace seconds divided by TimeScale).
type TraceResult struct {
	Policy string `json:"policy"`
	Nodes  int    `json:"nodes"`
	Slots  int    `json:"slots"`
	jobtrace.Result
	Jobs          int     `json:"jobs"`
	Tasks         int64   `json:"tasks"`
	Events        int64   `json:"events"`
	SimSeconds    float64 `json:"sim_seconds"`
	Reservations  int64   `json:"reservations"`
	Fetches       int64   `json:"fetches"`
	EmptyFetches  int64   `json:"empty_fetches"`
	StickyFetches int64   `json:"sticky_fetches"`
	// PullFetches counts fetches for pull reservations, PulledTasks those
	// that got a task, BacklogAdverts the scheduler's backlog adverts
	// (TraceAware with pulls).
	PullFetches    int64 `json:"pull_fetches,omitempty"`
	PulledTasks    int64 `json:"pulled_tasks,omitempty"`
	BacklogAdverts int64 `json:"backlog_adverts,omitempty"`
	Cancelled      int64 `json:"cancelled"`
	// SteeredShort counts short jobs placed among nodes without long work
	// only; ShortJobs all short jobs (TraceAware).
	SteeredShort int64 `json:"steered_short,omitempty"`
	ShortJobs    int64 `json:"short_jobs,omitempty"`
	// SteeredLong counts long jobs placed among the general nodes of the
	// lowest advertised long-work levels only (Aware.LongSteer).
	SteeredLong int64 `json:"steered_long,omitempty"`
	// WorkUpdates counts the remaining-work updates schedulers sent to
	// nodes holding their jobs' reservations (Aware.WorkRefresh), one
	// per node and update.
	WorkUpdates int64 `json:"work_updates,omitempty"`
	// OverrunLong counts jobs that stated no estimate taken as long once
	// a task of theirs ran for the cutoff (Aware.Overrun), and
	// OverrunDeclined the fetches from short-only nodes they then got no
	// task for.
	OverrunLong     int64 `json:"overrun_long,omitempty"`
	OverrunDeclined int64 `json:"overrun_declined,omitempty"`
	// ShareChanges counts the adaptive short-only share's changes, and
	// ShareMax is the largest share it took (TraceConfig.AdaptiveShare).
	ShareChanges int64   `json:"share_changes,omitempty"`
	ShareMax     float64 `json:"share_max,omitempty"`
	// AdvertChanges counts the long-work adverts gossiped (a node's state
	// turning from none to some long work or back).
	AdvertChanges int64 `json:"advert_changes,omitempty"`
	// AdvertPeakMinute is the most adverts gossiped in one minute of
	// simulated time (minutes counted from time zero).
	AdvertPeakMinute int64 `json:"advert_peak_minute,omitempty"`
}

// Trace event kinds.
const (
	tArrival    uint8 = iota // the next job reaches its scheduler
	tEnqueue                 // a job's reservations reach their nodes
	tGetTask                 // a node's getTask reaches the scheduler
	tReply                   // an empty answer reaches the node
	tTaskDone                // a task ends
	tCancel                  // a job's cancellations reach their nodes
	tAdvert                  // a node's long-work advert reaches the schedulers
	tBacklog                 // a short job has waited PullAfter: the scheduler checks it
	tPullAdvert              // the scheduler's backlog advert reaches the nodes
	tPullRetry               // a node's pull that got nothing may be queued again
	tOverrun                 // a short job's task has run for the cutoff (Aware.Overrun)
)

// Reservation tags: the job sequence number in the high 32 bits; in the
// low 32, bit 31 is set for a long job and the rest is the probe's
// reservation handle, or stickyProbe.
const (
	longBit     = 1 << 31
	stickyProbe = longBit - 1
	pullProbe   = longBit - 2
)

// traceMon is one node monitor of a trace replay: the product's
// slots.Core over a queue.FIFO (plain Sparrow) or a shortjobs.SRPT.
type traceMon struct {
	core slots.Core
	fifo queue.FIFO
	pol  *shortjobs.Monitor // TraceAware only
	pull *shortjobs.Puller  // TraceAware with pulls only
}

// traceJob is one live job; slots of traceSim.jobs are recycled.
type traceJob struct {
	seq     int32
	live    bool
	done    bool
	long    bool
	arrival float64   // ms
	mean    float64   // trace seconds, unscaled
	est     float64   // estimated task duration, ms
	dur     []float64 // ms
	rem     []int32   // unlaunched tasks after task i was handed out
	left    int32     // unfinished tasks
	lastEnd float64
	req     *placement.Request
	reqID   string
	backlog bool // in the scheduler's backlog (pulls)
	// guessed: a short job that stated no estimate (Aware.Overrun may
	// take it as long); overran: it was, once one of its tasks ran for
	// the cutoff.
	guessed bool
	overran bool
	picks   []placement.Pick
	cancel  []int32
	pending bool // cancellations in flight
}

type traceSim struct {
	cfg   TraceConfig
	next  func() (jobtrace.Job, error)
	rec   *jobtrace.Recorder
	h     agenda
	now   float64
	half  float64
	place *rand.Rand
	err   error

	nodes   []placement.Node
	mon     []traceMon
	sampler placement.Sampler
	tasks   []placement.Task // tasks[:m] is any m-task job's task list

	// aware policy
	shortOnly []bool
	view      []bool  // long-work adverts as the schedulers last heard them
	level     []uint8 // long-work levels as the schedulers last heard them
	holders   []int32 // scratch: nodes holding a job's reservations
	// adaptive share
	share    *shortjobs.AdaptiveShare
	hashes   []uint64 // each node's NodeHash
	scratch  []uint64
	longBusy int // nodes whose advert, as heard, says long work
	// estimates other than exact
	noise     *rand.Rand
	hist      *shortjobs.History
	cand      []int32
	candNodes []placement.Node
	// pulls (aware with Pull)
	backlog       *shortjobs.Backlog
	backlogAdvert float64 // the backlog advert last sent (shortjobs.AdvertWork)
	due           []string

	jobs     []traceJob
	free     []int32
	seqSlot  []int32
	nextSeq  int32
	first    float64 // trace time of the first arrival, s
	upcoming jobtrace.Job
	more     bool

	res   TraceResult
	hooks traceHooks
	// advertMinute and advertCount count the adverts of the current
	// minute of simulated time.
	advertMinute int64
	advertCount  int64
}

// traceHooks let tests observe the engine; nil in production.
type traceHooks struct {
	onStart func(node, jseq, task int32)
	// afterEvent runs after every event.
	afterEvent func(s *traceSim)
}

// RunTrace replays the jobs next returns (io.EOF after the last) under
// cfg, recording each job and task in rec, and summarises the run. Jobs
// are read one arrival ahead, so the trace is never held in memory;
// TraceBound alone holds three numbers per job and records nothing.
func RunTrace(cfg TraceConfig, next func() (jobtrace.Job, error), rec *jobtrace.Recorder) (TraceResult, error) {
	if cfg.Policy == TraceBound {
		return runTraceBound(cfg, next)
	}
	s, err := newTraceSim(cfg, next, rec)
	if err != nil {
		return TraceResult{}, err
	}
	return s.run()
}

func newTraceSim(cfg TraceConfig, next func() (jobtrace.Job, error), rec *jobtrace.Recorder) (*traceSim, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	s := &traceSim{
		cfg:   cfg,
		next:  next,
		rec:   rec,
		half:  cfg.RTT / 2,
		place: newPlaceRNG(cfg.Seed),
		res:   TraceResult{Policy: cfg.Policy.String(), Nodes: cfg.Nodes, Slots: cfg.Slots},
	}
	if cfg.Policy == TraceIdeal || cfg.Policy == TraceCentral {
		return s, nil
	}
	n := cfg.Nodes
	s.nodes = make([]placement.Node, n)
	s.mon = make([]traceMon, n)
	aware := cfg.Policy == TraceAware
	pulls := aware && cfg.Pull
	if aware {
		s.shortOnly = make([]bool, n)
		s.view = make([]bool, n)
		s.level = make([]uint8, n)
	}
	if pulls {
		s.backlog = shortjobs.NewBacklog()
	}
	for i := range s.nodes {
		a := NodeAddr(i)
		s.nodes[i] = placement.Node{Addr: a, Host: a, Name: a}
		m := &s.mon[i]
		var q queue.Discipline = &m.fifo
		if aware {
			m.pol = shortjobs.NewMonitor(cfg.Aware, cfg.Slots)
			q = m.pol.Queue()
			if pulls {
				m.pull = shortjobs.NewPuller(simApp, msDuration(cfg.PullAfter))
			}
		}
		if err := m.core.Init(cfg.Slots, q); err != nil {
			return nil, err
		}
		m.core.SetMaxQueued(math.MaxInt32)
		m.core.AddApp(simApp)
	}
	if aware {
		// The short-only share, as the schedulers pick it from the
		// nodes' names.
		s.hashes = make([]uint64, n)
		for i, nd := range s.nodes {
			s.hashes[i] = shortjobs.NodeHash(nd.Name)
		}
		s.partition(cfg.Aware.ShortShare)
		switch cfg.Estimates {
		case EstimateNoisy:
			s.noise = rand.New(rand.NewPCG(cfg.Seed, 0x6573746d))
		case EstimateNone:
			s.hist = shortjobs.NewHistory(0)
		}
		if cfg.AdaptiveShare {
			s.share = shortjobs.NewAdaptiveShare(cfg.Aware.ShortShare, 0, cfg.ShareHold, 0)
			s.res.ShareMax = cfg.Aware.ShortShare
		}
	}
	return s, nil
}

// partition marks the short-only nodes under share.
func (s *traceSim) partition(share float64) {
	s.scratch = append(s.scratch[:0], s.hashes...)
	part := shortjobs.NewPartition(s.scratch, share)
	for i, h := range s.hashes {
		s.shortOnly[i] = part.ShortOnly(h)
	}
}

func (s *traceSim) run() (TraceResult, error) {
	if s.cfg.Policy == TraceCentral {
		return s.runCentral()
	}
	if err := s.readNext(); err != nil {
		return TraceResult{}, err
	}
	if s.more {
		s.first = s.upcoming.Submit
		s.scheduleArrival()
	}
	for s.h.len() > 0 && s.err == nil {
		e := s.h.pop()
		s.now = e.t
		s.res.Events++
		switch e.kind() {
		case tArrival:
			s.arrival()
		case tEnqueue:
			s.enqueue(e.slot)
		case tGetTask:
			s.getTask(e.node, e.slot, uint32(e.task), e.jseq)
		case tReply:
			s.reply(e.node, uint32(e.task))
		case tTaskDone:
			s.taskDone(e.node, e.slot, e.task)
		case tCancel:
			s.cancel(e.slot)
		case tAdvert:
			busy := e.task&1 != 0
			switch {
			case busy && !s.view[e.node]:
				s.longBusy++
			case !busy && s.view[e.node]:
				s.longBusy--
			}
			s.view[e.node] = busy
			s.level[e.node] = uint8(e.task >> 1)
		case tBacklog:
			s.backlogCheck(e.slot, e.jseq)
		case tPullAdvert:
			s.pullAdvert(advertWork(e.task))
		case tPullRetry:
			s.pullRetry(e.node)
		case tOverrun:
			s.mon[e.node].pol.Overran()
			s.advert(e.node)
			s.overran(e.slot, e.jseq)
		}
		if s.hooks.afterEvent != nil {
			s.hooks.afterEvent(s)
		}
	}
	if s.err != nil {
		return TraceResult{}, s.err
	}
	s.res.Result = s.rec.Result(s.cfg.Nodes * s.cfg.Slots)
	s.res.SimSeconds = s.now / 1000
	return s.res, nil
}

// readNext reads the next job into upcoming; more is false at the end.
func (s *traceSim) readNext() error {
	j, err := s.next()
	if errors.Is(err, io.EOF) {
		s.more = false
		return nil
	}
	if err != nil {
		return err
	}
	s.upcoming, s.more = j, true
	return nil
}

// simMS converts trace seconds to simulated ms.
func (s *traceSim) simMS(sec float64) float64 { return sec * 1000 / s.cfg.TimeScale }

func (s *traceSim) scheduleArrival() {
	t := s.simMS((s.upcoming.Submit - s.first) * s.cfg.GapScale)
	s.h.push(event{t: max(t, s.now), key: uint64(tArrival), node: -1, slot: -1, task: -1, jseq: -1})
}

func (s *traceSim) newJob() int32 {
	if k := len(s.free); k > 0 {
		slot := s.free[k-1]
		s.free = s.free[:k-1]
		return slot
	}
	s.jobs = append(s.jobs, traceJob{})
	return int32(len(s.jobs) - 1)
}

func (s *traceSim) arrival() {
	tj := s.upcoming
	if err := s.readNext(); err != nil {
		s.err = err
		return
	}
	if s.more {
		s.scheduleArrival()
	}
	m := len(tj.Durations)
	s.res.Jobs++
	s.res.Tasks += int64(m)
	mean := tj.Mean()
	if s.cfg.Policy == TraceIdeal {
		// No queueing: every task starts after the late-binding delay.
		at := s.now + 3*s.half
		end := 0.0
		for _, d := range tj.Durations {
			ms := s.simMS(d)
			s.rec.Task(mean, s.now/1000, at/1000, ms/1000)
			end = max(end, at+ms)
		}
		s.rec.Job(int(s.res.Jobs-1), mean, s.now/1000, end/1000)
		return
	}
	slot := s.newJob()
	j := &s.jobs[slot]
	j.seq = s.nextSeq
	s.nextSeq++
	j.live, j.done, j.pending = true, false, false
	j.arrival = s.now
	j.mean = mean
	j.est = s.simMS(mean)
	j.left = int32(m)
	j.lastEnd = 0
	j.dur = j.dur[:0]
	for _, d := range tj.Durations {
		j.dur = append(j.dur, s.simMS(d))
	}
	j.rem = resize(j.rem, m)
	j.reqID = strconv.Itoa(int(j.seq))
	for len(s.tasks) < m {
		s.tasks = append(s.tasks, placement.Task{ID: strconv.Itoa(len(s.tasks))})
	}
	tasks := s.tasks[:m]

	nodes := s.nodes
	var cand []int32
	if s.cfg.Policy == TraceAware {
		own := mean
		switch {
		case s.noise != nil:
			own *= math.Exp2(2*s.noise.Float64() - 1)
		case s.hist != nil:
			own = 0
		}
		c, est, known := s.cfg.Aware.Judge(own, s.hist, simApp)
		j.est = 0
		if known {
			j.est = s.simMS(est)
		}
		j.long = c == shortjobs.Long
		j.guessed = c == shortjobs.Short && !shortjobs.Stated(own)
		j.overran = false
		if s.share != nil {
			if !j.long {
				s.share.AddShortWork(msDuration(s.now), float64(m)*j.est/1000)
			}
			if v, changed := s.share.Update(msDuration(s.now), s.cfg.Nodes*s.cfg.Slots, s.longBusy, s.cfg.Nodes); changed {
				s.partition(v)
				s.res.ShareChanges++
				s.res.ShareMax = max(s.res.ShareMax, v)
			}
		}
		var steered bool
		if j.long && s.cfg.Aware.LongSteer {
			s.cand, steered = shortjobs.SteerLong(s.cand[:0], placement.Reservations(s.cfg.ProbeRatio, m), s.shortOnly, s.level)
			if steered {
				s.res.SteeredLong++
			}
		} else {
			s.cand, steered = shortjobs.Steer(s.cand[:0], c, m, s.shortOnly, s.view)
		}
		if c == shortjobs.Short {
			s.res.ShortJobs++
			if steered {
				s.res.SteeredShort++
			}
		}
		if len(s.cand) < len(s.nodes) {
			cand = s.cand
			s.candNodes = s.candNodes[:0]
			for _, i := range cand {
				s.candNodes = append(s.candNodes, s.nodes[i])
			}
			nodes = s.candNodes
		}
	}
	picks, err := s.sampler.PlanPicks(j.picks[:0], s.place, nodes, tasks, s.cfg.ProbeRatio)
	if err != nil {
		s.err = fmt.Errorf("sim: plan job on line %d: %w", tj.Line, err)
		return
	}
	for k := range picks {
		if cand != nil {
			picks[k].Node = cand[picks[k].Node]
		}
	}
	j.picks = picks
	if j.req == nil {
		j.req = placement.NewRequest(j.reqID, tasks)
	} else {
		j.req.Reset(j.reqID, tasks)
	}
	j.req.AddPicks(s.nodes, picks)
	for int(j.seq) >= len(s.seqSlot) {
		s.seqSlot = append(s.seqSlot, -1)
	}
	s.seqSlot[j.seq] = slot
	s.h.pushFixed(event{t: s.now + s.half, key: uint64(tEnqueue), node: -1, slot: slot, task: -1, jseq: j.seq})
	j.backlog = false
	if s.backlog != nil && !j.long {
		s.h.push(event{t: s.now + s.cfg.PullAfter, key: uint64(tBacklog), node: -1, slot: slot, task: -1, jseq: j.seq})
	}
}

// tag is the reservation tag of probe k of job j (see longBit).
func tag(j *traceJob, k uint32) uint64 {
	low := k
	if j.long {
		low |= longBit
	}
	return uint64(uint32(j.seq))<<32 | uint64(low)
}

// class is the job class a reservation tag's low word names.
func class(low uint32) shortjobs.Class {
	if low&longBit != 0 {
		return shortjobs.Long
	}
	return shortjobs.Short
}

// advert gossips node n's advert if it changed (its shortjobs.Monitor's
// AdvertChanged). The event carries the busy bit in bit 0 and the
// long-work level above it.
func (s *traceSim) advert(n int32) {
	if s.mon[n].pol.AdvertChanged() {
		s.res.AdvertChanges++
		if minute := int64(s.now / 60000); minute != s.advertMinute {
			s.advertMinute, s.advertCount = minute, 0
		}
		s.advertCount++
		s.res.AdvertPeakMinute = max(s.res.AdvertPeakMinute, s.advertCount)
		a := s.mon[n].pol.Advert2()
		v := int32(shortjobs.AdvertLevel(a[:])) << 1
		if shortjobs.AdvertBusy(a[:]) {
			v |= 1
		}
		s.h.push(event{t: s.now + s.cfg.GossipDelay, key: uint64(tAdvert), node: n, slot: -1, task: v, jseq: -1})
	}
}

// jobClass is job j's class.
func jobClass(j *traceJob) shortjobs.Class {
	if j.long {
		return shortjobs.Long
	}
	return shortjobs.Short
}

// refreshWork is job j's scheduler telling the nodes holding its queued
// reservations its remaining work, when the task it just handed out to
// node n took its unlaunched count into another step
// (shortjobs.RefreshTargets). The update reaches them at once: it
// travels RTT/2, as the answer to node n does, and no decision here
// depends on that difference.
func (s *traceSim) refreshWork(n int32, j *traceJob) {
	left := j.req.Unlaunched()
	if shortjobs.WorkStep(left) == shortjobs.WorkStep(left+1) || left == 0 {
		return
	}
	if err := s.holdersOf(j); err != nil {
		s.err = err
		return
	}
	s.holders = shortjobs.RefreshTargets(s.holders[:0], s.holders, n, left+1, left)
	w := remaining(j)
	for _, h := range s.holders {
		s.mon[h].pol.Queued(j.reqID, w)
		s.res.WorkUpdates++
	}
}

// heldOffShortOnly reports whether job j holds a queued reservation on a
// node outside the short-only share. It overwrites holders.
func (s *traceSim) heldOffShortOnly(j *traceJob) bool {
	if err := s.holdersOf(j); err != nil {
		s.err = err
		return false
	}
	for _, h := range s.holders {
		if !s.shortOnly[h] {
			return true
		}
	}
	return false
}

// holdersOf sets holders to the nodes holding job j's queued
// reservations.
func (s *traceSim) holdersOf(j *traceJob) error {
	s.holders = s.holders[:0]
	for _, p := range j.req.Outstanding() {
		i, err := strconv.Atoi(p.Node.Addr[1:])
		if err != nil {
			return fmt.Errorf("sim: node address %q", p.Node.Addr)
		}
		s.holders = append(s.holders, int32(i))
	}
	return nil
}

// remaining is the estimated remaining work of job j, in ms.
func remaining(j *traceJob) float64 { return float64(j.req.Unlaunched()) * j.est }

func (s *traceSim) enqueue(slot int32) {
	j := &s.jobs[slot]
	r := queue.Reservation{RequestID: j.reqID, App: simApp, Scheduler: simScheduler}
	aware := s.cfg.Policy == TraceAware
	for k, p := range j.picks {
		m := &s.mon[p.Node]
		r.Tag = tag(j, uint32(k))
		if err := m.core.Enqueue(r, int(p.Count)); err != nil {
			s.err = fmt.Errorf("sim: node %d: %w", p.Node, err)
			return
		}
		s.res.Reservations += int64(p.Count)
		if aware {
			m.pol.QueuedClass(j.reqID, jobClass(j), remaining(j))
		}
		s.drain(p.Node)
		if aware {
			s.advert(p.Node)
		}
	}
}

// drain hands node n's free slots to queued reservations, each sending a
// getTask.
func (s *traceSim) drain(n int32) {
	c := &s.mon[n].core
	for {
		r, ok := c.Next()
		if !ok {
			return
		}
		if sched, ok := shortjobs.PullScheduler(r.RequestID); ok {
			s.mon[n].pull.Fetching(sched)
			s.res.Fetches++
			s.res.PullFetches++
			s.h.pushFixed(event{t: s.now + s.half, key: uint64(tGetTask), node: n, slot: -1, task: pullProbe, jseq: -1})
			continue
		}
		seq := int(r.Tag >> 32)
		slot, jseq := int32(-1), int32(seq)
		if seq < len(s.seqSlot) {
			slot = s.seqSlot[seq]
		}
		s.res.Fetches++
		low := uint32(r.Tag)
		if low&^longBit == stickyProbe {
			s.res.StickyFetches++
		}
		if pol := s.mon[n].pol; pol != nil {
			pol.Fetching(class(low))
			s.advert(n)
		}
		s.h.pushFixed(event{t: s.now + s.half, key: uint64(tGetTask), node: n, slot: slot, task: int32(low), jseq: jseq})
	}
}

// getTask is the scheduler answering node n's fetch for probe low of job
// jseq, through placement.Request.
func (s *traceSim) getTask(n, slot int32, low uint32, jseq int32) {
	if low == pullProbe {
		s.answerPull(n)
		return
	}
	task := -1
	if slot >= 0 {
		j := &s.jobs[slot]
		switch {
		case !j.live || j.seq != jseq:
		case j.overran && s.shortOnly[n] && s.heldOffShortOnly(j):
			// A job taken long runs off the short-only share while it
			// has a reservation there; this one is used up unanswered.
			if low&^longBit != stickyProbe {
				j.req.DeclineAt(int(low &^ longBit))
			}
			s.res.OverrunDeclined++
		default:
			var ok bool
			if low&^longBit == stickyProbe {
				// A sticky fetch holds no reservation: the scheduler
				// files one for the node and answers it at once.
				j.req.AddProbes([]placement.Probe{{Node: s.nodes[n], Count: 1}})
				task, ok = j.req.Assign(s.nodes[n].Addr)
			} else {
				task, ok = j.req.AssignAt(int(low &^ longBit))
			}
			if !ok {
				task = -1
			} else if j.req.Launched() && !j.pending {
				s.sendCancel(slot)
			}
		}
	}
	if task < 0 {
		s.res.EmptyFetches++
		s.h.pushFixed(event{t: s.now + s.half, key: uint64(tReply), node: n, slot: -1, task: int32(low), jseq: jseq})
		return
	}
	s.launch(n, slot, int32(task))
}

// launch starts task on node n when the scheduler's answer arrives, RTT/2
// from now (see lateLaunch for why this needs no event of its own).
func (s *traceSim) launch(n, slot, task int32) {
	j := &s.jobs[slot]
	m := &s.mon[n]
	key := slots.TaskKey{RequestID: j.reqID, TaskID: s.tasks[task].ID}
	if !m.core.Started(key, simApp) {
		s.err = fmt.Errorf("sim: node %d: task %s/%s launched twice", n, key.RequestID, key.TaskID)
		return
	}
	at := s.now + s.half
	j.rem[task] = int32(j.req.Unlaunched())
	if m.pol != nil {
		// The answer tells the node the job's remaining work.
		m.pol.Launched(j.reqID, int(j.rem[task]), j.est)
		if s.cfg.Aware.WorkRefresh {
			s.refreshWork(n, j)
		}
	}
	if j.backlog {
		s.backlog.Set(j.reqID, remaining(j))
		j.backlog = s.backlog.Has(j.reqID)
		s.publishBacklog()
	}
	end := at + j.dur[task]
	j.lastEnd = max(j.lastEnd, end)
	s.rec.Task(j.mean, j.arrival/1000, at/1000, j.dur[task]/1000)
	if s.hooks.onStart != nil {
		s.hooks.onStart(n, j.seq, task)
	}
	if s.overruns(j, task) {
		s.h.push(event{t: at + s.simMS(s.cfg.Aware.Cutoff), key: uint64(tOverrun), node: n, slot: slot, task: task, jseq: j.seq})
	}
	s.h.push(event{t: end, key: uint64(tTaskDone), node: n, slot: slot, task: task, jseq: j.seq})
}

// overruns reports whether task of j is a short job's task that runs
// past the cutoff (so that its overrun comes before its end), which under Aware.Overrun its node counts as long
// work from the cutoff on.
func (s *traceSim) overruns(j *traceJob, task int32) bool {
	return s.cfg.Policy == TraceAware && s.cfg.Aware.Overrun && !j.long && j.dur[task] > s.simMS(s.cfg.Aware.Cutoff)
}

// overran is job jseq's scheduler learning that one of its tasks has run
// for the cutoff. A job that stated no estimate is taken as long from then
// on (shortjobs.OverrunEstimate): its remaining work, at the estimate of
// a long job, goes to the nodes holding its reservations (under
// Aware.WorkRefresh), it leaves the pull backlog, and getTasks from
// short-only nodes get none of its tasks.
func (s *traceSim) overran(slot, jseq int32) {
	j := &s.jobs[slot]
	if !j.live || j.seq != jseq || !j.guessed || j.overran || j.req.Unlaunched() == 0 {
		// A job with every task handed out has nothing left to place.
		return
	}
	j.overran = true
	s.res.OverrunLong++
	j.est = s.simMS(shortjobs.OverrunEstimate(s.cfg.Aware.Cutoff))
	if s.cfg.Aware.WorkRefresh {
		if err := s.holdersOf(j); err != nil {
			s.err = err
			return
		}
		w := remaining(j)
		for _, h := range s.holders {
			s.mon[h].pol.Queued(j.reqID, w)
			s.res.WorkUpdates++
		}
	}
	if j.backlog {
		s.backlog.Remove(j.reqID)
		j.backlog = false
		s.publishBacklog()
	}
}

// reply is an empty answer reaching node n: the held slot is freed.
func (s *traceSim) reply(n int32, low uint32) {
	m := &s.mon[n]
	m.core.Released()
	if low == pullProbe {
		s.pullAnswered(n, false)
		s.drain(n)
		return
	}
	if m.pol != nil {
		m.pol.NoTask(class(low))
		s.advert(n)
	}
	s.drain(n)
}

func (s *traceSim) taskDone(n, slot, task int32) {
	j := &s.jobs[slot]
	m := &s.mon[n]
	key := slots.TaskKey{RequestID: j.reqID, TaskID: s.tasks[task].ID}
	if !m.core.Finished(key) {
		s.err = fmt.Errorf("sim: node %d: finished task %s/%s was not running", n, key.RequestID, key.TaskID)
		return
	}
	if m.pol != nil {
		sticky := queue.Reservation{RequestID: j.reqID, App: simApp, Scheduler: simScheduler, Tag: tag(j, stickyProbe)}
		c, rem := class(uint32(sticky.Tag)), int(j.rem[task])
		if s.overruns(j, task) {
			c = shortjobs.Long
		}
		if m.pull != nil {
			rem = m.pull.Sticky(c, rem, float64(rem)*j.est)
		}
		m.pol.Ended(c, rem, sticky)
		s.advert(n)
		if s.hist != nil {
			s.hist.Observe(simApp, j.dur[task]*s.cfg.TimeScale/1000)
		}
	}
	j.left--
	if j.left == 0 {
		j.done = true
		s.rec.Job(int(j.seq), j.mean, j.arrival/1000, j.lastEnd/1000)
		if !j.pending {
			s.freeJob(slot)
		}
	}
	s.drain(n)
}

func (s *traceSim) freeJob(slot int32) {
	j := &s.jobs[slot]
	if j.backlog {
		s.backlog.Remove(j.reqID)
		j.backlog = false
		s.publishBacklog()
	}
	s.seqSlot[j.seq] = -1
	j.live = false
	s.free = append(s.free, slot)
}

// sendCancel sends cancellations to the nodes still holding reservations
// of the just-launched job.
func (s *traceSim) sendCancel(slot int32) {
	j := &s.jobs[slot]
	out := j.req.Outstanding()
	if len(out) == 0 {
		return
	}
	j.cancel = j.cancel[:0]
	for _, p := range out {
		i, err := strconv.Atoi(p.Node.Addr[1:])
		if err != nil {
			s.err = fmt.Errorf("sim: node address %q", p.Node.Addr)
			return
		}
		j.cancel = append(j.cancel, int32(i))
	}
	j.pending = true
	s.h.pushFixed(event{t: s.now + s.half, key: uint64(tCancel), node: -1, slot: slot, task: -1, jseq: j.seq})
}

func (s *traceSim) cancel(slot int32) {
	j := &s.jobs[slot]
	for _, n := range j.cancel {
		removed := s.mon[n].core.Cancel(j.reqID)
		s.res.Cancelled += int64(removed)
		if s.mon[n].pol != nil {
			s.advert(n)
		}
	}
	j.pending = false
	if j.done {
		s.freeJob(slot)
	}
}

// msDuration converts simulated ms to a Duration, for shortjobs.Puller.
func msDuration(ms float64) time.Duration { return time.Duration(ms * float64(time.Millisecond)) }

// backlogCheck runs PullAfter after job jseq arrived: if it still has
// unlaunched tasks, the scheduler adds it to its backlog.
func (s *traceSim) backlogCheck(slot, jseq int32) {
	j := &s.jobs[slot]
	if !j.live || j.seq != jseq || j.req.Unlaunched() == 0 || j.overran {
		return
	}
	s.backlog.Set(j.reqID, remaining(j))
	j.backlog = s.backlog.Has(j.reqID)
	s.publishBacklog()
}

// publishBacklog gossips the scheduler's backlog advert if it changed.
// The event carries the advert as 1 + its base-2 logarithm (0: none).
func (s *traceSim) publishBacklog() {
	_, least, ok := s.backlog.Least()
	w := shortjobs.AdvertWork(least, ok)
	if w == s.backlogAdvert {
		return
	}
	s.backlogAdvert = w
	s.res.BacklogAdverts++
	v := int32(0)
	if w > 0 {
		v = 1 + int32(math.Log2(w))
	}
	s.h.push(event{t: s.now + s.cfg.GossipDelay, key: uint64(tPullAdvert), node: -1, slot: -1, task: v, jseq: -1})
}

// advertWork decodes publishBacklog's event value.
func advertWork(v int32) float64 {
	if v <= 0 {
		return 0
	}
	return math.Exp2(float64(v - 1))
}

// pullAdvert is the scheduler's backlog advert reaching every node.
func (s *traceSim) pullAdvert(w float64) {
	id := shortjobs.PullRequestID(simScheduler)
	for n := range s.mon {
		m := &s.mon[n]
		if a := m.pull.Heard(simScheduler, w); a != shortjobs.PullNone {
			s.pullAct(int32(n), a)
		} else if m.pull.Queued(simScheduler) {
			m.pol.Queue().SetWork(id, w)
		}
	}
}

// pullAct applies a Puller's action to node n's queue.
func (s *traceSim) pullAct(n int32, a shortjobs.PullAction) {
	m := &s.mon[n]
	switch a {
	case shortjobs.PullQueue:
		r := m.pull.Reservation(simScheduler)
		if err := m.core.Enqueue(r, 1); err != nil {
			s.err = fmt.Errorf("sim: node %d: %w", n, err)
			return
		}
		m.pol.Queue().SetWork(r.RequestID, m.pull.Work(simScheduler))
		s.drain(n)
	case shortjobs.PullCancel:
		m.core.Cancel(shortjobs.PullRequestID(simScheduler))
	}
}

// answerPull is the scheduler answering node n's pull with a task of its
// backlogged job with the least remaining work, through that job's
// placement.Request as for a sticky fetch.
func (s *traceSim) answerPull(n int32) {
	for {
		id, _, ok := s.backlog.Least()
		if !ok {
			break
		}
		seq, err := strconv.Atoi(id)
		if err != nil || seq >= len(s.seqSlot) || s.seqSlot[seq] < 0 {
			s.backlog.Remove(id)
			continue
		}
		slot := s.seqSlot[seq]
		j := &s.jobs[slot]
		j.req.AddProbes([]placement.Probe{{Node: s.nodes[n], Count: 1}})
		task, ok := j.req.Assign(s.nodes[n].Addr)
		if !ok {
			s.backlog.Remove(id)
			j.backlog = false
			continue
		}
		if j.req.Launched() && !j.pending {
			s.sendCancel(slot)
		}
		s.res.PulledTasks++
		s.launch(n, slot, int32(task))
		s.pullAnswered(n, true)
		return
	}
	s.publishBacklog()
	s.res.EmptyFetches++
	s.h.pushFixed(event{t: s.now + s.half, key: uint64(tReply), node: n, slot: -1, task: pullProbe, jseq: -1})
}

// pullAnswered records the answer to node n's pull.
func (s *traceSim) pullAnswered(n int32, got bool) {
	m := &s.mon[n]
	s.pullAct(n, m.pull.Answered(simScheduler, got, msDuration(s.now)))
	if !got {
		if at, ok := m.pull.NextRetry(); ok {
			s.h.push(event{t: float64(at) / float64(time.Millisecond), key: uint64(tPullRetry), node: n, slot: -1, task: -1, jseq: -1})
		}
	}
}

// pullRetry queues node n's pulls whose retry delay has passed.
func (s *traceSim) pullRetry(n int32) {
	m := &s.mon[n]
	s.due = m.pull.Due(s.due[:0], msDuration(s.now))
	for range s.due {
		s.pullAct(n, shortjobs.PullQueue)
	}
}
