package scheduler

import (
	"slices"
	"time"

	"github.com/sparrowfleet/sparrow/core/placement"
	"github.com/sparrowfleet/sparrow/internal/refusal"
)

// placementPipeline is the one path from a request's tasks to the node
// monitors that may take their reservations and the plan of where they
// go. Every placement decision in the package (submission, re-placement
// after a failed enqueue, a held call's round, the reservation-timeout
// sweep, steering of stranded requests, locality relaxation) runs through
// it, and names only what differs between them in placeOptions; the
// stages, always in this order, are:
//
//  1. view: the live node monitors hosting the request's app
//     (NodeView.Candidates);
//  2. failed: drop those whose enqueue failed for the request;
//  3. constraints: keep those meeting the job's constraints
//     (placement.Filter);
//  4. class: the long-task-aware policy's steering by job class
//     (shortPolicy.steer: long jobs off the short-only share and onto
//     the node monitors of the lowest advertised long-work levels, short
//     jobs onto node monitors without long work);
//  5. holders: what to do with node monitors already holding the
//     request's reservations (placeOptions.holders);
//  6. user: per-user steering (placeOptions.user, steerBook);
//  7. plan: the sampler's plan over what is left (placement.Sampler.Plan,
//     or PlanWidened for tasks just widened).
//
// A stage that has nothing to do (no constraints, the policy off,
// steering off) passes its input on unchanged, so one pipeline serves
// plain Sparrow and every policy. The guard test (pipeline_guard_test.go)
// fails if any function but the pipeline's methods calls the filter, the
// steering or the sampler's plan directly.
//
// It has no state of its own beyond the parts it is wired to, and no
// lock: feasible only reads the view (safe for concurrent use) and may be
// called without the Scheduler's mutex; place draws randomness and
// updates the policy's caches, so its owner serialises every call.
type placementPipeline struct {
	view  NodeView
	short *shortPolicy // nil: the policy off
	steer *steerBook
	rand  *placer // the scheduler's seeded randomness
}

// holderRule is what the holders stage does with node monitors that
// already hold reservations of the request.
type holderRule int

const (
	// holdersKept plans over every candidate: at submission none holds
	// any, and a re-placement after a failed enqueue may add to them.
	holdersKept holderRule = iota
	// holdersLast plans over the candidates holding none, or over all of
	// them if every one does: a node monitor refusing as full drops every
	// reservation the request has there.
	holdersLast
	// holdersDropped plans only over the candidates holding none; with
	// none left nothing is placed. Extra reservations that only add to a
	// request's queues elsewhere use it.
	holdersDropped
)

// userRule is what the user stage does.
type userRule int

const (
	// userNone leaves the candidates as they are.
	userNone userRule = iota
	// userSpread samples mostly among node monitors not sitting on the
	// user's other reservations (steerBook.candidates): new jobs.
	userSpread
	// userServing keeps only node monitors that served the user lately
	// (steerBook.serving): reservations added where the user is served.
	userServing
)

// placeOptions is what a call site names: the tasks, the ratio and the
// stages' variants. The request supplies the rest: its app, constraints,
// failed nodes, class, user and holdings.
type placeOptions struct {
	tasks []placement.Task
	ratio float64
	// feasible, when not nil, are the candidates already through the
	// view, failed and constraints stages (submission looks at them for
	// admission before it places).
	feasible []placement.Node
	holders  holderRule
	user     userRule
	// now is the time user steering judges by.
	now time.Time
	// widened plans tasks just widened (placement.Sampler.PlanWidened):
	// a task with nowhere to go is returned starved, not an error.
	widened bool
}

// feasible returns the live node monitors hosting app that meet cons,
// or the refusal for a job that has none.
func (p *placementPipeline) feasible(app string, cons []placement.Constraint) ([]placement.Node, error) {
	cands := p.view.Candidates(app)
	if len(cands) == 0 {
		return nil, refused(refusal.UnknownApp, 0, "no live node monitor hosts app %q", app)
	}
	cands, err := placement.Filter(cands, cons)
	if err != nil {
		return nil, refused(refusal.Unplaceable, 0, "app %q: %v", app, err)
	}
	return cands, nil
}

// stages runs every stage but the plan for r under o.
func (p *placementPipeline) stages(r *request, o placeOptions) []placement.Node {
	cands := o.feasible
	if cands == nil {
		for _, n := range p.view.Candidates(r.app) {
			if !r.failed[n.Addr] {
				cands = append(cands, n)
			}
		}
		// With none matching, the plan reports no candidates.
		cands, _ = placement.Filter(cands, r.cons)
	}
	cands = p.short.steer(r.app, cands, r.short.class, len(o.tasks), o.ratio, p.view)
	switch o.holders {
	case holdersLast:
		if slices.ContainsFunc(cands, func(n placement.Node) bool { return !r.Holds(n.Addr) }) {
			cands = slices.DeleteFunc(slices.Clone(cands), func(n placement.Node) bool { return r.Holds(n.Addr) })
		}
	case holdersDropped:
		cands = slices.DeleteFunc(slices.Clone(cands), func(n placement.Node) bool { return r.Holds(n.Addr) })
	}
	switch o.user {
	case userSpread:
		cands = p.steer.candidates(p.rand.rng, r.user.User, cands, o.now)
	case userServing:
		cands = p.steer.serving(r.user.User, cands, o.now)
	}
	return cands
}

// place runs every stage for r under o and returns the plan: the probes,
// not yet recorded in r, and, for widened tasks, those with nowhere new
// to go. The error is the plan's (no candidates, a constrained task no
// candidate allows).
func (p *placementPipeline) place(r *request, o placeOptions) (probes []placement.Probe, starved []placement.Task, err error) {
	cands := p.stages(r, o)
	if o.widened {
		return p.rand.sampler.PlanWidened(p.rand.rng, cands, o.tasks, o.ratio, nil)
	}
	probes, err = p.rand.sampler.Plan(p.rand.rng, cands, o.tasks, o.ratio)
	return probes, nil, err
}
