package constrained

import (
	"container/heap"
	"fmt"
	"slices"

	"github.com/sparrowfleet/sparrow/core/cmmf"
	"github.com/sparrowfleet/sparrow/core/placement"
)

// Cluster is the simulated cluster and workload, shared by every policy so
// that all of them see the same nodes and the same jobs.
type Cluster struct {
	Cfg   Config
	Model Model
	Nodes []placement.Node
	// NodeType is each node's machine type (Model.Types index).
	NodeType []int
	// TypeSlots is each machine type's total slots.
	TypeSlots []int64
	Jobs      []Job
}

// NewCluster builds the nodes and draws the workload of cfg.
func NewCluster(cfg Config) (*Cluster, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	m := cfg.model()
	nodes, types := m.Nodes(cfg.Nodes)
	c := &Cluster{Cfg: cfg, Model: m, Nodes: nodes, NodeType: types, TypeSlots: make([]int64, len(m.Types))}
	for _, t := range types {
		c.TypeSlots[t] += int64(cfg.Slots)
	}
	c.Jobs = Workload(cfg, typeNodes(nodes, types, len(m.Types)))
	return c, nil
}

// TotalSlots is the cluster's slot count.
func (c *Cluster) TotalSlots() int64 { return int64(c.Cfg.Nodes) * int64(c.Cfg.Slots) }

// Share is one user's allocation at a sample.
type Share struct {
	Job     int32
	Running int32
}

// Trace is one policy's run: allocation samples and job response times.
type Trace struct {
	Policy Policy
	// Samples[k] lists, at time k*Cfg.Sample, every active job (arrived,
	// not finished) with its running tasks, by job index.
	Samples [][]Share
	// IdealRMSE[k] is the RMSE, in % of the cluster's slots, between the
	// sorted allocation vector at sample k and the integer CMMF allocation
	// (cmmf.SolveInteger) of the same active jobs' remaining tasks: what a
	// scheduler that migrates and preempts for free would hold. NaN where
	// no job was active.
	IdealRMSE []float64
	// Response is each job's response time (arrival to last task's end).
	Response []float64
	// Tasks launched, events processed, offline solves.
	Tasks, Events, Solves int64
	// Guidance counts coordinator refreshes (Choosy).
	Guidance int64
}

// evKind is an event kind.
type evKind uint8

const (
	evArrival evKind = iota
	evEnqueue        // a job's reservations reach their nodes
	evGetTask        // a node's getTask reaches the scheduler
	evReply          // the scheduler's reply reaches the node
	evTaskDone
	evCancel  // a job's cancellations reach their nodes
	evRefresh // the coordinator's guidance reaches the nodes
	evSample
)

type event struct {
	t    float64
	seq  uint64
	kind evKind
	node int32
	job  int32
	task int32
}

// events is a min-heap on (t, seq): equal-time events run in scheduling
// order, so a run is a function of its inputs alone.
type events struct {
	ev  []event
	seq uint64
}

func (h *events) Len() int { return len(h.ev) }
func (h *events) Less(i, j int) bool {
	a, b := &h.ev[i], &h.ev[j]
	return a.t < b.t || (a.t == b.t && a.seq < b.seq)
}
func (h *events) Swap(i, j int) { h.ev[i], h.ev[j] = h.ev[j], h.ev[i] }
func (h *events) Push(x any)    { h.ev = append(h.ev, x.(event)) }
func (h *events) Pop() any {
	e := h.ev[len(h.ev)-1]
	h.ev = h.ev[:len(h.ev)-1]
	return e
}

func (h *events) add(e event) {
	e.seq = h.seq
	h.seq++
	heap.Push(h, e)
}

func (h *events) next() event { return heap.Pop(h).(event) }

// jobState is a job's progress in one policy's run.
type jobState struct {
	arrived    bool
	done       bool
	left       int32 // tasks not finished
	unlaunched int32
	running    int32
	finish     float64
}

// base is the bookkeeping every policy shares: clock, events, job
// progress, samples and the ideal CMMF reference.
type base struct {
	c        *Cluster
	tr       *Trace
	now      float64
	h        events
	js       []jobState
	active   []int32 // arrived, unfinished jobs, in arrival order
	finished int
	err      error
	nextProg float64
	// Reused for the ideal CMMF solve at each sample.
	typeNames []string
}

func newBase(c *Cluster, p Policy) *base {
	b := &base{c: c, tr: &Trace{Policy: p, Response: make([]float64, len(c.Jobs))}, js: make([]jobState, len(c.Jobs))}
	for i, j := range c.Jobs {
		b.js[i] = jobState{left: int32(len(j.Dur)), unlaunched: int32(len(j.Dur))}
		b.h.add(event{t: j.Arrival, kind: evArrival, job: int32(i)})
	}
	for _, t := range c.Model.Types {
		b.typeNames = append(b.typeNames, t.Name)
	}
	b.h.add(event{t: 0, kind: evSample})
	return b
}

func (b *base) allDone() bool { return b.finished == len(b.c.Jobs) }

func (b *base) arrive(j int32) {
	b.js[j].arrived = true
	b.active = append(b.active, j)
}

// launched records a task start of job j.
func (b *base) launched(j int32) {
	s := &b.js[j]
	s.unlaunched--
	s.running++
	b.tr.Tasks++
}

// ended records a task end of job j, and the job's end with its last task.
func (b *base) ended(j int32) {
	s := &b.js[j]
	s.running--
	s.left--
	if s.left == 0 {
		s.done, s.finish = true, b.now
		b.tr.Response[j] = b.now - b.c.Jobs[j].Arrival
		b.finished++
		b.active = slices.DeleteFunc(b.active, func(x int32) bool { return x == j })
	}
}

// sample records the allocation, its distance from the ideal CMMF
// allocation, reports progress and schedules the next sample.
func (b *base) sample() {
	shares := make([]Share, len(b.active))
	for i, j := range b.active {
		shares[i] = Share{Job: j, Running: b.js[j].running}
	}
	b.tr.Samples = append(b.tr.Samples, shares)
	rmse, err := b.idealRMSE(shares)
	if err != nil {
		b.err = err
		return
	}
	b.tr.IdealRMSE = append(b.tr.IdealRMSE, rmse)
	if f := b.c.Cfg.Progress; f != nil && b.now >= b.nextProg {
		f(b.tr.Policy, b.now)
		b.nextProg = b.now + b.c.Cfg.Duration/20
	}
	if !b.allDone() {
		b.h.add(event{t: float64(len(b.tr.Samples)) * b.c.Cfg.Sample, kind: evSample})
	}
}

// idealRMSE solves the integer CMMF allocation of the active jobs'
// remaining tasks over the whole cluster and compares sorted vectors.
func (b *base) idealRMSE(shares []Share) (float64, error) {
	if len(shares) == 0 {
		return nan, nil
	}
	p := &cmmf.Problem{}
	for t, name := range b.typeNames {
		p.Types = append(p.Types, cmmf.MachineType{Name: name, Slots: b.c.TypeSlots[t]})
	}
	for _, s := range shares {
		job := &b.c.Jobs[s.Job]
		u := cmmf.User{Name: job.User, Weight: 1, Demand: int64(b.js[s.Job].left)}
		for _, t := range job.Types {
			u.Types = append(u.Types, b.typeNames[t])
		}
		p.Users = append(p.Users, u)
	}
	a, err := cmmf.SolveInteger(p)
	if err != nil {
		return 0, fmt.Errorf("ideal CMMF at %.3f s: %w", b.now, err)
	}
	got := make([]float64, len(shares))
	want := make([]float64, len(shares))
	for i, s := range shares {
		got[i] = float64(s.Running)
		want[i] = float64(a.Total[i])
	}
	return SortedRMSE(got, want, float64(b.c.TotalSlots())), nil
}
