package perfmodel

import (
	"fmt"
	"math"
	"slices"
)

// Engine evaluates concurrent tasks on machines with contention (§4.2): each
// resource is shared equally by the running steps that use it, and every
// rate is recomputed whenever a task starts, moves to its next step or
// finishes — Figure 12's last model, which the report found necessary
// because rates fixed at a task's start badly misjudge later overlaps.
//
// The caller starts tasks (at the engine's current time) and calls Next to
// advance to the next completion, so a dispatcher can decide what to start
// from what has finished. Not safe for concurrent use.
type Engine struct {
	machines []Machine
	now      float64
	run      []*runningTask // sorted by id, for deterministic order
	users    []int          // scratch: steps using each resource
	rates    []float64      // scratch: each running task's rate
}

type runningTask struct {
	id    int
	steps []Step
	step  int
	left  float64 // fraction of the current step still to do
	agg   []Demand
}

// NewEngine returns an engine at time 0 over the machines.
func NewEngine(machines []Machine) (*Engine, error) {
	if len(machines) == 0 {
		return nil, ErrNoMachines
	}
	for i, m := range machines {
		if err := m.Validate(); err != nil {
			return nil, fmt.Errorf("machine %d: %w", i, err)
		}
	}
	return &Engine{machines: machines, users: make([]int, len(machines)*int(numResources))}, nil
}

// Now returns the engine's current time.
func (e *Engine) Now() float64 { return e.now }

// Running returns how many tasks are running.
func (e *Engine) Running() int { return len(e.run) }

// Start begins task id's steps now. A task with no steps finishes at the
// next call to Next, at the current time.
func (e *Engine) Start(id int, steps []Step) error {
	i, found := slices.BinarySearchFunc(e.run, id, func(r *runningTask, id int) int { return r.id - id })
	if found {
		return fmt.Errorf("task %d already running", id)
	}
	for _, s := range steps {
		for _, d := range s.Demands {
			if d.Machine < 0 || d.Machine >= len(e.machines) || d.Resource < 0 || d.Resource >= numResources {
				return fmt.Errorf("task %d: demand on machine %d resource %d out of range", id, d.Machine, int(d.Resource))
			}
			if d.Amount < 0 || math.IsNaN(d.Amount) || math.IsInf(d.Amount, 0) {
				return fmt.Errorf("task %d: demand of %v", id, d.Amount)
			}
		}
		if s.Delay < 0 || math.IsNaN(s.Delay) || math.IsInf(s.Delay, 0) {
			return fmt.Errorf("task %d: delay of %v", id, s.Delay)
		}
	}
	r := &runningTask{id: id, steps: steps, step: -1, agg: make([]Demand, 0, 8)}
	r.advance()
	e.run = slices.Insert(e.run, i, r)
	return nil
}

// advance moves r to its next step with work in it and merges that step's
// demands per resource.
func (r *runningTask) advance() {
	for r.step++; r.step < len(r.steps); r.step++ {
		s := r.steps[r.step]
		r.agg = r.agg[:0]
		for _, d := range s.Demands {
			if d.Amount == 0 {
				continue
			}
			j := slices.IndexFunc(r.agg, func(a Demand) bool { return a.Machine == d.Machine && a.Resource == d.Resource })
			if j < 0 {
				r.agg = append(r.agg, d)
			} else {
				r.agg[j].Amount += d.Amount
			}
		}
		if len(r.agg) > 0 || s.Delay > 0 {
			r.left = 1
			return
		}
	}
}

func (r *runningTask) done() bool { return r.step >= len(r.steps) }

// Next advances time to the next task completion and returns the time and
// the ids of the tasks that finished then, in increasing order. ok is false
// when nothing is running.
func (e *Engine) Next() (now float64, done []int, ok bool) {
	if len(e.run) == 0 {
		return e.now, nil, false
	}
	now, done = e.Until(math.Inf(1))
	return now, done, true
}

// Until advances time to the next task completion or to limit, whichever
// comes first, and returns the time and the tasks that finished then (none
// if limit came first). With nothing running, time jumps to limit.
func (e *Engine) Until(limit float64) (now float64, done []int) {
	if len(e.run) == 0 {
		if !math.IsInf(limit, 1) && limit > e.now {
			e.now = limit
		}
		return e.now, nil
	}
	if cap(e.rates) < len(e.run) {
		e.rates = make([]float64, len(e.run))
	}
	rates := e.rates[:len(e.run)]
	for {
		for _, r := range e.run {
			if r.done() {
				done = append(done, r.id)
			}
		}
		if len(done) > 0 {
			e.run = slices.DeleteFunc(e.run, func(r *runningTask) bool { return r.done() })
			return e.now, done
		}
		if e.now >= limit {
			return e.now, nil
		}
		clear(e.users)
		for _, r := range e.run {
			for _, d := range r.agg {
				e.users[d.Machine*int(numResources)+int(d.Resource)]++
			}
		}
		dt := math.Inf(1)
		for i, r := range e.run {
			rates[i] = e.rate(r)
			if x := r.left / rates[i]; x < dt {
				dt = x
			}
		}
		if e.now+dt > limit {
			dt = limit - e.now
			for i, r := range e.run {
				r.left -= dt * rates[i]
			}
			e.now = limit
			return e.now, nil
		}
		e.now += dt
		for i, r := range e.run {
			if r.left/rates[i] <= dt*(1+1e-12) {
				r.advance() // the step that set dt, and any ending with it
			} else {
				r.left -= dt * rates[i]
			}
		}
	}
}

// rate is the fraction of r's current step done per second: its delay, or
// the pace of its most contended resource under equal sharing.
func (e *Engine) rate(r *runningTask) float64 {
	if len(r.agg) == 0 {
		return 1 / r.steps[r.step].Delay
	}
	rate := math.Inf(1)
	for _, d := range r.agg {
		n := e.users[d.Machine*int(numResources)+int(d.Resource)]
		share := Capacity(e.machines[d.Machine], d.Resource) / float64(n)
		if x := share / d.Amount; x < rate { // not math.Min: this is the hot loop, and no value is NaN
			rate = x
		}
	}
	return rate
}

// Release is one task of a fixed workload for Simulate: its steps and the
// time it starts.
type Release struct {
	At    float64
	Steps []Step
}

// Simulate runs tasks that start at fixed times and returns each one's
// finishing time, with contention re-evaluated at every start, step change
// and finish.
func Simulate(machines []Machine, tasks []Release) ([]float64, error) {
	e, err := NewEngine(machines)
	if err != nil {
		return nil, err
	}
	order := make([]int, len(tasks))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmpFloat(tasks[a].At, tasks[b].At) })
	end := make([]float64, len(tasks))
	next := 0
	for next < len(order) || e.Running() > 0 {
		if next < len(order) && e.Running() == 0 && tasks[order[next]].At > e.now {
			e.now = tasks[order[next]].At
		}
		for next < len(order) && tasks[order[next]].At <= e.now {
			if err := e.Start(order[next], tasks[order[next]].Steps); err != nil {
				return nil, err
			}
			next++
		}
		if next < len(order) {
			// Advance only up to the next release: a start changes rates.
			t, done := e.Until(tasks[order[next]].At)
			for _, id := range done {
				end[id] = t
			}
			continue
		}
		t, done, _ := e.Next()
		for _, id := range done {
			end[id] = t
		}
	}
	return end, nil
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
