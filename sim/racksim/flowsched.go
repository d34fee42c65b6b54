package racksim

import (
	"fmt"
	"math"
	"slices"

	"github.com/sparrowfleet/sparrow/core/flow"
	"github.com/sparrowfleet/sparrow/core/quincy"
)

// flowSched runs one of Quincy's policies with the product's core code:
// at each solve it snapshots the admitted jobs into a quincy.State, builds
// the graph (quincy.Build), solves it from scratch (flow.Solve, as the
// paper does), reads the schedule (Graph.ReadSchedule), applies it to the
// snapshot (State.Apply, which keeps the ν and θ sums) and carries it out:
// kills first, then starts.
//
// When to solve (the paper: on every event and on a timer of unstated
// period): an event that changes the graph (a worker submitted or
// finished, a job admitted or ended) asks for a solve, and requests are
// coalesced so that solves are at least Config.SolveGap apart; while any
// worker waits, a solve also follows Config.SolveTimer after the last,
// because waiting costs grow.
type flowSched struct {
	e       *engine
	pol     quincy.Policy
	params  quincy.Params
	pending float64 // time of the next scheduled solve, +Inf if none
	last    float64 // time of the last solve
	quiet   bool    // carrying out a schedule: ignore our own kills
}

func newFlowSched(e *engine) *flowSched {
	pol, err := quincy.ParsePolicy(string(e.cfg.Policy))
	if err != nil {
		panic(err) // Config.Validate admitted only known names
	}
	params := quincy.DefaultParams()
	if e.cfg.Params != nil {
		params = *e.cfg.Params
	}
	return &flowSched{e: e, pol: pol, params: params, pending: math.Inf(1), last: math.Inf(-1)}
}

func (s *flowSched) submitted(*task) {}

// dispatch asks for a solve after a batch of events that changed the
// graph.
func (s *flowSched) dispatch(t float64) error {
	if s.quiet {
		return nil
	}
	s.request(max(t, s.last+s.e.cfg.SolveGap))
	return nil
}

func (s *flowSched) request(at float64) {
	if at < s.pending {
		s.pending = at
		s.e.ev.push(at, evSolve, 0, 0)
	}
}

func (s *flowSched) event(ev event) error {
	if ev.kind != evSolve || ev.t != s.pending {
		return nil // superseded by an earlier request
	}
	s.pending = math.Inf(1)
	if err := s.solve(ev.t); err != nil {
		return err
	}
	// Re-solve on the timer while workers wait, and sooner when a worker
	// that has waited less than one grain of ν will have waited one: a
	// worker just submitted has ν = 0, so waiting costs it nothing and
	// any arc with a data cost loses to its unscheduled arc; one grain
	// later waiting costs ω·grain. The paper solves on every event, which
	// in its busy cluster comes within a second; without this, such a
	// worker would wait for the timer.
	grain := max(s.params.TimeGrain.Seconds(), 1e-3)
	next := math.Inf(1)
	for _, id := range s.e.active {
		for _, tid := range s.e.jobs[id].live {
			tk := s.e.tasks[tid]
			if tk.state != waiting {
				continue
			}
			next = min(next, ev.t+s.e.cfg.SolveTimer)
			if w := tk.waitedBefore.Seconds(); w < grain {
				next = min(next, tk.since+grain-w)
			}
		}
	}
	if !math.IsInf(next, 1) {
		s.request(max(next, ev.t+s.e.cfg.SolveGap))
	}
	return nil
}

// solve schedules the cluster at time t.
func (s *flowSched) solve(t float64) error {
	e := s.e
	s.last = t
	clock := e.cfg.Clock
	var t0 = nowOf(clock)
	st := &quincy.State{Now: dur(t), Cluster: e.cluster}
	refs := make([][]int, 0, len(e.active))
	for _, id := range e.active {
		j := e.jobs[id]
		ids := slices.Clone(j.live)
		slices.Sort(ids)
		tasks := make([]quincy.Task, len(ids))
		for n, tid := range ids {
			tk := e.tasks[tid]
			qt := quincy.Task{Input: tk.input, Computer: -1, Since: dur(tk.since), WaitedBefore: tk.waitedBefore, RanBefore: tk.ranBefore}
			if tk.state == running {
				qt.State, qt.Computer = quincy.Running, tk.computer
			}
			tasks[n] = qt
		}
		st.Jobs = append(st.Jobs, quincy.Job{Root: &quincy.Root{Computer: j.root}, Tasks: tasks})
		refs = append(refs, ids)
	}
	if len(st.Jobs) == 0 {
		return nil
	}
	g, err := quincy.Build(st, s.pol, s.params)
	if err != nil {
		return fmt.Errorf("build: %w", err)
	}
	t1 := nowOf(clock)
	sol, err := flow.Solve(g.Net)
	if err != nil {
		return fmt.Errorf("solve %v: %w", g.Net, err)
	}
	t2 := nowOf(clock)
	sch, err := g.ReadSchedule(sol)
	if err != nil {
		return fmt.Errorf("read schedule: %w", err)
	}
	if err := st.Apply(sch); err != nil {
		return fmt.Errorf("apply: %w", err)
	}
	t3 := nowOf(clock)
	r := &e.res
	r.Solves++
	r.Moves += sch.Moved
	r.Preempts += sch.Killed
	r.MaxNodes, r.MaxArcs = max(r.MaxNodes, g.Net.NumNodes()), max(r.MaxArcs, g.Net.NumArcs())
	if clock != nil {
		d := t2.Sub(t1)
		r.solveTotal += d
		r.SolveMax = max(r.SolveMax, d)
		r.schedTotal += t3.Sub(t0)
		r.SolveMean = r.solveTotal / timeDiv(r.Solves)
		r.ScheduleMean = r.schedTotal / timeDiv(r.Solves)
	}
	s.quiet = true
	defer func() { s.quiet = false }()
	// Kills first, so that moved and started workers find their computers
	// free.
	for j := range sch.Tasks {
		for n, d := range sch.Tasks[j] {
			if d.Action == quincy.Move || d.Action == quincy.Preempt {
				e.kill(e.tasks[refs[j][n]])
			}
		}
	}
	for j := range sch.Tasks {
		for n, d := range sch.Tasks[j] {
			tk := e.tasks[refs[j][n]]
			if d.Action == quincy.Start || d.Action == quincy.Move {
				if err := e.start(tk, d.Computer); err != nil {
					return err
				}
			}
			// Apply has summed ν and θ over the spans that just ended;
			// the engine's own sums must agree.
			qt := &st.Jobs[j].Tasks[n]
			if tk.waitedBefore != qt.WaitedBefore || tk.ranBefore != qt.RanBefore {
				return fmt.Errorf("task %d: engine's ν, θ sums %v, %v differ from State.Apply's %v, %v",
					tk.id, tk.waitedBefore, tk.ranBefore, qt.WaitedBefore, qt.RanBefore)
			}
		}
	}
	for j, d := range sch.Roots {
		if d.Action == quincy.Start {
			return fmt.Errorf("job %d's root was placed by the solver; the simulator places roots", refs[j])
		}
	}
	e.dirty = false
	return nil
}
