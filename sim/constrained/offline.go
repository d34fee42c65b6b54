package constrained

import (
	"fmt"

	"github.com/sparrowfleet/sparrow/core/cmmf"
)

// offline is the paper's Restricted Offline scheduler: a central
// scheduler with no network delay that, whenever slots are free and jobs
// have tasks waiting, assigns the free slots so that the allocation vector
// is the fairest (leximin) one reachable without migrating or preempting
// any running task (§6, §7.1).
//
// Each decision is one cmmf.SolveInteger: the machine types are the free
// slots of each type, and every waiting job also gets a private machine
// type holding as many slots as it runs tasks, so that its total counts
// its running tasks while nobody else can take them. Jobs with no task
// waiting keep their allocation whatever happens, and leximin does not
// depend on them (it is independent of unconcerned users), so they are
// left out.
type offline struct {
	*base
	free    [][]int32 // per type: nodes with a free slot, once per free slot
	waiting []int32   // arrived jobs with unlaunched tasks, in arrival order
	nodeOf  [][]int32 // per job: the node of each launched task
}

func newOffline(c *Cluster) *offline {
	o := &offline{base: newBase(c, Offline), free: make([][]int32, len(c.Model.Types)), nodeOf: make([][]int32, len(c.Jobs))}
	for i := len(c.Nodes) - 1; i >= 0; i-- {
		t := c.NodeType[i]
		for range c.Cfg.Slots {
			o.free[t] = append(o.free[t], int32(i))
		}
	}
	return o
}

func (o *offline) run() (*Trace, error) {
	for o.h.Len() > 0 && o.err == nil {
		e := o.h.next()
		o.now = e.t
		o.tr.Events++
		switch e.kind {
		case evArrival:
			o.arrive(e.job)
			o.waiting = append(o.waiting, e.job)
			o.assign()
		case evTaskDone:
			t := o.c.NodeType[e.node]
			o.free[t] = append(o.free[t], e.node)
			o.ended(e.job)
			o.assign()
		case evSample:
			o.sample()
		}
	}
	if o.err != nil {
		return nil, fmt.Errorf("offline: %w", o.err)
	}
	if !o.allDone() {
		return nil, fmt.Errorf("offline: %d of %d jobs never finished", len(o.c.Jobs)-o.finished, len(o.c.Jobs))
	}
	return o.tr, nil
}

// assign hands out the free slots by one restricted leximin solve.
func (o *offline) assign() {
	var users []int32
	for _, j := range o.waiting {
		for _, t := range o.c.Jobs[j].Types {
			if len(o.free[t]) > 0 {
				users = append(users, j)
				break
			}
		}
	}
	if len(users) == 0 {
		return
	}
	ws := make([]Waiting, len(users))
	for i, j := range users {
		ws[i] = Waiting{Name: o.c.Jobs[j].User, Types: o.c.Jobs[j].Types,
			Running: int64(o.js[j].running), Unlaunched: int64(o.js[j].unlaunched)}
	}
	alloc, err := RestrictedLeximin(o.typeNames, o.freeCounts(), ws)
	if err != nil {
		o.err = fmt.Errorf("at %.3f s: %w", o.now, err)
		return
	}
	o.tr.Solves++
	for i, j := range users {
		for t, x := range alloc[i] {
			for range x {
				n := o.free[t][len(o.free[t])-1]
				o.free[t] = o.free[t][:len(o.free[t])-1]
				task := len(o.c.Jobs[j].Dur) - int(o.js[j].unlaunched)
				o.launched(j)
				o.h.add(event{t: o.now + o.c.Jobs[j].Dur[task], kind: evTaskDone, node: n, job: j, task: int32(task)})
			}
		}
	}
	// Drop the jobs with nothing left to launch, keeping arrival order.
	k := 0
	for _, j := range o.waiting {
		if o.js[j].unlaunched > 0 {
			o.waiting[k] = j
			k++
		}
	}
	o.waiting = o.waiting[:k]
}

func (o *offline) freeCounts() []int64 {
	out := make([]int64, len(o.free))
	for t, f := range o.free {
		out[t] = int64(len(f))
	}
	return out
}

// Waiting is a job with tasks waiting, as the Restricted Offline
// scheduler sees it at a decision.
type Waiting struct {
	Name string
	// Types are the machine types (indices) the job may use.
	Types []int
	// Running tasks stay where they are; Unlaunched tasks wait.
	Running, Unlaunched int64
}

// RestrictedLeximin returns, for each waiting job, how many free slots of
// each machine type to give it: the leximin allocation of running + new
// tasks with running tasks left where they are, by cmmf.SolveInteger with
// one private type per job holding its running tasks. free[t] is type t's
// free slots; a job's demand is its running plus unlaunched tasks.
func RestrictedLeximin(typeNames []string, free []int64, users []Waiting) ([][]int64, error) {
	p := &cmmf.Problem{}
	for t, name := range typeNames {
		p.Types = append(p.Types, cmmf.MachineType{Name: name, Slots: free[t]})
	}
	for _, w := range users {
		own := "running/" + w.Name
		p.Types = append(p.Types, cmmf.MachineType{Name: own, Slots: w.Running})
		u := cmmf.User{Name: w.Name, Weight: 1, Demand: w.Running + w.Unlaunched, Types: []string{own}}
		for _, t := range w.Types {
			if free[t] > 0 {
				u.Types = append(u.Types, typeNames[t])
			}
		}
		p.Users = append(p.Users, u)
	}
	a, err := cmmf.SolveInteger(p)
	if err != nil {
		return nil, fmt.Errorf("restricted offline solve over %d users: %w", len(users), err)
	}
	// The private type is free for its owner, so the solver may still
	// route part of a user's total through free slots of another type
	// instead; the total is what leximin fixes. Take the user's new tasks
	// (total - running) from the free slots it was given, in type order:
	// any it was given beyond that are slots no other waiting user can
	// use (else giving one to them would be a leximin improvement).
	out := make([][]int64, len(users))
	for i, w := range users {
		n := a.Total[i] - w.Running
		row := make([]int64, len(typeNames))
		for t := range row {
			x := min(a.Matrix[i][t], n)
			row[t] = x
			n -= x
		}
		if n != 0 {
			return nil, fmt.Errorf("restricted offline solve: user %s was given %d slots beyond its free ones", w.Name, n)
		}
		out[i] = row
	}
	return out, nil
}
