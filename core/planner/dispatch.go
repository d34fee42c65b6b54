package planner

import (
	"errors"
	"fmt"
)

// Dispatcher carries a plan out on a live fleet, one event at a time, as
// the plan's own simulation does: every machine runs one of its tasks at a
// time, and when it is free it starts the next of its tasks in the plan's
// order as soon as that task's inputs are ready (a file input once its
// producer finished, a pipelined one once its producer started), waiting
// for them rather than starting a later task first. A plan whose Order
// does not list every task (one built by hand) falls back to task order
// for the rest, and then a free machine starts the first of its tasks
// whose inputs are ready, since task order need not respect the arcs.
// The caller submits what Next returns, pinned to the machine, and
// reports each task's end.
//
// When a machine is lost its unfinished tasks fall back to Dryad's greedy
// rule (§2.3): a free live machine with no ready task of its own takes the
// lowest-numbered ready orphan. The plan's predictions no longer hold
// then, but the job completes on the machines that are left.
//
// It is a deterministic state machine: no clock, no I/O. Not safe for
// concurrent use.
type Dispatcher struct {
	machine []int   // task → planned machine, or -1 once orphaned
	order   [][]int // machine → its planned tasks in order
	in      [][]inArc
	state   []int // waiting, running (submitted) or done
	busy    []int // machine → its outstanding task, or -1
	dead    []bool
	left    int  // tasks not done
	strict  bool // plan.Order lists every task: follow it exactly
}

// ErrAllMachinesLost is returned when no live machine is left to run the
// tasks that remain.
var ErrAllMachinesLost = errors.New("every machine of the plan is lost")

// Assignment is a task to submit now, pinned to a machine.
type Assignment struct {
	Task, Machine int
	// Fallback is set when the task's planned machine was lost and the
	// greedy rule chose this one.
	Fallback bool
}

// NewDispatcher checks that plan places every task of p on one of its
// machines and returns a dispatcher at the job's start.
func NewDispatcher(p Problem, plan Plan) (*Dispatcher, error) {
	in, err := compile(p)
	if err != nil {
		return nil, err
	}
	if len(plan.Machine) != in.n {
		return nil, fmt.Errorf("dispatch: plan places %d tasks, graph has %d", len(plan.Machine), in.n)
	}
	d := &Dispatcher{machine: make([]int, in.n), order: make([][]int, in.m), in: in.in,
		state: make([]int, in.n), busy: make([]int, in.m), dead: make([]bool, in.m), left: in.n}
	for t, m := range plan.Machine {
		if m < 0 || m >= in.m {
			return nil, fmt.Errorf("dispatch: task %q on machine %d, out of range [0,%d)", p.Graph.Tasks[t].Name, m, in.m)
		}
		d.machine[t] = m
	}
	// The plan's order where it gives one, else task order; every task once.
	seen := make([]bool, in.n)
	for m, ts := range plan.Order {
		for _, t := range ts {
			if m < in.m && t >= 0 && t < in.n && d.machine[t] == m && !seen[t] {
				seen[t] = true
				d.order[m] = append(d.order[m], t)
			}
		}
	}
	d.strict = true
	for t, m := range d.machine {
		if !seen[t] {
			d.order[m] = append(d.order[m], t)
			d.strict = false
		}
	}
	for m := range d.busy {
		d.busy[m] = -1
	}
	return d, nil
}

// ready reports whether t's inputs allow it to start.
func (d *Dispatcher) ready(t int) bool {
	for _, a := range d.in[t] {
		if d.state[a.from] == waiting || (!a.pipe && d.state[a.from] != done) {
			return false
		}
	}
	return true
}

// Next returns the tasks to submit now and marks them submitted.
func (d *Dispatcher) Next() []Assignment {
	var out []Assignment
	for m := range d.busy {
		if d.dead[m] || d.busy[m] >= 0 {
			continue
		}
		t := d.firstReady(m)
		fallback := false
		if t < 0 {
			t, fallback = d.firstOrphan(), true
		}
		if t < 0 {
			continue
		}
		d.state[t], d.busy[m] = running, t
		out = append(out, Assignment{Task: t, Machine: m, Fallback: fallback})
	}
	return out
}

// firstReady returns the task machine m starts now, or -1: the next of
// its tasks if ready (strict), else the first ready one.
func (d *Dispatcher) firstReady(m int) int {
	for _, t := range d.order[m] {
		if d.state[t] != waiting || d.machine[t] != m {
			continue
		}
		if d.ready(t) {
			return t
		}
		if d.strict {
			return -1
		}
	}
	return -1
}

func (d *Dispatcher) firstOrphan() int {
	for t, m := range d.machine {
		if m < 0 && d.state[t] == waiting && d.ready(t) {
			return t
		}
	}
	return -1
}

// Finished records that t ran to completion and frees its machine.
func (d *Dispatcher) Finished(t int) error {
	if err := d.outstanding(t, "finished"); err != nil {
		return err
	}
	d.state[t] = done
	d.left--
	d.release(t)
	return nil
}

// Failed records that t did not complete (its executor failed it, or the
// fleet lost it): it waits to run again, on its planned machine while that
// one lives.
func (d *Dispatcher) Failed(t int) error {
	if err := d.outstanding(t, "failed"); err != nil {
		return err
	}
	d.state[t] = waiting
	d.release(t)
	return nil
}

func (d *Dispatcher) outstanding(t int, what string) error {
	if t < 0 || t >= len(d.state) {
		return fmt.Errorf("dispatch: task %d %s, graph has %d", t, what, len(d.state))
	}
	if d.state[t] != running {
		return fmt.Errorf("dispatch: task %d %s but was not submitted", t, what)
	}
	return nil
}

func (d *Dispatcher) release(t int) {
	for m, b := range d.busy {
		if b == t {
			d.busy[m] = -1
		}
	}
}

// MachineLost records that machine m is gone: its outstanding task, if
// any, must run again, and its unfinished tasks become orphans for the
// greedy fallback. It returns the outstanding task (or -1), so the caller
// can stop waiting for it, and ErrAllMachinesLost when work remains and
// no machine lives.
func (d *Dispatcher) MachineLost(m int) (int, error) {
	if m < 0 || m >= len(d.dead) {
		return -1, fmt.Errorf("dispatch: machine %d lost, plan has %d", m, len(d.dead))
	}
	lost := -1
	if !d.dead[m] {
		d.dead[m] = true
		if t := d.busy[m]; t >= 0 {
			d.state[t], d.busy[m], lost = waiting, -1, t
		}
		for t, pm := range d.machine {
			if pm == m && d.state[t] != done {
				d.machine[t] = -1
			}
		}
	}
	for _, dead := range d.dead {
		if !dead {
			return lost, nil
		}
	}
	if d.left > 0 {
		return lost, ErrAllMachinesLost
	}
	return lost, nil
}

// Done reports whether every task has finished.
func (d *Dispatcher) Done() bool { return d.left == 0 }
