package locality

import (
	"container/heap"
	"fmt"
	"math"
	"time"

	"github.com/sparrowfleet/sparrow/core/flow"
	"github.com/sparrowfleet/sparrow/core/quincy"
)

// The centralized reference: the same trace scheduled by Quincy's min-cost
// flow (core/quincy, policy Q: no preemption, as the live fleet has none,
// and no fairness bounds), solved with core/flow whenever a task could
// start, in a discrete-event simulation of the same cluster and the same
// read model. It is what one scheduler seeing every queue and every task
// at once would do with Quincy's costs; the live modes are measured
// against it.
//
// Two adaptations to sub-second tasks, both in ReferenceParams: ν and θ
// are priced to the millisecond rather than the Appendix's whole seconds
// (Params.TimeGrain), and every waiting task counts refTieBreak of
// waiting from its arrival (one cost unit), so that starting a task on a
// free replica node (cost 0) strictly beats leaving it unscheduled (cost
// ω·ν, 0 at arrival) instead of tying with it.

// refTieBreak is the wait every task is taken to have at arrival: 2 ms
// at ω = 0.5 per second is one cost unit.
const refTieBreak = 2 * time.Millisecond

// refRecheck is how soon the simulation solves again when tasks wait
// beside free slots and nothing else happens.
const refRecheck = 10 * time.Millisecond

// ReferenceParams are Quincy's weights (ω = 0.5 per second, ψ = 1 and
// ξ = 2 per GB) with waits priced per millisecond.
func ReferenceParams() quincy.Params {
	p := quincy.DefaultParams()
	p.TimeGrain = time.Millisecond
	return p
}

// ReferenceResult is the reference schedule's outcome, in the same terms
// as a live mode's.
type ReferenceResult struct {
	Jobs []JobOutcome
	// End is when the last task finished.
	End time.Duration
	// Solves counts the min-cost flow solves; MaxArcs is the largest
	// network's arc count.
	Solves, MaxArcs int
}

// refTask is one task of the simulation.
type refTask struct {
	job, task int
	state     int // refWaiting, refRunning, refDone
	node      int
	since     time.Duration // arrival while waiting, start while running
}

const (
	refWaiting = iota
	refRunning
	refDone
)

// finishHeap orders running tasks by finish time, then job and task.
type finishHeap []finishing

type finishing struct {
	at        time.Duration
	job, task int
}

func (h finishHeap) Len() int { return len(h) }
func (h finishHeap) Less(i, j int) bool {
	a, b := h[i], h[j]
	if a.at != b.at {
		return a.at < b.at
	}
	if a.job != b.job {
		return a.job < b.job
	}
	return a.task < b.task
}
func (h finishHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *finishHeap) Push(x any)   { *h = append(*h, x.(finishing)) }
func (h *finishHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// Reference schedules trace on w's cluster with Quincy's policy Q and
// returns every job's outcome. Tasks run CPU plus their read time, as in
// the live fleet. It is deterministic: the same inputs give the same
// schedule.
func Reference(w WorkloadConfig, read ReadModel, trace Trace, p quincy.Params) (ReferenceResult, error) {
	if err := w.Validate(); err != nil {
		return ReferenceResult{}, err
	}
	if err := read.Validate(); err != nil {
		return ReferenceResult{}, err
	}
	topo := w.Topology
	cluster := quincy.Cluster{Racks: topo.Racks, Computers: make([]quincy.Computer, topo.Nodes)}
	for m := range cluster.Computers {
		cluster.Computers[m] = quincy.Computer{Rack: topo.RackOf(m), Slots: w.Slots}
	}
	res := ReferenceResult{Jobs: make([]JobOutcome, len(trace.Jobs))}
	tasks := make([][]refTask, len(trace.Jobs))
	free := make([]int, topo.Nodes)
	for m := range free {
		free[m] = w.Slots
	}
	freeSlots := topo.Nodes * w.Slots
	var (
		active  []int // jobs with unfinished tasks, by arrival
		left    = make([]int, len(trace.Jobs))
		waiting int
		running finishHeap
		next    int // the next job to arrive
		now     time.Duration
		wake    = time.Duration(math.MaxInt64)
	)
	for {
		at := wake
		if next < len(trace.Jobs) {
			at = min(at, trace.Jobs[next].At)
		}
		if len(running) > 0 {
			at = min(at, running[0].at)
		}
		if at == math.MaxInt64 {
			break
		}
		now = at
		if wake <= now {
			wake = math.MaxInt64
		}
		for len(running) > 0 && running[0].at <= now {
			f := heap.Pop(&running).(finishing)
			t := &tasks[f.job][f.task]
			t.state = refDone
			free[t.node]++
			freeSlots++
			res.Jobs[f.job].Tasks[f.task].Finished, res.Jobs[f.job].Tasks[f.task].Done = f.at, true
			res.End = max(res.End, f.at)
			if left[f.job]--; left[f.job] == 0 {
				for i, j := range active {
					if j == f.job {
						active = append(active[:i], active[i+1:]...)
						break
					}
				}
			}
		}
		for next < len(trace.Jobs) && trace.Jobs[next].At <= now {
			job := trace.Jobs[next]
			res.Jobs[next] = JobOutcome{Submitted: job.At, Tasks: make([]TaskOutcome, len(job.Blocks))}
			tasks[next] = make([]refTask, len(job.Blocks))
			for k := range job.Blocks {
				tasks[next][k] = refTask{job: next, task: k, since: job.At}
			}
			left[next] = len(job.Blocks)
			waiting += len(job.Blocks)
			active = append(active, next)
			next++
		}
		if waiting == 0 || freeSlots == 0 {
			continue
		}
		// Snapshot the unfinished tasks of the active jobs and solve.
		st := &quincy.State{Now: now, Cluster: cluster, Jobs: make([]quincy.Job, len(active))}
		refs := make([][]*refTask, len(active))
		for a, j := range active {
			for k := range tasks[j] {
				t := &tasks[j][k]
				if t.state == refDone {
					continue
				}
				blk := trace.Blocks[trace.Jobs[j].Blocks[k]]
				qt := quincy.Task{Input: []quincy.Block{{Bytes: blk.Bytes, Replicas: blk.Replicas[:]}}, Since: t.since, WaitedBefore: refTieBreak}
				if t.state == refRunning {
					qt.State, qt.Computer, qt.WaitedBefore = quincy.Running, t.node, t.since-trace.Jobs[j].At+refTieBreak
				}
				st.Jobs[a].Tasks = append(st.Jobs[a].Tasks, qt)
				refs[a] = append(refs[a], t)
			}
		}
		g, err := quincy.Build(st, quincy.Q, p)
		if err != nil {
			return res, fmt.Errorf("reference at %v: %w", now, err)
		}
		sol, err := flow.Solve(g.Net)
		if err != nil {
			return res, fmt.Errorf("reference at %v: solve: %w", now, err)
		}
		sch, err := g.ReadSchedule(sol)
		if err != nil {
			return res, fmt.Errorf("reference at %v: %w", now, err)
		}
		res.Solves++
		res.MaxArcs = max(res.MaxArcs, g.Net.NumArcs())
		for a := range sch.Tasks {
			for n, d := range sch.Tasks[a] {
				t := refs[a][n]
				switch d.Action {
				case quincy.Wait, quincy.Keep:
					continue
				case quincy.Start:
				default:
					return res, fmt.Errorf("reference at %v: policy Q decided %v for job %d task %d", now, d.Action, t.job, t.task)
				}
				if t.state != refWaiting || free[d.Computer] == 0 {
					return res, fmt.Errorf("reference at %v: start of job %d task %d on computer %d with %d free slots", now, t.job, t.task, d.Computer, free[d.Computer])
				}
				blk := trace.Blocks[trace.Jobs[t.job].Blocks[t.task]]
				where := Classify(topo, d.Computer, blk.Replicas)
				t.state, t.node, t.since = refRunning, d.Computer, now
				free[d.Computer]--
				freeSlots--
				waiting--
				out := &res.Jobs[t.job].Tasks[t.task]
				out.Launches, out.Node, out.Where, out.Input, out.Launched = 1, d.Computer, where, blk.Bytes, now
				if where != NodeLocal {
					out.Bytes = blk.Bytes
				}
				heap.Push(&running, finishing{at: now + w.CPU + read.ReadTime(blk.Bytes, where), job: t.job, task: t.task})
			}
		}
		// Tasks left waiting beside free slots wait for their wait cost
		// to outgrow moving their input: look again soon even if nothing
		// else happens.
		if waiting > 0 && freeSlots > 0 {
			wake = now + refRecheck
		}
	}
	return res, nil
}
