package sim

import (
	"fmt"
	"strconv"
	"unsafe"

	"github.com/sparrowfleet/sparrow/core/placement"
	"github.com/sparrowfleet/sparrow/core/queue"
	"github.com/sparrowfleet/sparrow/core/slots"
)

// simApp is the single application every simulated reservation is for.
const simApp = "sim"

// simScheduler is the scheduler address reservations carry. The simulator
// routes getTask by request, so it is informational.
const simScheduler = "scheduler:0"

// late is the late-binding policy's state: the product's placement and slot
// code, one slots.Core over a queue.FIFO per node monitor.
type late struct {
	nodes   []placement.Node
	addrIdx map[string]int32 // placement.Node.Addr -> node index
	// mon holds every node monitor's Core and FIFO side by side in one
	// slice, so that an event on a node touches adjacent memory rather
	// than two separately allocated objects.
	mon []monitor
	// rings lends the node monitors' FIFOs the arrays of their longest
	// queues: at any time only a few of thousands are long.
	rings   queue.RingPool
	sampler placement.Sampler
	tasks   []placement.Task // tasks[:m] is every job's task list (read only)
	// seqSlot[seq] is the job slot of live job seq, or -1. Request IDs are
	// the decimal job sequence number, so a reservation's job is found by
	// parsing its ID and indexing, not by hashing it into a map.
	seqSlot []int32
	// holdBase[seq] is the address of live job seq's first reservation
	// count (placement.Request.HoldAddr(0)) while it has tasks to hand
	// out, else 0: lateAheadHold finds a count to load from a
	// reservation's tag alone, without reading the job or its request.
	holdBase []uintptr
	// nextDur[seq] is the address of the duration of the task live job
	// seq launches next, if it hands out its tasks in order (as a job of
	// unconstrained tasks does), for lateAheadHold to load with the
	// reservation count. A hint: any value is safe.
	nextDur []uintptr

	// chainEmpty says a node monitor answers, at once, the getTasks
	// of the reservations at the head of its queue whose jobs can only
	// answer none (chainEmpties).
	chainEmpty bool

	reservations int64 // reservations enqueued on node monitors
	fetches      int64 // getTask calls (a reservation reached a free slot)
	empty        int64 // getTask calls answered with no task
	cancelled    int64 // queued reservations removed by cancellation
}

// monitor is one simulated node monitor: the product's slots.Core over
// the product's queue.FIFO. Its size is a multiple of a cache line, so
// that in a line-aligned slice (a slice of thousands of monitors starts on
// a page) every monitor's Core header, FIFO header and first ring entries
// sit on the same few lines (touchLines).
type monitor struct {
	core slots.Core
	fifo queue.FIFO
	_    [(64 - (unsafe.Sizeof(slots.Core{})+unsafe.Sizeof(queue.FIFO{}))%64) % 64]byte
}

// touchAhead is how many picks ahead lateEnqueue prefetches a node
// monitor's memory, so that the cache misses of several node monitors
// overlap instead of following one another.
const touchAhead = 8

// touchLines is how many 64-byte lines of a monitor touch loads: the
// slots.Core's fields and the FIFO's header (the first three lines) and
// the first four entries of its inline ring, where a short queue's head
// usually is (the ring restarts at its first entry whenever it empties).
// Each line loaded ahead holds one of the few outstanding-miss buffers
// the CPU has, so loading the rest of a monitor costs more than the
// misses it would save.
const touchLines = 5

// touch starts loading the start of node n's Core and FIFO into the cache
// (see prefetch), without waiting for them.
func (lt *late) touch(n int32) {
	m := &lt.mon[n]
	a := uintptr(unsafe.Pointer(m))
	prefetch(a, min((a+unsafe.Sizeof(*m)-1)/64-a/64+1, touchLines))
}

// core returns node n's slots.Core.
func (lt *late) core(n int32) *slots.Core { return &lt.mon[n].core }

// NodeAddr is the placement.Node.Addr the simulator gives node i.
func NodeAddr(i int) string { return "n" + strconv.Itoa(i) }

func newLate(cfg Config) (*late, error) {
	lt := &late{
		nodes:   make([]placement.Node, cfg.Nodes),
		addrIdx: make(map[string]int32, cfg.Nodes),
		mon:     make([]monitor, cfg.Nodes),
		tasks:   make([]placement.Task, cfg.Tasks),
		// With one slot only the held slot's own reply pops the queue,
		// and without cancellation nothing else removes a reservation;
		// with no delay the replies would be due now, among events
		// already pending; with durations of positive probability
		// other events meet the replies' times (see chainEmpties).
		chainEmpty: cfg.Slots == 1 && !cfg.Cancel && cfg.RTT > 0 && cfg.Dist.continuous(),
	}
	adviseHugePages(unsafe.Pointer(unsafe.SliceData(lt.mon)))
	for i := range lt.nodes {
		a := NodeAddr(i)
		lt.nodes[i] = placement.Node{Addr: a, Host: a, Name: a}
		lt.addrIdx[a] = int32(i)
		m := &lt.mon[i]
		m.fifo.SetRingPool(&lt.rings)
		c := &m.core
		if err := c.Init(cfg.Slots, &m.fifo); err != nil {
			return nil, err
		}
		c.AddApp(simApp)
	}
	for i := range lt.tasks {
		lt.tasks[i] = placement.Task{ID: strconv.Itoa(i)}
	}
	return lt, nil
}

// nodeIndex returns the index of the node with address addr. Addresses are
// NodeAddr(i), so it parses i and checks, without a map lookup.
func (lt *late) nodeIndex(addr string) (int32, bool) {
	if len(addr) > 1 && addr[0] == 'n' {
		if i, err := strconv.Atoi(addr[1:]); err == nil && i >= 0 && i < len(lt.nodes) && lt.nodes[i].Addr == addr {
			return int32(i), true
		}
	}
	i, ok := lt.addrIdx[addr]
	return i, ok
}

// lateArrival plans the job's reservations with placement.Sampler.Plan, on
// the placement stream, and opens its placement.Request.
func (s *sim) lateArrival(slot int32) {
	lt := s.lt
	j := &s.jobs[slot]
	j.reqID = strconv.Itoa(int(j.seq))
	j.cancelPending = false
	tasks := lt.tasks[:s.m]
	if j.picks == nil {
		// At most one pick per reservation: the list never regrows.
		j.picks = make([]placement.Pick, 0, min(placement.Reservations(s.cfg.ProbeRatio, s.m), len(lt.nodes)))
	}
	picks, err := lt.sampler.PlanPicks(j.picks[:0], s.place, lt.nodes, tasks, s.cfg.ProbeRatio)
	j.picks = picks
	if err != nil {
		s.err = fmt.Errorf("sim: plan job %d: %w", j.seq, err)
		return
	}
	for _, p := range picks {
		if p.Count <= 0 {
			// PlanPicks merges a node's reservations into one pick with a
			// positive count; the reservation handles rely on it.
			s.err = fmt.Errorf("sim: placement chose %d reservations on node %d", p.Count, p.Node)
			return
		}
	}
	if s.hooks.onPlan != nil {
		probes := make([]placement.Probe, len(picks))
		for k, p := range picks {
			probes[k] = placement.Probe{Node: lt.nodes[p.Node], Count: int(p.Count)}
		}
		s.hooks.onPlan(j.seq, probes)
	}
	if j.req == nil {
		j.req = placement.NewRequest(j.reqID, tasks)
	} else {
		j.req.Reset(j.reqID, tasks)
	}
	// lt.nodes never changes, as AddPicks requires.
	j.req.AddPicks(lt.nodes, picks)
	for int(j.seq) >= len(lt.seqSlot) {
		lt.seqSlot = append(lt.seqSlot, -1)
		lt.holdBase = append(lt.holdBase, 0)
		lt.nextDur = append(lt.nextDur, 0)
	}
	lt.seqSlot[j.seq] = slot
	lt.holdBase[j.seq] = j.req.HoldAddr(0)
	lt.nextDur[j.seq] = uintptr(unsafe.Pointer(unsafe.SliceData(j.dur)))
	// Not on the agenda's fixed-delay FIFO, which holds the late
	// policy's round-trip events (replies, cancellations).
	s.schedule(s.now+s.half, evEnqueue, -1, slot, -1, j.seq)
}

// lateEnqueue delivers the job's reservations (sent together, so arriving
// together) to their node monitors.
func (s *sim) lateEnqueue(slot int32) {
	lt := s.lt
	j := &s.jobs[slot]
	r := queue.Reservation{RequestID: j.reqID, App: simApp, Scheduler: simScheduler}
	picks := j.picks
	for k, p := range picks {
		n, c := p.Node, int(p.Count)
		if k+touchAhead < len(picks) {
			lt.touch(picks[k+touchAhead].Node)
		}
		// The tag names the job and the probe, which is also the probe's
		// placement.Request reservation handle (one probe per node, all
		// with positive counts, passed to AddProbes in this order).
		r.Tag = uint64(uint32(j.seq))<<32 | uint64(uint32(k))
		if err := lt.core(n).EnqueueFrom(&r, c); err != nil {
			s.err = fmt.Errorf("sim: node %d: %w", n, err)
			return
		}
		lt.reservations += int64(c)
		s.lateDrain(n, 0)
	}
}

// lateDrain hands reservations to free slots on node n: each held slot sends
// a getTask that reaches the scheduler RTT/2 later (lateGetTask). lineage is
// the key of the empty reply being handled, if the drain follows one, else
// 0 (see chainEmpties).
func (s *sim) lateDrain(n int32, lineage uint64) {
	lt := s.lt
	c := lt.core(n)
	var r queue.Reservation
	for c.NextInto(&r) {
		lt.fetches++
		s.lateGetTask(n, r.Tag, lineage)
	}
}

// nodeAhead and holdAhead are how many round-trip events ahead of the
// current one lateAhead loads a reply's node monitor, and the reservation
// count its next getTask will read. The second is read from the node's
// queue, so it comes after the first has had time to arrive.
const (
	nodeAhead = 8
	holdAhead = 4
)

// lateAhead prefetches for the replies coming on the agenda's fixed-delay
// FIFO, in two stages: a reply's node monitor nodeAhead events ahead, and
// holdAhead events ahead the reservation count that placement.Request.Assign
// will read for the reservation at the head of its queue (lateAheadHold).
// Every reply goes through the FIFO, in order, so each is prefetched about
// once, some events before it frees its slot.
func (s *sim) lateAhead() {
	if e := s.h.peekFixed(nodeAhead); e != nil && e.kind() == evReply {
		s.lt.touch(e.node)
	}
	if e := s.h.peekFixed(holdAhead); e != nil && e.kind() == evReply {
		s.lateAheadHold(e.node)
	}
}

// lateAheadDone prefetches for the next task ends and chained empty
// replies (chainEmpties), the late policy's events on the timing wheel
// that concern a node, in the same two stages: the node monitor of the
// one doneNodeAhead events ahead, and the reservation count for the head
// of the queue of the next one, whose node an earlier event loaded.
func (s *sim) lateAheadDone() {
	if e := s.h.peekWheel(doneNodeAhead); e != nil && e.node >= 0 {
		s.lt.touch(e.node)
	}
	if e := s.h.peekTimed(); e != nil && e.node >= 0 {
		s.lateAheadHold(e.node)
	}
}

// doneNodeAhead is how many task ends ahead lateAheadDone loads a node
// monitor.
const doneNodeAhead = 2

// lateAheadHold starts loading the reservation count that the getTask for
// the reservation at the head of node n's queue will read (HoldAddr), at
// random in one of a hundred-odd live jobs' thousand-entry tables, and
// the duration of the task it will launch (nextDur). It reads the head of
// n's queue, so n should be loading already.
func (s *sim) lateAheadHold(n int32) {
	lt := s.lt
	tag, ok := lt.mon[n].fifo.HeadTag()
	if !ok {
		return
	}
	if seq := int(tag >> 32); seq < len(lt.holdBase) {
		if b := lt.holdBase[seq]; b != 0 {
			prefetch2(b+uintptr(uint32(tag))*placement.HoldStride, lt.nextDur[seq])
		}
	}
}

// lateGetTask is the scheduler answering node n's getTask for the
// reservation of this tag, sent now, through placement.Request.Assign. A
// request the scheduler has forgotten (the job finished) gets no task, as
// in the daemon, and so does one whose tasks have all been launched,
// without asking it: Assign could only answer none. holdBase records both
// as 0 (answersNone), so such a getTask reads neither the job nor its
// request.
//
// The getTask reaches the scheduler RTT/2 from now, but it is answered
// here, when it is sent, which saves an event per getTask and changes
// nothing simulated. Every getTask takes the same RTT/2, so the getTasks
// the scheduler answers before this one are exactly those sent before it,
// and nothing else that happens in between changes the answer: a job's
// request is opened before any of its reservations is sent, and a job
// that finishes in between had every task launched, so it answers none
// either way. What the answer causes is timed from the getTask's arrival:
// the task starts, or the empty reply reaches node n, one hop after it.
func (s *sim) lateGetTask(n int32, tag uint64, lineage uint64) {
	lt := s.lt
	if !lt.answersNone(tag) {
		jseq := int32(tag >> 32)
		slot := lt.seqSlot[jseq]
		j := &s.jobs[slot]
		i, ok := j.req.AssignAt(int(uint32(tag)))
		if s.hooks.onAssign != nil {
			s.hooks.onAssign(jseq, lt.nodes[n].Addr, i, ok)
		}
		if ok {
			if j.req.Launched() {
				lt.holdBase[jseq] = 0
				if s.cfg.Cancel {
					s.lateSendCancel(slot)
				}
			}
			s.lateLaunch(n, slot, int32(i))
			return
		}
	}
	lt.empty++
	if lt.chainEmpty {
		s.chainEmpties(n, lineage)
		return
	}
	slot, jseq := int32(-1), int32(-1)
	if seq := int(tag >> 32); seq < len(lt.seqSlot) && lt.seqSlot[seq] >= 0 {
		slot, jseq = lt.seqSlot[seq], int32(seq)
	}
	s.scheduleRoundTrip(evReply, n, slot, -1, jseq)
}

// chainEmpties schedules the empty reply to the getTask node n sent now,
// after answering at once the getTasks of the reservations behind it
// whose jobs can only answer none (answersNone): each would be sent when
// the reply before it frees the slot, a round trip later, and get an empty
// reply itself. One event, at the last reply, stands for the chain.
//
// This needs a node of one slot and no cancellations (late.chainEmpty):
// then nothing pops or removes the reservations at the head of the queue
// while the slot is held, reservations that arrive meanwhile queue behind
// them, and a job that can answer none never can again. The times are the
// same float sums as one reply after another.
//
// The chain's event keeps the key of the first empty reply of its lineage
// (the replies that followed one another on this node), so that among
// events due at one time it runs where the last reply of a lineage
// unchained would. With durations of no positive probability
// (Dist.continuous), the events due at the time of a reply are, float
// sums that happen to meet aside, replies of lineages started at one
// time, and unchained those run in the order their first replies were
// pushed, since each reply is pushed while the one before it runs.
func (s *sim) chainEmpties(n int32, lineage uint64) {
	lt := s.lt
	at := (s.now + s.half) + s.half
	if lineage == 0 || at <= s.now {
		// A new lineage; or a round trip too short to move the clock,
		// whose reply is due among the events pending now.
		lineage = s.h.newKey(uint64(evReply))
	}
	c, f := lt.core(n), &lt.mon[n].fifo
	chained := false
	var r queue.Reservation
	for {
		tag, ok := f.HeadTag()
		if !ok || !lt.answersNone(tag) {
			break
		}
		next := (at + s.half) + s.half
		if next <= at {
			break // a round trip too short to move the clock
		}
		c.Released()
		c.NextInto(&r)
		lt.fetches++
		lt.empty++
		at = next
		chained = true
	}
	if chained {
		s.h.pushKeyedAt(at, lineage, n, -1, -1, -1)
	} else {
		s.h.pushFixedKeyedAt(at, lineage, n, -1, -1, -1)
	}
}

// answersNone reports whether a getTask for the reservation of this tag,
// sent now or later, gets no task: its job has handed out every task or
// is gone, which holdBase records as 0 for good. Otherwise the job is
// live, in job slot seqSlot[seq], and its request has a task to assign.
func (lt *late) answersNone(tag uint64) bool {
	seq := int(tag >> 32)
	return seq >= len(lt.holdBase) || lt.holdBase[seq] == 0
}

// scheduleRoundTrip schedules an event one hop after a message sent now
// reaches its peer: at (now + RTT/2) + RTT/2, the same float sum as two
// hops scheduled one after the other. The late policy puts only these on
// the agenda's fixed-delay FIFO, so they arrive there in order.
func (s *sim) scheduleRoundTrip(kind uint8, node, slot, task, jseq int32) {
	s.h.pushFixedAt((s.now+s.half)+s.half, uint64(kind), node, slot, task, jseq)
}

// lateLaunch is the scheduler's task reaching node n, which starts it in
// the slot held for the fetch: at the reply's arrival, a round trip after
// the getTask was sent (now). It is done here, when the scheduler answers,
// rather than as an event of its own, which saves one event per task and
// changes nothing simulated:
// slots.Core counts a fetching slot and a running one alike as taken, so
// nothing that reaches node n before the reply (a reservation, a
// cancellation, another slot's task ending) sees a difference, and the
// drain that would follow the start has no free slot to fill.
func (s *sim) lateLaunch(n, slot, task int32) {
	lt := s.lt
	j := &s.jobs[slot]
	key := slots.TaskKey{RequestID: j.reqID, TaskID: lt.tasks[task].ID}
	if !lt.core(n).Started(key, simApp) {
		s.err = fmt.Errorf("sim: node %d: task %s/%s launched twice", n, key.RequestID, key.TaskID)
		return
	}
	at := (s.now + s.half) + s.half
	lt.nextDur[j.seq] = uintptr(unsafe.Pointer(&j.dur[min(int(task)+1, len(j.dur)-1)]))
	s.startedAt(j, n, task, at)
	s.schedule(at+j.dur[task], evTaskDone, n, slot, task, j.seq)
}

// lateSendCancel sends cancellations to every node monitor still holding a
// reservation of the just-launched job (placement.Request.Outstanding), when
// the getTask that launched its last task reaches the scheduler.
func (s *sim) lateSendCancel(slot int32) {
	lt := s.lt
	j := &s.jobs[slot]
	out := j.req.Outstanding()
	if len(out) == 0 {
		return
	}
	j.cancelNode = j.cancelNode[:0]
	for _, p := range out {
		n, _ := lt.nodeIndex(p.Node.Addr)
		j.cancelNode = append(j.cancelNode, n)
	}
	j.cancelPending = true
	s.scheduleRoundTrip(evCancel, -1, slot, -1, j.seq)
}

// lateReply is the scheduler's empty answer reaching node n: the slot
// held for the fetch is freed. (A reply with a task is lateLaunch.)
// key is the reply event's (see chainEmpties).
func (s *sim) lateReply(n int32, key uint64) {
	s.lt.core(n).Released()
	s.lateDrain(n, key)
}

func (s *sim) lateTaskDone(n, slot, task int32) {
	lt := s.lt
	j := &s.jobs[slot]
	key := slots.TaskKey{RequestID: j.reqID, TaskID: lt.tasks[task].ID}
	if !lt.core(n).Finished(key) {
		s.err = fmt.Errorf("sim: node %d: finished task %s/%s was not running", n, key.RequestID, key.TaskID)
		return
	}
	s.finishTask(slot)
	s.lateDrain(n, 0)
}

// lateCancel delivers a job's cancellations (slots.Core.Cancel) to the nodes
// that held reservations when its last task was launched.
func (s *sim) lateCancel(slot int32) {
	lt := s.lt
	j := &s.jobs[slot]
	for _, n := range j.cancelNode {
		lt.cancelled += int64(lt.core(n).Cancel(j.reqID))
	}
	j.cancelPending = false
	if j.done {
		s.freeJob(slot)
	}
}
