package constrained

import (
	"fmt"
	"math/rand/v2"
	"strconv"

	"github.com/sparrowfleet/sparrow/core/fairshare"
	"github.com/sparrowfleet/sparrow/core/placement"
	"github.com/sparrowfleet/sparrow/core/queue"
	"github.com/sparrowfleet/sparrow/core/slots"
)

// simApp is the application every reservation is for.
const simApp = "sim"

// online is a Sparrow run: schedulers doing batch sampling with late
// binding over the nodes that satisfy each job's constraints, and node
// monitors running slots.Core over the policy's queue discipline.
type online struct {
	*base
	half    float64
	place   *rand.Rand
	sampler placement.Sampler
	addrIdx map[string]int32
	cores   []*slots.Core
	choosy  []*queue.Choosy // nil for Fair
	exact   bool
	version uint64
	// global is each user's cluster-wide running tasks, for ChoosyExact.
	global map[string]float64
	// dirty records whether any node's usage (queued or running work)
	// may have changed since the last guidance; an unchanged cluster
	// would get the same guidance, so refresh skips the computation.
	dirty bool

	reqs  []*placement.Request
	tasks [][]placement.Task
	probe [][]int32 // nodes holding each job's reservations, and counts
	count [][]int32
	reqOf map[string]int32
}

func newOnline(c *Cluster, p Policy) (*online, error) {
	o := &online{
		base:    newBase(c, p),
		half:    c.Cfg.RTT / 2,
		place:   rand.New(rand.NewPCG(c.Cfg.Seed, placeStream)),
		addrIdx: make(map[string]int32, len(c.Nodes)),
		cores:   make([]*slots.Core, len(c.Nodes)),
		exact:   p == ChoosyExact,
		global:  map[string]float64{},
		reqs:    make([]*placement.Request, len(c.Jobs)),
		tasks:   make([][]placement.Task, len(c.Jobs)),
		probe:   make([][]int32, len(c.Jobs)),
		count:   make([][]int32, len(c.Jobs)),
		reqOf:   make(map[string]int32, len(c.Jobs)),
	}
	if p != Fair {
		o.choosy = make([]*queue.Choosy, len(c.Nodes))
	}
	for i, n := range c.Nodes {
		o.addrIdx[n.Addr] = int32(i)
		var q queue.Discipline
		if o.choosy != nil {
			ch, err := queue.NewChoosy(1, nil)
			if err != nil {
				return nil, err
			}
			o.choosy[i], q = ch, ch
		} else {
			f, err := queue.NewFair(1, nil)
			if err != nil {
				return nil, err
			}
			q = f
		}
		core, err := slots.New(c.Cfg.Slots, q)
		if err != nil {
			return nil, err
		}
		core.AddApp(simApp)
		o.cores[i] = core
	}
	if p == Choosy {
		o.h.add(event{t: c.Cfg.Period, kind: evRefresh})
	}
	return o, nil
}

func (o *online) run() (*Trace, error) {
	for o.h.Len() > 0 && o.err == nil {
		e := o.h.next()
		o.now = e.t
		o.tr.Events++
		switch e.kind {
		case evArrival:
			o.arrival(e.job)
		case evEnqueue:
			o.enqueue(e.job)
		case evGetTask:
			o.getTask(e.node, e.job)
		case evReply:
			o.reply(e.node, e.job, e.task)
		case evTaskDone:
			o.taskDone(e.node, e.job, e.task)
		case evCancel:
			o.cancel(e.job)
		case evRefresh:
			o.refresh()
		case evSample:
			o.sample()
		}
	}
	if o.err != nil {
		return nil, fmt.Errorf("%s: %w", o.tr.Policy, o.err)
	}
	if !o.allDone() {
		return nil, fmt.Errorf("%s: %d of %d jobs never finished", o.tr.Policy, len(o.c.Jobs)-o.finished, len(o.c.Jobs))
	}
	return o.tr, nil
}

func (o *online) reservation(j int32) queue.Reservation {
	return queue.Reservation{RequestID: strconv.Itoa(int(j)), App: simApp, User: o.c.Jobs[j].User}
}

// arrival is the scheduler filtering the nodes by the job's constraints
// and planning its reservations, as scheduler.Submit does.
func (o *online) arrival(j int32) {
	o.arrive(j)
	job := &o.c.Jobs[j]
	cand, err := placement.Filter(o.c.Nodes, job.Constraints)
	if err != nil {
		o.err = fmt.Errorf("job %d: %w", j, err)
		return
	}
	tasks := make([]placement.Task, len(job.Dur))
	for k := range tasks {
		tasks[k] = placement.Task{ID: strconv.Itoa(k)}
	}
	probes, err := o.sampler.Plan(o.place, cand, tasks, o.c.Cfg.ProbeRatio)
	if err != nil {
		o.err = fmt.Errorf("job %d: %w", j, err)
		return
	}
	id := strconv.Itoa(int(j))
	req := placement.NewRequest(id, tasks)
	req.AddProbes(probes)
	o.reqs[j], o.tasks[j], o.reqOf[id] = req, tasks, j
	for _, p := range probes {
		o.probe[j] = append(o.probe[j], o.addrIdx[p.Node.Addr])
		o.count[j] = append(o.count[j], int32(p.Count))
	}
	o.h.add(event{t: o.now + o.half, kind: evEnqueue, node: -1, job: j})
}

func (o *online) enqueue(j int32) {
	o.dirty = true
	r := o.reservation(j)
	for k, n := range o.probe[j] {
		if err := o.cores[n].Enqueue(r, int(o.count[j][k])); err != nil {
			o.err = fmt.Errorf("node %d: %w", n, err)
			return
		}
		o.drain(n)
	}
	o.probe[j], o.count[j] = nil, nil
}

// drain hands queued reservations to free slots on node n. Under
// ChoosyExact the node is given the exact cluster-wide counts before
// each decision.
func (o *online) drain(n int32) {
	c := o.cores[n]
	for c.Free() > 0 && c.Queued() > 0 {
		if o.exact {
			o.version++
			if _, err := o.choosy[n].SetShares(o.version, o.global); err != nil {
				o.err = err
				return
			}
		}
		r, ok := c.Next()
		if !ok {
			return
		}
		o.dirty = true
		j, found := o.reqOf[r.RequestID]
		if !found {
			o.err = fmt.Errorf("node %d: reservation of unknown request %q", n, r.RequestID)
			return
		}
		o.h.add(event{t: o.now + o.half, kind: evGetTask, node: n, job: j, task: -1})
	}
}

// getTask is the scheduler answering with placement.Request.Assign, and
// cancelling the job's other reservations once every task is launched.
func (o *online) getTask(n, j int32) {
	task := int32(-1)
	if req := o.reqs[j]; req != nil {
		if i, ok := req.Assign(o.c.Nodes[n].Addr); ok {
			task = int32(i)
			if req.Launched() {
				for _, p := range req.Outstanding() {
					o.probe[j] = append(o.probe[j], o.addrIdx[p.Node.Addr])
				}
				o.reqs[j] = nil
				if len(o.probe[j]) > 0 {
					o.h.add(event{t: o.now + o.half, kind: evCancel, node: -1, job: j})
				}
			}
		}
	}
	o.h.add(event{t: o.now + o.half, kind: evReply, node: n, job: j, task: task})
}

func (o *online) cancel(j int32) {
	o.dirty = true
	id := strconv.Itoa(int(j))
	for _, n := range o.probe[j] {
		o.cores[n].Cancel(id)
	}
	o.probe[j] = nil
}

func (o *online) reply(n, j, task int32) {
	c := o.cores[n]
	if task < 0 {
		c.Released()
		o.drain(n)
		return
	}
	key := slots.TaskKey{RequestID: strconv.Itoa(int(j)), TaskID: o.tasks[j][task].ID}
	if !c.Start(key, o.reservation(j)) {
		o.err = fmt.Errorf("node %d: task %s/%s launched twice", n, key.RequestID, key.TaskID)
		return
	}
	o.launched(j)
	o.dirty = true
	o.global[o.c.Jobs[j].User]++
	o.h.add(event{t: o.now + o.c.Jobs[j].Dur[task], kind: evTaskDone, node: n, job: j, task: task})
	o.drain(n)
}

func (o *online) taskDone(n, j, task int32) {
	key := slots.TaskKey{RequestID: strconv.Itoa(int(j)), TaskID: o.tasks[j][task].ID}
	if !o.cores[n].Finished(key) {
		o.err = fmt.Errorf("node %d: finished task %s/%s was not running", n, key.RequestID, key.TaskID)
		return
	}
	o.dirty = true
	u := o.c.Jobs[j].User
	if o.global[u]--; o.global[u] <= 0 {
		delete(o.global, u)
	}
	o.ended(j)
	if o.js[j].done {
		o.tasks[j] = nil
		delete(o.reqOf, strconv.Itoa(int(j)))
	}
	o.drain(n)
}

// refresh is one coordinator period: every node's usage report goes
// through fairshare.Compute, and every Choosy queue installs the running
// counts and its machine type's CMMF allocation (queue.Choosy.SetGuidance,
// as nodemonitor.ApplyGuidance does).
// Gossip delay is not modelled: the guidance reaches every node at once.
// A period in which no node's usage changed is skipped: its guidance
// would be the same counts, and every node's own accounting is already
// zero (no launch or finish since), so installing it changes nothing.
func (o *online) refresh() {
	if !o.dirty {
		if !o.allDone() {
			o.h.add(event{t: o.now + o.c.Cfg.Period, kind: evRefresh})
		}
		return
	}
	o.dirty = false
	reports := make([]fairshare.NodeReport, len(o.cores))
	for i, c := range o.cores {
		users := map[string]fairshare.Usage{}
		for u, use := range c.Usage() {
			users[u] = fairshare.Usage{Queued: use.Queued, Running: use.Running}
		}
		reports[i] = fairshare.NodeReport{Node: o.c.Nodes[i].Name, Type: o.c.Model.Types[o.c.NodeType[i]].Name,
			Slots: c.Slots(), Users: users}
	}
	g, err := fairshare.Compute(reports, func(string) float64 { return 1 })
	if err != nil {
		o.err = fmt.Errorf("coordinator at %.3f s: %w", o.now, err)
		return
	}
	running := make(map[string]float64, len(g.Running))
	for u, n := range g.Running {
		running[u] = float64(n)
	}
	o.version++
	for i, ch := range o.choosy {
		alloc := g.TypeWeights[o.c.Model.Types[o.c.NodeType[i]].Name]
		if _, err := ch.SetGuidance(o.version, running, alloc); err != nil {
			o.err = err
			return
		}
	}
	o.tr.Guidance++
	if !o.allDone() {
		o.h.add(event{t: o.now + o.c.Cfg.Period, kind: evRefresh})
	}
}
