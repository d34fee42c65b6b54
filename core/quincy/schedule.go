package quincy

import (
	"fmt"

	"github.com/sparrowfleet/sparrow/core/flow"
)

// Action is what the schedule does with a task.
type Action uint8

const (
	// Wait leaves a waiting task unscheduled.
	Wait Action = iota
	// Start sets a waiting task (or an unplaced root) running on Computer.
	Start
	// Keep leaves a running task (or a placed root) where it runs.
	Keep
	// Move preempts a running task and restarts it on another Computer.
	Move
	// Preempt kills a running task and leaves it unscheduled.
	Preempt
)

var actionNames = [...]string{"wait", "start", "keep", "move", "preempt"}

// String names the action.
func (a Action) String() string {
	if int(a) < len(actionNames) {
		return actionNames[a]
	}
	return fmt.Sprintf("Action(%d)", int(a))
}

// Via says how a task's unit of flow reached its computer.
type Via uint8

const (
	// ViaNone: the task is not scheduled.
	ViaNone Via = iota
	// ViaComputer: straight to the computer (a preferred or running arc,
	// or a placed root).
	ViaComputer
	// ViaRack: through a preferred rack's aggregator R_l.
	ViaRack
	// ViaCluster: through the cluster aggregator X.
	ViaCluster
)

var viaNames = [...]string{"none", "computer", "rack", "cluster"}

// String names the route.
func (v Via) String() string {
	if int(v) < len(viaNames) {
		return viaNames[v]
	}
	return fmt.Sprintf("Via(%d)", int(v))
}

// Decision is the schedule's verdict on one task.
type Decision struct {
	// Action is what to do with the task.
	Action Action
	// Computer is where the task runs under the schedule, -1 if it does
	// not run.
	Computer int
	// Via is the route its flow took to Computer.
	Via Via
}

// TaskRef names a worker task: job j's worker n.
type TaskRef struct{ Job, Task int }

// Schedule is the assignment read back from an optimal flow (Appendix):
// what to do with every root and worker.
type Schedule struct {
	// Cost is the flow's cost.
	Cost int64
	// Roots[j] is job j's root's decision (Keep or Start); the zero
	// Decision with Computer -1 for a job without a root.
	Roots []Decision
	// Tasks[j][n] is worker n of job j's decision.
	Tasks [][]Decision
	// Running[j] is the number of job j's workers running under the
	// schedule; Min[j] <= Running[j] <= Max[j] of the Graph.
	Running []int
	// Preempted lists the running workers the policy kills: those moved
	// elsewhere and those sent back to waiting, in job and task order.
	Preempted []TaskRef
	// Counts of worker decisions, and of roots started.
	Started, Kept, Moved, Killed, Waiting, RootsStarted int
}

// poolItem is a task (Task -1: the root) whose flow reached an
// aggregator, still to be matched to a computer.
type poolItem struct{ job, task int }

// ReadSchedule reads the schedule from an optimal flow of g (Appendix):
// a task whose unit of flow reaches a computer directly runs there; a
// computer fed by its rack aggregator takes one of the tasks whose flow
// entered that aggregator, directly or through X. The paper assigns those
// arbitrarily; here, deterministically and with locality in mind (notes
// §5.7, recon.): a running task whose own computer is among the
// aggregator's computers keeps running there; X's other tasks go to the
// rack with the most of their input among those X feeds; and within a rack
// each task takes the computer holding the most of its input, the
// lowest-numbered on ties.
func (g *Graph) ReadSchedule(sol flow.Solution) (*Schedule, error) {
	net := g.Net
	if len(sol.Flow) != net.NumArcs() {
		return nil, fmt.Errorf("quincy: solution has %d arc flows, graph has %d arcs", len(sol.Flow), net.NumArcs())
	}
	s := g.State
	c := &s.Cluster
	J := len(s.Jobs)
	sch := &Schedule{
		Cost:    sol.Cost,
		Roots:   make([]Decision, J),
		Tasks:   make([][]Decision, J),
		Running: make([]int, J),
	}
	// Slots each aggregator hands each computer, and X hands each rack.
	fromRack := make([]int64, len(c.Computers))
	for m, a := range g.RackComputerArcIndex {
		fromRack[m] = sol.Flow[a]
	}
	fromX := make([]int64, c.Racks)
	for l, a := range g.ClusterRackArcIndex {
		fromX[l] = sol.Flow[a]
	}
	rackPool := make([][]poolItem, c.Racks)
	var xPool []poolItem

	for j := range s.Jobs {
		job := &s.Jobs[j]
		sch.Roots[j] = Decision{Computer: -1}
		if a := g.RootArcIndex[j]; a >= 0 {
			if sol.Flow[a] != 1 {
				return nil, fmt.Errorf("quincy: job %d's root carries flow %d, want 1", j, sol.Flow[a])
			}
			if m := job.Root.Computer; m >= 0 {
				sch.Roots[j] = Decision{Action: Keep, Computer: m, Via: ViaComputer}
			} else {
				xPool = append(xPool, poolItem{j, -1})
			}
		}
		sch.Tasks[j] = make([]Decision, len(job.Tasks))
		for n := range job.Tasks {
			t := &job.Tasks[n]
			first, end := g.ArcsOf(j, n)
			chosen, units := -1, int64(0)
			for a := first; a < end; a++ {
				if f := sol.Flow[a]; f != 0 {
					units += f
					chosen = a
				}
			}
			if units != 1 {
				return nil, fmt.Errorf("quincy: job %d task %d sends %d units of flow, want 1", j, n, units)
			}
			d := &sch.Tasks[j][n]
			d.Computer = -1
			info := g.Arcs[chosen]
			switch info.Kind {
			case UnscheduledArc:
				d.Action = Wait
				if t.State == Running {
					d.Action = Preempt
				}
			case ComputerArc, RunningArc:
				g.place(d, t, int(info.Computer), ViaComputer)
			case RackArc:
				rackPool[info.Rack] = append(rackPool[info.Rack], poolItem{j, n})
			case ClusterArc:
				xPool = append(xPool, poolItem{j, n})
			default:
				return nil, fmt.Errorf("quincy: job %d task %d: flow on a %v arc", j, n, info.Kind)
			}
		}
	}

	// A running task whose flow went through an aggregator lands back on
	// its own computer whenever the aggregators feed that computer: no
	// need to restart it (notes §5.7).
	for l := range rackPool {
		rackPool[l] = g.keepInPlace(sch, rackPool[l], l, fromRack, fromX)
	}
	xPool = g.keepInPlace(sch, xPool, -1, fromRack, fromX)
	// Hand X's other tasks to the racks X feeds.
	nextRack := 0
	for _, it := range xPool {
		l := -1
		if it.task >= 0 {
			best := int64(0)
			for _, r := range g.locs[it.job][it.task].racks {
				if fromX[r.id] > 0 && r.bytes > best {
					l, best = r.id, r.bytes
				}
			}
		}
		if l < 0 {
			for nextRack < c.Racks && fromX[nextRack] == 0 {
				nextRack++
			}
			if nextRack == c.Racks {
				return nil, fmt.Errorf("quincy: more tasks reach X than X sends to racks")
			}
			l = nextRack
		}
		fromX[l]--
		rackPool[l] = append(rackPool[l], it)
	}
	// Within each rack, match the pooled tasks to the computers the rack
	// aggregator feeds.
	members := make([][]int, c.Racks)
	for m, comp := range c.Computers {
		members[comp.Rack] = append(members[comp.Rack], m)
	}
	for l, pool := range rackPool {
		if fromX[l] != 0 {
			return nil, fmt.Errorf("quincy: X sends rack %d %d more units than tasks reached X", l, fromX[l])
		}
		next := 0
		for _, it := range pool {
			m := -1
			if it.task >= 0 {
				best := int64(0)
				for _, a := range g.locs[it.job][it.task].comps {
					if g.topo.rackOf(a.id) == l && fromRack[a.id] > 0 && a.bytes > best {
						m, best = a.id, a.bytes
					}
				}
			}
			if m < 0 {
				for next < len(members[l]) && fromRack[members[l][next]] == 0 {
					next++
				}
				if next == len(members[l]) {
					return nil, fmt.Errorf("quincy: more tasks reach rack %d than it sends to computers", l)
				}
				m = members[l][next]
			}
			fromRack[m]--
			if it.task < 0 {
				sch.Roots[it.job] = Decision{Action: Start, Computer: m, Via: ViaCluster}
				continue
			}
			via := ViaRack
			if g.Arcs[g.chosenArc(sol, it.job, it.task)].Kind == ClusterArc {
				via = ViaCluster
			}
			g.place(&sch.Tasks[it.job][it.task], &s.Jobs[it.job].Tasks[it.task], m, via)
		}
	}
	for m, f := range fromRack {
		if f != 0 {
			return nil, fmt.Errorf("quincy: rack %d sends computer %d %d units no task accounts for", c.Computers[m].Rack, m, f)
		}
	}

	for j := range sch.Tasks {
		for n, d := range sch.Tasks[j] {
			switch d.Action {
			case Wait:
				sch.Waiting++
			case Start:
				sch.Started++
			case Keep:
				sch.Kept++
			case Move:
				sch.Moved++
			case Preempt:
				sch.Killed++
			}
			if d.Computer >= 0 {
				sch.Running[j]++
			}
			if d.Action == Move || d.Action == Preempt {
				sch.Preempted = append(sch.Preempted, TaskRef{j, n})
			}
		}
		if sch.Roots[j].Action == Start {
			sch.RootsStarted++
		}
	}
	return sch, nil
}

// place records that task t runs on computer m.
func (g *Graph) place(d *Decision, t *Task, m int, via Via) {
	d.Computer, d.Via = m, via
	switch {
	case t.State == Waiting:
		d.Action = Start
	case t.Computer == m:
		d.Action = Keep
	default:
		d.Action = Move
	}
}

// keepInPlace keeps each running task of a pool on its own computer when
// the pool's aggregator can feed it: rack l's pool (l >= 0) if the
// computer is in rack l and R_l feeds it, X's pool (l = -1) if X feeds the
// computer's rack and that rack feeds the computer. It returns the tasks
// left to place.
func (g *Graph) keepInPlace(sch *Schedule, pool []poolItem, l int, fromRack, fromX []int64) []poolItem {
	rest := pool[:0]
	for _, it := range pool {
		if it.task >= 0 {
			t := &g.State.Jobs[it.job].Tasks[it.task]
			if t.State == Running && fromRack[t.Computer] > 0 {
				own := g.topo.rackOf(t.Computer)
				switch {
				case l >= 0 && own == l:
					fromRack[t.Computer]--
					g.place(&sch.Tasks[it.job][it.task], t, t.Computer, ViaRack)
					continue
				case l < 0 && fromX[own] > 0:
					fromRack[t.Computer]--
					fromX[own]--
					g.place(&sch.Tasks[it.job][it.task], t, t.Computer, ViaCluster)
					continue
				}
			}
		}
		rest = append(rest, it)
	}
	return rest
}

// chosenArc returns the arc carrying worker n of job j's unit of flow.
func (g *Graph) chosenArc(sol flow.Solution, j, n int) int {
	first, end := g.ArcsOf(j, n)
	for a := first; a < end; a++ {
		if sol.Flow[a] != 0 {
			return a
		}
	}
	return -1
}
