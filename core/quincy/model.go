package quincy

import (
	"fmt"
	"time"
)

// Cluster is the hardware: computers in racks under one core switch (§2).
type Cluster struct {
	// Racks is the number of racks, L; racks are numbered 0..Racks-1.
	Racks int
	// Computers are the cluster's computers; a computer's index is its
	// number m everywhere in this package.
	Computers []Computer
}

// Computer is one machine of the cluster.
type Computer struct {
	// Rack is the rack the computer sits in, 0 <= Rack < Cluster.Racks.
	Rack int
	// Slots is how many tasks the computer runs at once. Zero means one,
	// Quincy's setting (§2.4); more is this package's generalisation.
	Slots int
}

// slots returns c's task capacity, reading the zero value as Quincy's one.
func (c Computer) slots() int {
	if c.Slots <= 0 {
		return 1
	}
	return c.Slots
}

// Block is a piece of a task's input stored on one or more computers
// (replicas). A task reading it reads the nearest replica: on its own
// computer if there is one, else in its rack, else across the core switch.
type Block struct {
	// Bytes is the block's size.
	Bytes int64
	// Replicas are the computers holding a copy.
	Replicas []int
}

// TaskState says whether a task waits for a computer or runs on one.
type TaskState int

const (
	// Waiting tasks are submitted but not running.
	Waiting TaskState = iota
	// Running tasks run on their Computer.
	Running
)

// String names the state.
func (s TaskState) String() string {
	switch s {
	case Waiting:
		return "waiting"
	case Running:
		return "running"
	}
	return fmt.Sprintf("TaskState(%d)", int(s))
}

// Task is a worker task w_n^j as the scheduler sees it: where its input
// is, and its state with the times the Appendix's costs need. Times are
// durations since an epoch of the caller's choosing, the same as
// State.Now's.
type Task struct {
	// Input is the data the task reads; the preferred computers and racks
	// and all its data costs are derived from it (§2.3, Appendix).
	Input []Block
	// State is Waiting or Running.
	State TaskState
	// Computer is where a Running task runs; ignored when Waiting.
	Computer int
	// Since is when the task entered its current state (began waiting, or
	// began running on Computer).
	Since time.Duration
	// WaitedBefore is the time the task spent unscheduled in earlier
	// spans, before it was last started: ν sums every span (Appendix).
	WaitedBefore time.Duration
	// RanBefore is the time the task ran in earlier attempts that were
	// killed: θ sums every attempt, which starvation-freedom needs.
	RanBefore time.Duration
}

// waited returns ν, the total time t has spent unscheduled up to now.
func (t *Task) waited(now time.Duration) time.Duration {
	if t.State == Waiting && now > t.Since {
		return t.WaitedBefore + now - t.Since
	}
	return t.WaitedBefore
}

// ran returns θ, the total time t has spent running up to now.
func (t *Task) ran(now time.Duration) time.Duration {
	if t.State == Running && now > t.Since {
		return t.RanBefore + now - t.Since
	}
	return t.RanBefore
}

// Root is a job's root task (§2.1): it runs for the job's whole life and is
// never preempted once placed.
type Root struct {
	// Computer is where the root runs, or -1 if the scheduler has yet to
	// place it (then it is placed through X at cost 0, Appendix).
	Computer int
}

// Job is one admitted job j: its root task and its submitted workers,
// waiting and running alike (N_j counts both, §3.3).
type Job struct {
	// Root is the job's root task, or nil for a job without one (a Sparrow
	// job, whose scheduler plays the root's part). Quincy's jobs all have
	// one.
	Root *Root
	// Tasks are the job's worker tasks.
	Tasks []Task
}

// State is a snapshot of the cluster and its admitted jobs at time Now.
type State struct {
	// Now is the snapshot's time, on the same epoch as the tasks' times.
	Now time.Duration
	// Cluster is the hardware.
	Cluster Cluster
	// Jobs are the admitted (running) jobs; K of §3.3 is len(Jobs).
	Jobs []Job
	// Shares, if not nil, replaces §3.3's equal fair shares A_j with the
	// caller's (one per job, e.g. weighted or CMMF shares, as §2.4 allows);
	// each is clamped to [0, N_j].
	Shares []int
}

// Validate checks that the snapshot is well formed: racks and computers
// in range, running tasks and placed roots on real computers, no computer
// holding more running tasks and roots than it has slots.
func (s *State) Validate() error {
	c := &s.Cluster
	if c.Racks <= 0 {
		return fmt.Errorf("quincy: cluster has %d racks, want at least 1", c.Racks)
	}
	if len(c.Computers) == 0 {
		return fmt.Errorf("quincy: cluster has no computers")
	}
	for m, comp := range c.Computers {
		if comp.Rack < 0 || comp.Rack >= c.Racks {
			return fmt.Errorf("quincy: computer %d in rack %d, want 0..%d", m, comp.Rack, c.Racks-1)
		}
	}
	if s.Shares != nil && len(s.Shares) != len(s.Jobs) {
		return fmt.Errorf("quincy: %d shares for %d jobs", len(s.Shares), len(s.Jobs))
	}
	used := make([]int, len(c.Computers))
	for j := range s.Jobs {
		job := &s.Jobs[j]
		if job.Root != nil && job.Root.Computer >= 0 {
			if job.Root.Computer >= len(c.Computers) {
				return fmt.Errorf("quincy: job %d: root on computer %d, cluster has %d", j, job.Root.Computer, len(c.Computers))
			}
			used[job.Root.Computer]++
		}
		for n := range job.Tasks {
			t := &job.Tasks[n]
			switch t.State {
			case Waiting:
			case Running:
				if t.Computer < 0 || t.Computer >= len(c.Computers) {
					return fmt.Errorf("quincy: job %d task %d: running on computer %d, cluster has %d", j, n, t.Computer, len(c.Computers))
				}
				used[t.Computer]++
			default:
				return fmt.Errorf("quincy: job %d task %d: unknown state %d", j, n, int(t.State))
			}
			if t.WaitedBefore < 0 || t.RanBefore < 0 {
				return fmt.Errorf("quincy: job %d task %d: negative accumulated time", j, n)
			}
			for b, blk := range t.Input {
				if blk.Bytes < 0 {
					return fmt.Errorf("quincy: job %d task %d block %d: %d bytes", j, n, b, blk.Bytes)
				}
				for _, m := range blk.Replicas {
					if m < 0 || m >= len(c.Computers) {
						return fmt.Errorf("quincy: job %d task %d block %d: replica on computer %d, cluster has %d", j, n, b, m, len(c.Computers))
					}
				}
			}
		}
	}
	for m, u := range used {
		if k := c.Computers[m].slots(); u > k {
			return fmt.Errorf("quincy: computer %d runs %d tasks and roots but has %d slots", m, u, k)
		}
	}
	return nil
}
