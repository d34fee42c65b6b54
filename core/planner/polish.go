package planner

import (
	"cmp"
	"slices"
)

// polishMachines is how many of a task's fastest machines a sweep move
// tries; tasks on the critical chain try every machine.
const polishMachines = 5

// polish improves the incumbent by single-task moves, keeping any move
// that shortens the predicted makespan: first the tasks on the incumbent's
// critical chain, each to every machine, while that helps; then every task
// in priority order to its polishMachines fastest machines (by lbDur), and
// back to the chain after any gain, until a whole sweep finds nothing or
// the budget runs out. Branch and bound's dives on a large problem rarely
// revisit early choices; moves do, cheaply, and a better incumbent prunes
// more. Each evaluation counts as a node.
func (s *search) polish() {
	in := s.in
	fast := make([][]int, in.n)
	all := make([]int, in.m)
	for i := range all {
		all[i] = i
	}
	for t := range in.n {
		ms := slices.Clone(all)
		slices.SortStableFunc(ms, func(a, b int) int { return cmp.Compare(in.lbDur[t][a], in.lbDur[t][b]) })
		fast[t] = ms[:min(polishMachines, in.m)]
	}
	assign := slices.Clone(s.best.Machine)
	// try moves t to each of ms and keeps the best improving move.
	try := func(t int, ms []int) (improved, stop bool) {
		orig := assign[t]
		for _, m := range ms {
			if m == orig {
				continue
			}
			// An evaluation costs as much as many nodes: read the clock each time.
			if s.out() || (s.opt.Clock != nil && s.opt.Clock() >= s.opt.TimeLimit) {
				assign[t] = orig
				return improved, true
			}
			s.stats.Nodes++
			assign[t] = m
			plan, err := in.simulate(assign)
			if err != nil {
				s.err = err
				return false, true
			}
			if plan.Makespan < s.best.Makespan-eps*s.best.Makespan {
				s.best, orig, improved = plan, m, true
				s.stats.Improvements = append(s.stats.Improvements, Improvement{Node: s.stats.Nodes, Time: s.now(), Makespan: plan.Makespan})
			}
		}
		assign[t] = orig
		return improved, false
	}
	for {
		// The critical chain, to a local optimum.
		for again := true; again; {
			again = false
			for _, t := range s.critical() {
				imp, stop := try(t, all)
				if stop {
					return
				}
				if imp {
					again = true
					break // the chain has changed
				}
			}
		}
		swept := false
		for _, t := range in.prio {
			imp, stop := try(t, fast[t])
			if stop {
				return
			}
			if imp {
				swept = true
				break
			}
		}
		if !swept {
			return
		}
	}
}

// critical returns the incumbent's critical chain, last task first: from
// the task that finishes last, repeatedly the producer or the machine
// predecessor whose finish (a pipelined producer's start) set its start.
func (s *search) critical() []int {
	in, p := s.in, s.best
	const slack = 1e-9
	prev := make([]int, in.n) // machine predecessor
	for _, order := range p.Order {
		for i, t := range order {
			prev[t] = -1
			if i > 0 {
				prev[t] = order[i-1]
			}
		}
	}
	t := 0
	for u := range in.n {
		if p.Finish[u] > p.Finish[t] {
			t = u
		}
	}
	var chain []int
	for t >= 0 && len(chain) < in.n {
		chain = append(chain, t)
		next, at := -1, -1.0
		if q := prev[t]; q >= 0 && p.Finish[q] <= p.Start[t]+slack {
			next, at = q, p.Finish[q]
		}
		for _, a := range in.in[t] {
			ready := p.Finish[a.from]
			if a.pipe {
				ready = p.Start[a.from]
			}
			if ready <= p.Start[t]+slack && ready > at {
				next, at = a.from, ready
			}
		}
		if at < p.Start[t]-slack*max(1, p.Start[t]) {
			break // nothing set its start: it began at time 0 or when resources allowed
		}
		t = next
	}
	return chain
}
