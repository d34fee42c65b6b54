package sim

import (
	"fmt"
	"strconv"

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
	cores   []*slots.Core
	sampler placement.Sampler
	tasks   []placement.Task // tasks[:m] is every job's task list (read only)
	// seqSlot[seq] is the job slot of live job seq, or -1. Request IDs are
	// the decimal job sequence number, so a reservation's job is found by
	// parsing its ID and indexing, not by hashing it into a map.
	seqSlot []int32

	reservations int64 // reservations enqueued on node monitors
	fetches      int64 // getTask calls (a reservation reached a free slot)
	empty        int64 // getTask calls answered with no task
	cancelled    int64 // queued reservations removed by cancellation
}

// NodeAddr is the placement.Node.Addr the simulator gives node i.
func NodeAddr(i int) string { return "n" + strconv.Itoa(i) }

func newLate(cfg Config) (*late, error) {
	lt := &late{
		nodes:   make([]placement.Node, cfg.Nodes),
		addrIdx: make(map[string]int32, cfg.Nodes),
		cores:   make([]*slots.Core, cfg.Nodes),
		tasks:   make([]placement.Task, cfg.Tasks),
	}
	for i := range lt.nodes {
		a := NodeAddr(i)
		lt.nodes[i] = placement.Node{Addr: a, Host: a, Name: a}
		lt.addrIdx[a] = int32(i)
		c, err := slots.New(cfg.Slots, queue.NewFIFO())
		if err != nil {
			return nil, err
		}
		c.AddApp(simApp)
		lt.cores[i] = c
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

// slotOf returns the job slot of the live request id, or -1.
func (lt *late) slotOf(id string) int32 {
	seq, err := strconv.Atoi(id)
	if err != nil || seq < 0 || seq >= len(lt.seqSlot) {
		return -1
	}
	return lt.seqSlot[seq]
}

// lateArrival plans the job's reservations with placement.Sampler.Plan, on
// the placement stream, and opens its placement.Request.
func (s *sim) lateArrival(slot int32) {
	lt := s.lt
	j := &s.jobs[slot]
	j.reqID = strconv.Itoa(int(j.seq))
	j.cancelPending = false
	tasks := lt.tasks[:s.m]
	probes, err := lt.sampler.Plan(s.place, lt.nodes, tasks, s.cfg.ProbeRatio)
	if err != nil {
		s.err = fmt.Errorf("sim: plan job %d: %w", j.seq, err)
		return
	}
	if s.hooks.onPlan != nil {
		s.hooks.onPlan(j.seq, probes)
	}
	j.req = placement.NewRequest(j.reqID, tasks)
	j.req.AddProbes(probes)
	j.probeNode = j.probeNode[:0]
	j.probeCnt = j.probeCnt[:0]
	for _, p := range probes {
		n, ok := lt.nodeIndex(p.Node.Addr)
		if !ok {
			s.err = fmt.Errorf("sim: placement chose unknown node %q", p.Node.Addr)
			return
		}
		j.probeNode = append(j.probeNode, n)
		j.probeCnt = append(j.probeCnt, int32(p.Count))
	}
	for int(j.seq) >= len(lt.seqSlot) {
		lt.seqSlot = append(lt.seqSlot, -1)
	}
	lt.seqSlot[j.seq] = slot
	s.schedule(s.now+s.half, evEnqueue, -1, slot, -1, j.seq)
}

// lateEnqueue delivers the job's reservations (sent together, so arriving
// together) to their node monitors.
func (s *sim) lateEnqueue(slot int32) {
	lt := s.lt
	j := &s.jobs[slot]
	r := queue.Reservation{RequestID: j.reqID, App: simApp, Scheduler: simScheduler}
	for k, n := range j.probeNode {
		c := int(j.probeCnt[k])
		if err := lt.cores[n].Enqueue(r, c); err != nil {
			s.err = fmt.Errorf("sim: node %d: %w", n, err)
			return
		}
		lt.reservations += int64(c)
		s.lateDrain(n)
	}
}

// lateDrain hands reservations to free slots on node n: each held slot sends
// a getTask that reaches the scheduler RTT/2 later.
func (s *sim) lateDrain(n int32) {
	lt := s.lt
	c := lt.cores[n]
	for {
		r, ok := c.Next()
		if !ok {
			return
		}
		slot, jseq := int32(-1), int32(-1)
		if sl := lt.slotOf(r.RequestID); sl >= 0 {
			slot, jseq = sl, s.jobs[sl].seq
		}
		lt.fetches++
		s.schedule(s.now+s.half, evGetTask, n, slot, -1, jseq)
	}
}

// lateGetTask is the scheduler answering node n's getTask through
// placement.Request.Assign. A request the scheduler has forgotten (the job
// finished) gets no task, as in the daemon.
func (s *sim) lateGetTask(n, slot, jseq int32) {
	lt := s.lt
	task := int32(-1)
	if slot >= 0 {
		j := &s.jobs[slot]
		if j.live && j.seq == jseq && j.req != nil {
			addr := lt.nodes[n].Addr
			i, ok := j.req.Assign(addr)
			if s.hooks.onAssign != nil {
				s.hooks.onAssign(j.seq, addr, i, ok)
			}
			if ok {
				task = int32(i)
				if s.cfg.Cancel && j.req.Launched() {
					s.lateSendCancel(slot)
				}
			}
		}
	}
	if task < 0 {
		lt.empty++
	}
	s.schedule(s.now+s.half, evReply, n, slot, task, jseq)
}

// lateSendCancel sends cancellations to every node monitor still holding a
// reservation of the just-launched job (placement.Request.Outstanding).
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
	s.schedule(s.now+s.half, evCancel, -1, slot, -1, j.seq)
}

// lateReply is the scheduler's answer reaching node n: the task starts in
// the slot held for the fetch, or the slot is freed.
func (s *sim) lateReply(n, slot, task int32) {
	lt := s.lt
	c := lt.cores[n]
	if task >= 0 {
		j := &s.jobs[slot]
		key := slots.TaskKey{RequestID: j.reqID, TaskID: lt.tasks[task].ID}
		if !c.Started(key, simApp) {
			s.err = fmt.Errorf("sim: node %d: task %s/%s launched twice", n, key.RequestID, key.TaskID)
			return
		}
		s.started(j, n, task)
		s.schedule(s.now+j.dur[task], evTaskDone, n, slot, task, j.seq)
	} else {
		c.Released()
	}
	s.lateDrain(n)
}

func (s *sim) lateTaskDone(n, slot, task int32) {
	lt := s.lt
	j := &s.jobs[slot]
	key := slots.TaskKey{RequestID: j.reqID, TaskID: lt.tasks[task].ID}
	if !lt.cores[n].Finished(key) {
		s.err = fmt.Errorf("sim: node %d: finished task %s/%s was not running", n, key.RequestID, key.TaskID)
		return
	}
	s.finishTask(slot)
	s.lateDrain(n)
}

// lateCancel delivers a job's cancellations (slots.Core.Cancel) to the nodes
// that held reservations when its last task was launched.
func (s *sim) lateCancel(slot int32) {
	lt := s.lt
	j := &s.jobs[slot]
	for _, n := range j.cancelNode {
		lt.cancelled += int64(lt.cores[n].Cancel(j.reqID))
	}
	j.cancelPending = false
	if j.done {
		s.freeJob(slot)
	}
}
