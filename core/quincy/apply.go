package quincy

import (
	"fmt"
	"slices"
)

// Apply carries out a schedule read from a graph of s, at s.Now: started
// and moved workers run on their new computer from now, preempted ones
// wait from now, and unplaced roots that the schedule placed are placed.
// It keeps the time sums the Appendix's costs need: a worker that starts
// adds its current wait to WaitedBefore, and one that is killed (moved or
// preempted) adds its current run to RanBefore, so ν and θ keep summing
// every span. The simulator calls it after each solve.
func (s *State) Apply(sch *Schedule) error {
	if len(sch.Tasks) != len(s.Jobs) || len(sch.Roots) != len(s.Jobs) {
		return fmt.Errorf("quincy: schedule for %d jobs applied to a state of %d", len(sch.Tasks), len(s.Jobs))
	}
	for j := range s.Jobs {
		job := &s.Jobs[j]
		if len(sch.Tasks[j]) != len(job.Tasks) {
			return fmt.Errorf("quincy: schedule for %d tasks of job %d, state has %d", len(sch.Tasks[j]), j, len(job.Tasks))
		}
		if r := sch.Roots[j]; r.Action == Start && job.Root != nil {
			job.Root.Computer = r.Computer
		}
		for n := range job.Tasks {
			t := &job.Tasks[n]
			d := sch.Tasks[j][n]
			switch d.Action {
			case Start:
				t.WaitedBefore = t.waited(s.Now)
				t.State, t.Computer, t.Since = Running, d.Computer, s.Now
			case Move:
				t.RanBefore = t.ran(s.Now)
				t.Computer, t.Since = d.Computer, s.Now
			case Preempt:
				t.RanBefore = t.ran(s.Now)
				t.State, t.Computer, t.Since = Waiting, -1, s.Now
			}
		}
	}
	return nil
}

// Clone returns a deep copy of s, so that a caller can keep a snapshot
// while applying schedules to another.
func (s *State) Clone() *State {
	c := *s
	c.Cluster.Computers = append([]Computer(nil), s.Cluster.Computers...)
	c.Shares = slices.Clone(s.Shares)
	c.Jobs = make([]Job, len(s.Jobs))
	for j, job := range s.Jobs {
		c.Jobs[j].Tasks = make([]Task, len(job.Tasks))
		if job.Root != nil {
			r := *job.Root
			c.Jobs[j].Root = &r
		}
		for n, t := range job.Tasks {
			t.Input = append([]Block(nil), t.Input...)
			for b := range t.Input {
				t.Input[b].Replicas = append([]int(nil), t.Input[b].Replicas...)
			}
			c.Jobs[j].Tasks[n] = t
		}
	}
	return &c
}
