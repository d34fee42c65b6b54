package client

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/sparrowfleet/sparrow/core/perfmodel"
	"github.com/sparrowfleet/sparrow/core/planner"
)

// A frontend runs a task graph planned for a small heterogeneous cluster
// (core/planner, after Peter et al., ETH TR-756) by submitting each task,
// once its inputs are ready, as a one-task job pinned to its planned node.
// The plan is made here, in the client, not in the coordinator: it is one
// job's business, it needs only the profiles of the live nodes, it takes
// the planner a fraction of a second, and the fleet must run without a
// coordinator. Frontends that submit plain jobs are unaffected.

// GraphNode is a live node monitor a task graph may run on.
type GraphNode struct {
	// Host is what the pinned tasks' placement preferences name: the node
	// monitor's host or gossip member name.
	Host string
	// Profile is the machine's performance profile, e.g. parsed from its
	// perfmodel.ProfileAttr attribute by GraphNodeFromAttrs.
	Profile perfmodel.Machine
}

// GraphNodeFromAttrs reads a node monitor's profile from its advertised
// attributes (`sparrow nodemonitor --profile`).
func GraphNodeFromAttrs(host string, attrs map[string]string) (GraphNode, error) {
	v, ok := attrs[perfmodel.ProfileAttr]
	if !ok {
		return GraphNode{}, fmt.Errorf("node %s advertises no %q attribute (start it with --profile)", host, perfmodel.ProfileAttr)
	}
	m, err := perfmodel.ParseProfile(host, v)
	if err != nil {
		return GraphNode{}, err
	}
	return GraphNode{Host: host, Profile: m}, nil
}

// GraphJob is a task graph to run.
type GraphJob struct {
	Graph  planner.Graph
	Models map[string]perfmodel.Model
	// Message gives a task's launch message for the executor on node
	// (nil: empty messages). It is asked again when a task moves to a
	// fallback node.
	Message func(task planner.Task, node GraphNode) []byte
	User    User
}

// GraphOptions tune RunGraph.
type GraphOptions struct {
	// PlanTime bounds the planner (0: one second). At the limit it returns
	// the best plan found so far, at worst Dryad's greedy one.
	PlanTime time.Duration
	// MaxAttempts bounds how often a task is submitted (0: 3).
	MaxAttempts int
	// Plan, if set, is carried out instead of planning: a plan made
	// earlier over the same nodes, in the same order, or Dryad's greedy
	// schedule (planner.Greedy) as a baseline.
	Plan *planner.Plan
}

// GraphTask is one task's outcome.
type GraphTask struct {
	Name string
	// Node is where it ran; Fallback is set when its planned node was
	// lost and the greedy rule chose this one.
	Node     string
	Fallback bool
	Attempts int
	// Submitted and Finished are when its last attempt was submitted and
	// when the frontend heard it finished.
	Submitted, Finished time.Time
}

// GraphResult is a finished task graph.
type GraphResult struct {
	Plan  planner.Plan
	Stats planner.Stats
	// Nodes are the plan's machines, in the plan's machine order.
	Nodes []GraphNode
	Tasks []GraphTask
	// Makespan is from the first submission to the last task's end.
	Makespan time.Duration
}

// ErrTaskAttempts is wrapped when a task failed MaxAttempts times.
var ErrTaskAttempts = errors.New("task failed every attempt")

// PlanGraph plans job over nodes with the planner, within opt.PlanTime.
func PlanGraph(job GraphJob, nodes []GraphNode, opt GraphOptions) (planner.Problem, planner.Plan, planner.Stats, error) {
	p := problemOf(job, nodes)
	limit := opt.PlanTime
	if limit <= 0 {
		limit = time.Second
	}
	start := time.Now()
	clock := func() float64 { return time.Since(start).Seconds() }
	plan, stats, err := planner.Solve(p, planner.Options{Clock: clock, TimeLimit: limit.Seconds()})
	if err != nil {
		return p, plan, stats, fmt.Errorf("plan task graph: %w", err)
	}
	return p, plan, stats, nil
}

// problemOf is the planner's problem for job over nodes: machines named by
// host, in the nodes' order.
func problemOf(job GraphJob, nodes []GraphNode) planner.Problem {
	p := planner.Problem{Graph: job.Graph, Models: job.Models}
	for _, n := range nodes {
		m := n.Profile
		m.Name = n.Host
		p.Machines = append(p.Machines, m)
	}
	return p
}

// GraphRun is a task graph being run by a Frontend. The frontend's
// OnMessage must hand every message to Deliver, which takes this run's.
// Safe for concurrent use.
type GraphRun struct {
	f      *Frontend
	job    GraphJob
	nodes  []GraphNode
	opt    GraphOptions
	prefix string
	res    GraphResult

	mu      sync.Mutex
	d       *planner.Dispatcher
	index   map[string]int // task name → index
	on      map[int]int    // outstanding task → machine
	attempt map[string]int // request id → task, for this run's messages
	wake    chan struct{}
	err     error
	start   time.Time
	// pause is when submitting may resume after a refused submission
	// (a saturated fleet): the k-th refusal in a row pauses
	// graphBackoff.Delay(k, the scheduler's suggestion, a draw), and a
	// success resets k.
	pause    time.Time
	refusals int
}

// graphBackoff shapes the pause after refused submissions.
var graphBackoff = Backoff{Base: 100 * time.Millisecond, Max: 5 * time.Second}

// NewGraphRun plans job over nodes (or takes opt.Plan) and returns the
// run; nothing is submitted until Wait. Install the run where the
// frontend's OnMessage can reach it before calling Wait: the first
// messages can come back at once.
func (f *Frontend) NewGraphRun(job GraphJob, nodes []GraphNode, opt GraphOptions) (*GraphRun, error) {
	var (
		p     planner.Problem
		plan  planner.Plan
		stats planner.Stats
		err   error
	)
	if opt.Plan != nil {
		p, plan = problemOf(job, nodes), *opt.Plan
	} else if p, plan, stats, err = PlanGraph(job, nodes, opt); err != nil {
		return nil, err
	}
	d, err := planner.NewDispatcher(p, plan)
	if err != nil {
		return nil, err
	}
	if opt.MaxAttempts <= 0 {
		opt.MaxAttempts = 3
	}
	f.mu.Lock()
	f.nextID++
	prefix := fmt.Sprintf("%s-%s-g%d/", f.cfg.App, f.prefix, f.nextID)
	f.mu.Unlock()
	r := &GraphRun{f: f, job: job, nodes: nodes, opt: opt, prefix: prefix, d: d,
		index: map[string]int{}, on: map[int]int{}, attempt: map[string]int{},
		wake: make(chan struct{}, 1), start: time.Now()}
	r.res = GraphResult{Plan: plan, Stats: stats, Nodes: nodes, Tasks: make([]GraphTask, len(job.Graph.Tasks))}
	for i, t := range job.Graph.Tasks {
		r.index[t.Name] = i
		r.res.Tasks[i].Name = t.Name
	}
	return r, nil
}

// Deliver takes a frontend message if it is about one of this run's
// tasks, and reports whether it was.
func (r *GraphRun) Deliver(m Message) bool {
	if !strings.HasPrefix(m.Task.RequestID, r.prefix) {
		return false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	t, ok := r.attempt[m.Task.RequestID]
	if !ok {
		return true // an old attempt's message, already accounted for
	}
	delete(r.attempt, m.Task.RequestID)
	mach := r.on[t]
	delete(r.on, t)
	var err error
	switch m.Status {
	case StatusOK:
		r.res.Tasks[t].Finished = time.Now()
		err = r.d.Finished(t)
	case StatusLost:
		// The fleet lost the node the task ran on: MachineLost puts the
		// task back to wait, and the node's other tasks fall back.
		err = r.lostLocked(t, mach)
	default:
		err = r.d.Failed(t)
	}
	if err != nil && r.err == nil {
		r.err = fmt.Errorf("task graph: task %q: %w", r.res.Tasks[t].Name, err)
	}
	r.signal()
	return true
}

// lostLocked marks machine mach lost while t was outstanding on it.
// Called with r.mu held.
func (r *GraphRun) lostLocked(t, mach int) error {
	back, err := r.d.MachineLost(mach)
	if err != nil {
		return err
	}
	if back != t {
		return r.d.Failed(t)
	}
	return nil
}

func (r *GraphRun) signal() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// submitReady submits every task the dispatcher releases. A pinned task
// whose node the scheduler no longer sees marks the node lost, so its
// tasks fall back to the other nodes.
func (r *GraphRun) submitReady(ctx context.Context) {
	for {
		r.mu.Lock()
		if r.err != nil || time.Now().Before(r.pause) {
			r.mu.Unlock()
			return
		}
		next := r.d.Next()
		r.mu.Unlock()
		if len(next) == 0 {
			return
		}
		for _, a := range next {
			r.submit(ctx, a)
		}
	}
}

func (r *GraphRun) submit(ctx context.Context, a planner.Assignment) {
	task, node := r.job.Graph.Tasks[a.Task], r.nodes[a.Machine]
	r.mu.Lock()
	gt := &r.res.Tasks[a.Task]
	gt.Attempts++
	gt.Node, gt.Fallback, gt.Submitted = node.Host, a.Fallback, time.Now()
	if gt.Attempts > r.opt.MaxAttempts {
		r.err = fmt.Errorf("task graph: task %q: %w (%d attempts)", task.Name, ErrTaskAttempts, r.opt.MaxAttempts)
		r.mu.Unlock()
		r.signal()
		return
	}
	id := fmt.Sprintf("%s%s/%d", r.prefix, task.Name, gt.Attempts)
	r.attempt[id], r.on[a.Task] = a.Task, a.Machine
	r.mu.Unlock()
	var msg []byte
	if r.job.Message != nil {
		msg = r.job.Message(task, node)
	}
	_, err := r.f.Submit(ctx, Job{RequestID: id, User: r.job.User, Description: "task graph " + r.prefix,
		Tasks: []Task{{ID: task.Name, Message: msg, Nodes: []string{node.Host}}}})
	if err == nil {
		r.mu.Lock()
		r.refusals = 0
		r.mu.Unlock()
		return
	}
	if errors.Is(err, ErrInDoubt) {
		// The job may have reached a scheduler: submitting it again could
		// run the task twice, so its message is awaited instead.
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.attempt, id)
	delete(r.on, a.Task)
	var derr error
	var unplaceable *UnplaceableError
	if errors.As(err, &unplaceable) {
		derr = r.lostLocked(a.Task, a.Machine) // the scheduler no longer sees the node
	} else {
		// Refused or failed: try again after a pause, not at once.
		derr = r.d.Failed(a.Task)
		r.refusals++
		_, suggested := retryable(err)
		r.pause = time.Now().Add(graphBackoff.Delay(r.refusals, suggested, r.f.draw()))
	}
	switch {
	case derr != nil && r.err == nil:
		r.err = fmt.Errorf("task graph: task %q: %w", task.Name, derr)
	case ctx.Err() != nil && r.err == nil:
		r.err = fmt.Errorf("task graph: submit %q: %w", task.Name, err)
	}
	r.signal()
}

// Wait submits tasks as their inputs become ready and returns once every
// task finished, or the first unrecoverable error, or when ctx ends.
func (r *GraphRun) Wait(ctx context.Context) (GraphResult, error) {
	for {
		r.submitReady(ctx)
		r.mu.Lock()
		done, err := r.d.Done(), r.err
		r.mu.Unlock()
		if err != nil {
			return r.res, err
		}
		if done {
			r.mu.Lock()
			defer r.mu.Unlock()
			for _, t := range r.res.Tasks {
				if d := t.Finished.Sub(r.start); d > r.res.Makespan {
					r.res.Makespan = d
				}
			}
			return r.res, nil
		}
		r.mu.Lock()
		pause := time.Until(r.pause)
		r.mu.Unlock()
		var resume <-chan time.Time
		var timer *time.Timer
		if pause > 0 {
			timer = time.NewTimer(pause)
			resume = timer.C
		}
		select {
		case <-r.wake:
		case <-resume:
		case <-ctx.Done():
			return r.res, fmt.Errorf("task graph: %w", ctx.Err())
		}
		if timer != nil {
			timer.Stop()
		}
	}
}
