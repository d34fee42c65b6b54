package sim

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"unsafe"

	"github.com/sparrowfleet/sparrow/core/placement"
)

// Event kinds.
const (
	evArrival   uint8 = iota // a job reaches its scheduler
	evProbe                  // pertask/batch: the job's probes reach their nodes
	evLaunchJob              // random/pertask/batch: the job's tasks reach their nodes
	evTaskDone               // a task finishes on a node (or, omniscient, a slot)
	evEnqueue                // late: the job's reservations reach their nodes
	evReply                  // late: the scheduler's empty reply reaches the node
	evCancel                 // late: the job's cancellations reach their nodes
)

// PCG stream selectors: the workload stream is shared by every policy, so
// all policies at a load see the same jobs (common random numbers).
const (
	workStream  = 0x5eed_0001
	placeStream = 0x5eed_0002
)

func newWorkRNG(seed uint64) *rand.Rand  { return rand.New(rand.NewPCG(seed, workStream)) }
func newPlaceRNG(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, placeStream)) }

// zeroWaitEps absorbs float rounding when comparing a start time with the
// earliest possible one.
const zeroWaitEps = 1e-6 // ms

// taskRef names one task of one live job.
type taskRef struct{ slot, task int32 }

// refQueue is a FIFO of taskRefs over a reused slice.
type refQueue struct {
	buf  []taskRef
	head int
}

func (q *refQueue) len() int { return len(q.buf) - q.head }

func (q *refQueue) push(r taskRef) {
	if q.head >= 32 && 2*q.head >= len(q.buf) {
		n := copy(q.buf, q.buf[q.head:])
		q.buf = q.buf[:n]
		q.head = 0
	}
	q.buf = append(q.buf, r)
}

func (q *refQueue) pop() (taskRef, bool) {
	if q.head == len(q.buf) {
		return taskRef{}, false
	}
	r := q.buf[q.head]
	q.head++
	if q.head == len(q.buf) {
		q.buf = q.buf[:0]
		q.head = 0
	}
	return r, true
}

// job is one live job. Slots in sim.jobs are recycled, with their slices.
type job struct {
	seq      int32
	live     bool
	long     bool
	measured bool
	zeroWait bool // no task has waited beyond the policy's network delay
	done     bool // every task finished
	arrival  float64
	maxDur   float64
	lastEnd  float64 // latest finish time of the tasks started so far
	left     int32   // unfinished tasks
	waiting  int32   // tasks not started yet
	dur      []float64
	target   []int32 // random/pertask/batch: node of each task

	// late binding
	req           *placement.Request
	reqID         string
	picks         []placement.Pick // where the reservations went (one per node)
	cancelNode    []int32
	cancelPending bool
}

type sim struct {
	cfg      Config
	now      float64
	h        agenda
	work     *rand.Rand
	place    *rand.Rand
	half     float64 // one-way delay, ms
	minDelay float64 // network delay before a task can start, ms
	meanGap  float64 // mean time between arrivals, ms
	m        int
	err      error

	jobs      []job
	freeSlots []int32
	nextSeq   int32

	// random/pertask/batch node state, indexed by node.
	running []int32
	nq      []refQueue
	perm    []int32 // scratch permutation for sampling distinct nodes
	extra   []int32 // pertask: tasks this job already sent to a node
	touched []int32
	cand    []cand

	// omniscient
	freeAll int
	gq      refQueue

	// late binding
	lt *late

	// measurement
	measuredDone int
	resp         []float64 // by measured index (seq - warmup)
	opt          []float64
	zero         []bool
	long         []bool
	tasks        int64 // tasks started
	events       int64

	hooks hooks
}

// hooks let tests observe the engine; all nil in production.
type hooks struct {
	onPlan   func(jseq int32, probes []placement.Probe)
	onAssign func(jseq int32, addr string, task int, ok bool)
	onStart  func(node int32, jseq int32, task int32)
	onFinish func(node int32, jseq int32, task int32)
}

type cand struct {
	load  int32
	order int32
	node  int32
}

func newSim(cfg Config) (*sim, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	s := &sim{
		cfg:     cfg,
		work:    newWorkRNG(cfg.Seed),
		place:   newPlaceRNG(cfg.Seed),
		half:    cfg.RTT / 2,
		meanGap: 1 / cfg.ArrivalRate(),
		m:       cfg.Tasks,
		resp:    make([]float64, cfg.Jobs),
		opt:     make([]float64, cfg.Jobs),
		zero:    make([]bool, cfg.Jobs),
	}
	if cfg.Long.Fraction > 0 {
		s.long = make([]bool, cfg.Jobs)
	}
	// Most timed events are task ends, about one per slot, spread over
	// a task's duration; a bucket of twice their mean gap holds a few.
	s.h.useWheel(2 * cfg.Dist.MeanMS() / float64(cfg.Nodes*cfg.Slots))
	n := cfg.Nodes
	switch cfg.Policy {
	case Random:
		s.minDelay = s.half
		s.running = make([]int32, n)
		s.nq = make([]refQueue, n)
	case PerTask, Batch:
		s.minDelay = cfg.RTT + s.half
		s.running = make([]int32, n)
		s.nq = make([]refQueue, n)
		s.perm = make([]int32, n)
		for i := range s.perm {
			s.perm[i] = int32(i)
		}
		s.extra = make([]int32, n)
	case Omniscient:
		s.freeAll = n * cfg.Slots
	case Late:
		s.minDelay = cfg.RTT + s.half
		lt, err := newLate(cfg)
		if err != nil {
			return nil, err
		}
		s.lt = lt
	}
	return s, nil
}

func (s *sim) schedule(t float64, kind uint8, node, slot, task, jseq int32) {
	s.h.pushAt(t, uint64(kind), node, slot, task, jseq)
}

// scheduleHalf schedules an event one network hop (RTT/2) from now. These
// go on the agenda's FIFO, which keeps them in order without a heap.
func (s *sim) scheduleHalf(kind uint8, node, slot, task, jseq int32) {
	s.h.pushFixedAt(s.now+s.half, uint64(kind), node, slot, task, jseq)
}

func (s *sim) run() error {
	s.schedule(s.work.ExpFloat64()*s.meanGap, evArrival, -1, -1, -1, -1)
	for s.measuredDone < s.cfg.Jobs && s.err == nil {
		e := s.h.pop()
		s.now = e.t
		s.events++
		switch e.kind() {
		case evArrival:
			s.arrival()
		case evProbe:
			if s.cfg.Policy == PerTask {
				s.probePerTask(e.slot)
			} else {
				s.probeBatch(e.slot)
			}
			s.schedule(s.now+s.cfg.RTT, evLaunchJob, -1, e.slot, -1, e.jseq)
		case evLaunchJob:
			s.launchJob(e.slot)
		case evTaskDone:
			if s.lt != nil {
				s.lateAheadDone()
			}
			s.taskDone(e.node, e.slot, e.task)
		case evEnqueue:
			s.lateEnqueue(e.slot)
		case evReply:
			s.lateAhead()
			s.lateReply(e.node, e.key)
		case evCancel:
			s.lateCancel(e.slot)
		default:
			return fmt.Errorf("sim: unknown event kind %d", e.kind())
		}
	}
	return s.err
}

func (s *sim) newJob() int32 {
	if k := len(s.freeSlots); k > 0 {
		slot := s.freeSlots[k-1]
		s.freeSlots = s.freeSlots[:k-1]
		return slot
	}
	s.jobs = append(s.jobs, job{})
	return int32(len(s.jobs) - 1)
}

func (s *sim) freeJob(slot int32) {
	j := &s.jobs[slot]
	if s.lt != nil {
		if int(j.seq) < len(s.lt.seqSlot) {
			s.lt.seqSlot[j.seq] = -1
			s.lt.holdBase[j.seq] = 0
		}
	}
	j.live = false
	j.reqID = "" // j.req is kept, to be Reset by the slot's next job
	s.freeSlots = append(s.freeSlots, slot)
}

// arrival creates the next job, draws its durations from the workload
// stream, schedules the following arrival and hands the job to the policy.
func (s *sim) arrival() {
	slot := s.newJob()
	j := &s.jobs[slot]
	seq := s.nextSeq
	s.nextSeq++
	j.seq = seq
	j.live = true
	j.done = false
	j.arrival = s.now
	j.measured = int(seq) >= s.cfg.Warmup && int(seq) < s.cfg.Warmup+s.cfg.Jobs
	j.zeroWait = true
	j.left = int32(s.m)
	j.waiting = int32(s.m)
	j.lastEnd = 0
	mean := s.cfg.Dist.Mean
	j.long = false
	if s.cfg.Long.Fraction > 0 && s.work.Float64() < s.cfg.Long.Fraction {
		j.long = true
		mean = s.cfg.Long.Mean
	}
	if cap(j.dur) < s.m {
		j.dur = make([]float64, s.m)
		// A new job slot: the heap is still growing, into memory that
		// the last advice may not have covered.
		adviseHugePages(unsafe.Pointer(unsafe.SliceData(j.dur)))
	}
	j.dur = j.dur[:s.m]
	j.maxDur = 0
	for i := range j.dur {
		d := s.cfg.Dist.sample(s.work, mean)
		j.dur[i] = d
		j.maxDur = max(j.maxDur, d)
	}
	s.schedule(s.now+s.work.ExpFloat64()*s.meanGap, evArrival, -1, -1, -1, -1)

	switch s.cfg.Policy {
	case Random:
		j.target = resize(j.target, s.m)
		n := s.cfg.Nodes
		for i := range j.target {
			j.target[i] = int32(s.place.IntN(n))
		}
		s.scheduleHalf(evLaunchJob, -1, slot, -1, seq)
	case PerTask, Batch:
		j.target = resize(j.target, s.m)
		s.scheduleHalf(evProbe, -1, slot, -1, seq)
	case Omniscient:
		for i := 0; i < s.m; i++ {
			s.gq.push(taskRef{slot, int32(i)})
		}
		s.omniStart()
	case Late:
		s.lateArrival(slot)
	}
}

func resize(b []int32, n int) []int32 {
	if cap(b) < n {
		return make([]int32, n)
	}
	return b[:n]
}

// sampleDistinct leaves k distinct uniformly random node indices in
// s.perm[:k], by a partial Fisher-Yates shuffle; s.perm stays a permutation.
func (s *sim) sampleDistinct(k int) []int32 {
	p := s.perm
	n := len(p)
	for i := 0; i < k; i++ {
		r := i + s.place.IntN(n-i)
		p[i], p[r] = p[r], p[i]
	}
	return p[:k]
}

func (s *sim) load(n int32) int32 { return s.running[n] + int32(s.nq[n].len()) }

// probePerTask places each task on the least loaded (queued + running) of
// ceil(d) distinct random nodes, as reported when the probes arrive. The
// scheduler counts the tasks it has itself just placed on a node, since it
// knows about them; ties go to the first node sampled.
func (s *sim) probePerTask(slot int32) {
	j := &s.jobs[slot]
	k := min(placement.Reservations(s.cfg.ProbeRatio, 1), s.cfg.Nodes)
	for i := range j.target {
		best, bestLoad := int32(-1), int32(0)
		for _, n := range s.sampleDistinct(k) {
			l := s.load(n) + s.extra[n]
			if best < 0 || l < bestLoad {
				best, bestLoad = n, l
			}
		}
		j.target[i] = best
		if s.extra[best] == 0 {
			s.touched = append(s.touched, best)
		}
		s.extra[best]++
	}
	for _, n := range s.touched {
		s.extra[n] = 0
	}
	s.touched = s.touched[:0]
}

// probeBatch places the job's m tasks one per node on the m least loaded of
// ceil(d*m) distinct random nodes (all nodes if there are fewer), as
// reported when the probes arrive; ties go to the node sampled first.
func (s *sim) probeBatch(slot int32) {
	j := &s.jobs[slot]
	k := min(placement.Reservations(s.cfg.ProbeRatio, s.m), s.cfg.Nodes)
	c := s.cand[:0]
	for i, n := range s.sampleDistinct(k) {
		c = append(c, cand{load: s.load(n), order: int32(i), node: n})
	}
	slices.SortFunc(c, func(a, b cand) int {
		if a.load != b.load {
			return int(a.load - b.load)
		}
		return int(a.order - b.order)
	})
	for i := range j.target {
		j.target[i] = c[i].node
	}
	s.cand = c
}

// launchJob delivers a job's tasks to their nodes' queues (random, pertask,
// batch); a task starts at once if its node has a free slot.
func (s *sim) launchJob(slot int32) {
	j := &s.jobs[slot]
	for i, n := range j.target {
		if s.running[n] < int32(s.cfg.Slots) {
			s.start(n, slot, int32(i))
		} else {
			s.nq[n].push(taskRef{slot, int32(i)})
		}
	}
}

// start runs a task from now on node n (n = -1 under omniscient).
func (s *sim) start(n, slot, task int32) {
	j := &s.jobs[slot]
	if n >= 0 {
		s.running[n]++
	}
	s.started(j, n, task)
	s.schedule(s.now+j.dur[task], evTaskDone, n, slot, task, j.seq)
}

// started does the bookkeeping shared by every policy when a task starts.
// Tasks run to completion undisturbed, so once every task of a job has
// started its response time is known: the latest start + duration. The
// job is measured then, and the run ends as soon as every measured job is,
// without simulating the tail of their longest tasks.
func (s *sim) started(j *job, n, task int32) { s.startedAt(j, n, task, s.now) }

// startedAt is started for a task that starts at time at, not before now.
func (s *sim) startedAt(j *job, n, task int32, at float64) {
	s.tasks++
	if at-j.arrival-s.minDelay > zeroWaitEps {
		j.zeroWait = false
	}
	j.lastEnd = max(j.lastEnd, at+j.dur[task])
	j.waiting--
	if j.waiting == 0 && j.measured {
		i := int(j.seq) - s.cfg.Warmup
		s.resp[i] = j.lastEnd - j.arrival
		s.opt[i] = j.maxDur
		s.zero[i] = j.zeroWait
		if s.long != nil {
			s.long[i] = j.long
		}
		s.measuredDone++
	}
	if s.hooks.onStart != nil {
		s.hooks.onStart(n, j.seq, task)
	}
}

func (s *sim) taskDone(n, slot, task int32) {
	if s.hooks.onFinish != nil {
		s.hooks.onFinish(n, s.jobs[slot].seq, task)
	}
	switch s.cfg.Policy {
	case Late:
		s.lateTaskDone(n, slot, task)
		return
	case Omniscient:
		s.freeAll++
		s.finishTask(slot)
		s.omniStart()
		return
	}
	s.running[n]--
	s.finishTask(slot)
	if r, ok := s.nq[n].pop(); ok {
		s.start(n, r.slot, r.task)
	}
}

// omniStart starts queued tasks on free slots, in global FIFO order.
func (s *sim) omniStart() {
	for s.freeAll > 0 {
		r, ok := s.gq.pop()
		if !ok {
			return
		}
		s.freeAll--
		s.start(-1, r.slot, r.task)
	}
}

// finishTask records one finished task of a job and frees the job after
// its last. It reports whether the job is now done.
func (s *sim) finishTask(slot int32) bool {
	j := &s.jobs[slot]
	j.left--
	if j.left > 0 {
		return false
	}
	j.done = true
	if !j.cancelPending {
		s.freeJob(slot)
	}
	return true
}

// Run simulates one point.
func Run(cfg Config) (Result, error) {
	s, err := newSim(cfg)
	if err != nil {
		return Result{}, err
	}
	if err := s.run(); err != nil {
		return Result{}, err
	}
	return s.result(), nil
}
