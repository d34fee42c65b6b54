package planner

import (
	"fmt"
	"slices"

	"github.com/sparrowfleet/sparrow/core/perfmodel"
)

// Plan is a placement of every task and its predicted timing.
type Plan struct {
	// Machine is each task's machine index (Problem.Machines).
	Machine []int `json:"machine"`
	// Order lists each machine's tasks in the order they run.
	Order [][]int `json:"order"`
	// Start and Finish are each task's predicted times, in seconds.
	Start  []float64 `json:"start"`
	Finish []float64 `json:"finish"`
	// Makespan is the predicted job time: the latest finish.
	Makespan float64 `json:"makespan"`
}

// task states in a simulation.
const (
	waiting = iota
	running
	holding // its steps are done; a pipelined producer is still running
	done
)

// simulate runs the job. With assign non-nil each task runs on its
// assigned machine, and a free machine starts the first of its tasks in
// priority order whose inputs are ready. With assign nil it is Dryad's
// greedy: the lowest-numbered ready task goes to the lowest-numbered free
// machine.
func (in *instance) simulate(assign []int) (Plan, error) {
	return in.execute(assign, nil)
}

// simulateOrder runs the job with each machine's tasks in exactly the
// order given: a free machine starts the next task of its sequence as
// soon as that task's inputs are ready, and idles until then (a
// semi-active schedule). A sequence set that contradicts the arcs
// deadlocks, which is an error.
func (in *instance) simulateOrder(order [][]int) (Plan, error) {
	assign := make([]int, in.n)
	for i := range assign {
		assign[i] = -1
	}
	if len(order) != in.m {
		return Plan{}, fmt.Errorf("order has %d machines, problem has %d", len(order), in.m)
	}
	for m, ts := range order {
		for _, t := range ts {
			if t < 0 || t >= in.n {
				return Plan{}, fmt.Errorf("order of machine %d names task %d, out of range [0,%d)", m, t, in.n)
			}
			if assign[t] >= 0 {
				return Plan{}, fmt.Errorf("task %q ordered twice", in.p.Graph.Tasks[t].Name)
			}
			assign[t] = m
		}
	}
	for t, m := range assign {
		if m < 0 {
			return Plan{}, fmt.Errorf("task %q is in no machine's order", in.p.Graph.Tasks[t].Name)
		}
	}
	return in.execute(assign, order)
}

// execute is simulate's engine: strict (non-nil) sequences, or with assign
// alone the priority rule, or greedy with neither.
func (in *instance) execute(assign []int, strict [][]int) (Plan, error) {
	eng, err := perfmodel.NewEngine(in.p.Machines)
	if err != nil {
		return Plan{}, err
	}
	plan := Plan{Machine: make([]int, in.n), Order: make([][]int, in.m),
		Start: make([]float64, in.n), Finish: make([]float64, in.n)}
	if assign != nil {
		copy(plan.Machine, assign)
	}
	state := make([]int, in.n)
	busy := make([]int, in.m) // task running on the machine, or -1
	for i := range busy {
		busy[i] = -1
	}
	ready := func(t int) bool {
		for _, a := range in.in[t] {
			if st := state[a.from]; st != done && !(a.pipe && st != waiting) {
				return false
			}
		}
		return true
	}
	start := func(t, mach int) error {
		steps, err := in.steps(t, mach, plan.Machine)
		if err != nil {
			return err
		}
		if err := eng.Start(t, steps); err != nil {
			return err
		}
		plan.Machine[t] = mach
		plan.Start[t] = eng.Now()
		plan.Order[mach] = append(plan.Order[mach], t)
		state[t] = running
		busy[mach] = t
		return nil
	}
	// queues lists each machine's assigned tasks in priority order, or
	// its strict sequence; next[m] is the first of them not yet started.
	queues := strict
	next := make([]int, in.m)
	if assign != nil && strict == nil {
		queues = make([][]int, in.m)
		for _, t := range in.prio {
			queues[assign[t]] = append(queues[assign[t]], t)
		}
	}
	left := in.n
	// finish marks t done (or holding) and releases holders whose
	// pipelined producers are now all done.
	var finish func(t int)
	finish = func(t int) {
		for _, a := range in.in[t] {
			if a.pipe && state[a.from] != done {
				state[t] = holding
				return
			}
		}
		state[t] = done
		left--
		plan.Finish[t] = eng.Now()
		busy[plan.Machine[t]] = -1
		for _, s := range in.succ[t] {
			if state[s] == holding {
				finish(s)
			}
		}
	}
	for left > 0 {
		if err := in.dispatch(assign, state, busy, queues, next, strict != nil, ready, start); err != nil {
			return Plan{}, err
		}
		_, fin, ok := eng.Next()
		if !ok {
			return Plan{}, fmt.Errorf("plan deadlocks with %d tasks unfinished", left)
		}
		for _, t := range fin {
			finish(t)
		}
	}
	plan.Makespan = slices.Max(plan.Finish)
	return plan, nil
}

func (in *instance) dispatch(assign, state, busy []int, queues [][]int, next []int, strict bool, ready func(int) bool, start func(t, m int) error) error {
	for {
		started := false
		if assign == nil {
			for t := range in.n {
				if state[t] != waiting || !ready(t) {
					continue
				}
				mach := slices.Index(busy, -1)
				if mach < 0 {
					return nil
				}
				if err := start(t, mach); err != nil {
					return err
				}
				started = true
			}
		} else {
			for mach := range in.m {
				if busy[mach] != -1 {
					continue
				}
				for next[mach] < len(queues[mach]) && state[queues[mach][next[mach]]] != waiting {
					next[mach]++
				}
				if strict {
					if k := next[mach]; k < len(queues[mach]) && ready(queues[mach][k]) {
						if err := start(queues[mach][k], mach); err != nil {
							return err
						}
						started = true
					}
					continue
				}
				for _, t := range queues[mach][next[mach]:] {
					if state[t] == waiting && ready(t) {
						if err := start(t, mach); err != nil {
							return err
						}
						started = true
						break
					}
				}
			}
		}
		// A start can make a pipelined consumer ready at once.
		if !started {
			return nil
		}
	}
}

// Evaluate predicts the makespan of an assignment of tasks (indices of
// Problem.Graph.Tasks) to machines (indices of Problem.Machines).
func Evaluate(p Problem, assign []int) (Plan, error) {
	in, err := compile(p)
	if err != nil {
		return Plan{}, err
	}
	if len(assign) != in.n {
		return Plan{}, fmt.Errorf("assignment of %d tasks, graph has %d", len(assign), in.n)
	}
	for t, m := range assign {
		if m < 0 || m >= in.m {
			return Plan{}, fmt.Errorf("task %q assigned to machine %d, out of range [0,%d)", p.Graph.Tasks[t].Name, m, in.m)
		}
	}
	return in.simulate(assign)
}

// EvaluateOrder predicts the makespan of running each machine's tasks in
// exactly the order given (order[m] lists machine m's tasks, indices of
// Problem.Graph.Tasks, each task in exactly one list): a machine starts
// the next task of its list as soon as it is free and the task's inputs
// are ready. An order that contradicts the arcs (a consumer before its
// producer, directly or through other machines) is an error.
func EvaluateOrder(p Problem, order [][]int) (Plan, error) {
	in, err := compile(p)
	if err != nil {
		return Plan{}, err
	}
	return in.simulateOrder(order)
}

// Greedy returns Dryad's greedy schedule (§2.3): whenever a machine is
// free, the lowest-numbered ready task starts on the lowest-numbered free
// machine, whatever their speeds.
func Greedy(p Problem) (Plan, error) {
	in, err := compile(p)
	if err != nil {
		return Plan{}, err
	}
	return in.simulate(nil)
}
