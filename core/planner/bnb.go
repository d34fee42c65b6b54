package planner

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/sparrowfleet/sparrow/core/perfmodel"
)

// Options bound and tune Solve.
type Options struct {
	// MaxNodes is the search budget in nodes (each placement of one task
	// tried); 0 means DefaultMaxNodes. It makes the search deterministic.
	MaxNodes int64
	// Clock, if set, is read every few nodes; the search stops once it
	// passes TimeLimit (seconds, same origin). The core never reads the
	// wall clock itself: callers inject one.
	Clock     func() float64
	TimeLimit float64
	// NoSymmetry turns symmetry breaking off (for tests and measurements).
	NoSymmetry bool
	// AssignmentOnly searches machine assignments alone, each machine
	// running its ready tasks in the problem's priority order (the
	// report's machines^tasks space): the baseline the reproductions
	// compare with. By default Solve also decides each machine's order.
	AssignmentOnly bool
	// Search is "dfs" (depth-first), "lds" (limited discrepancy: dives
	// that stray from the heuristic's first choice at most k times, k =
	// 0, 1, 2, 4, …) or "" to choose: dfs when machines^tasks is at most
	// SmallSpace, lds above, where plain depth-first search would spend
	// its budget at the bottom of the tree.
	Search string
}

// SmallSpace is the assignment count up to which Solve searches depth-first.
const SmallSpace = 1_000_000

// DefaultMaxNodes is the node budget when Options.MaxNodes is 0.
const DefaultMaxNodes = 2_000_000

// Improvement is a better plan found during the search.
type Improvement struct {
	Node     int64   `json:"node"`       // nodes visited when it was found
	Time     float64 `json:"time_s"`     // Options.Clock when it was found (0 without a clock)
	Makespan float64 `json:"makespan_s"` // its predicted makespan
}

// Stats describe a search.
type Stats struct {
	// Nodes and Leaves count tried placements and complete plans evaluated.
	Nodes, Leaves int64
	// Greedy is Dryad's greedy makespan; Seed is the makespan of its
	// assignment run as a plan, the search's first upper bound.
	Greedy, Seed float64
	// RootBound is the lower bound before any placement.
	RootBound float64
	// Improvements lists every better plan, the seed first.
	Improvements []Improvement
	// Proved is true when the search ended within its budget: no plan
	// (under the model) beats the one returned.
	Proved bool
	// Elapsed is the clock's time at the end, when a clock was given.
	Elapsed float64
}

// Solve searches for the plan of least predicted makespan by branch and
// bound (§4.1), over machine assignments and each machine's order: every
// set of per-machine sequences consistent with the arcs, each machine
// starting the next task of its sequence as soon as it is free and the
// task's inputs are ready. It first runs the assignment-only search (half
// the budget at most for a small space; all of it for a large one, where
// the order search then only uses what is left) and seeds the order
// search with its plan; Stats.Proved means no sequence set beats the plan
// returned. With Options.AssignmentOnly it
// runs the assignment search alone, with the whole budget.
func Solve(p Problem, opt Options) (Plan, Stats, error) {
	in, err := compile(p)
	if err != nil {
		return Plan{}, Stats{}, err
	}
	if opt.MaxNodes <= 0 {
		opt.MaxNodes = DefaultMaxNodes
	}
	if opt.Search != "" && opt.Search != "dfs" && opt.Search != "lds" {
		return Plan{}, Stats{}, fmt.Errorf("solve: search %q, want dfs, lds or empty", opt.Search)
	}
	if opt.AssignmentOnly {
		return solveAssignments(in, opt)
	}
	lds := opt.Search == "lds" || (opt.Search == "" && largeSpace(in))
	share := 0.5
	if lds {
		// One dive of the order search costs a child evaluation per task
		// and machine at every level (10^5 at 100 tasks on 40 machines),
		// so on a large space the assignment search gets the budget.
		share = 1
	}
	first := opt
	first.MaxNodes = max(1, int64(float64(opt.MaxNodes)*share))
	if opt.Clock != nil {
		t0 := opt.Clock()
		first.TimeLimit = t0 + (opt.TimeLimit-t0)*share
	}
	seed, st, err := solveAssignments(in, first)
	if err != nil {
		return Plan{}, st, err
	}
	st.Proved = false
	s := newOrderSearch(in, opt, seed, &st)
	if s.bound() < st.RootBound {
		st.RootBound = s.bound()
	}
	complete := false
	if !lds {
		complete = s.dfs(in.n)
	} else {
		for k := 0; s.err == nil; k = max(1, 2*k) {
			s.cut = false
			if !s.dfs(k) {
				break
			}
			if !s.cut {
				complete = true
				break
			}
		}
	}
	st.Proved = complete && s.err == nil
	st.Elapsed = s.now()
	if s.err != nil {
		return Plan{}, st, s.err
	}
	return s.best, st, nil
}

// largeSpace reports whether machines^tasks exceeds SmallSpace: above it
// the searches are limited-discrepancy, not depth-first.
func largeSpace(in *instance) bool {
	space := 1.0
	for range in.n {
		space *= float64(in.m)
	}
	return space > SmallSpace
}

// solveAssignments is the assignment-only branch and bound.
func solveAssignments(in *instance, opt Options) (Plan, Stats, error) {
	greedy, err := in.simulate(nil)
	if err != nil {
		return Plan{}, Stats{}, err
	}
	seed, err := in.simulate(greedy.Machine)
	if err != nil {
		return Plan{}, Stats{}, err
	}
	s := &search{in: in, opt: opt, best: seed}
	s.stats.Greedy, s.stats.Seed = greedy.Makespan, seed.Makespan
	s.stats.Improvements = []Improvement{{Makespan: seed.Makespan, Time: s.now()}}
	s.init()
	s.stats.RootBound = s.bound()
	lds := opt.Search == "lds" || (opt.Search == "" && largeSpace(in))
	complete := false
	if !lds {
		complete = s.dfs(0, in.n)
	} else {
		s.polishing = true
		for k := 0; s.err == nil; k = max(1, 2*k) {
			s.cut = false
			if !s.dfs(0, k) {
				break
			}
			if !s.cut {
				complete = true
				break
			}
		}
	}
	s.stats.Proved = complete && s.err == nil
	s.stats.Elapsed = s.now()
	if s.err != nil {
		return Plan{}, s.stats, s.err
	}
	return s.best, s.stats, nil
}

type search struct {
	in    *instance
	opt   Options
	best  Plan
	stats Stats
	err   error

	assign    []int
	dur       []float64            // isolated run time of assigned tasks
	demand    [][]perfmodel.Demand // per assigned task, its total demands
	count     []int                // tasks per machine
	load      []float64            // busy time per machine
	res       []float64            // demand per machine resource
	restMin   float64              // Σ over unassigned tasks of their least lbDur
	minDur    []float64
	est       []float64 // scratch
	eft       []float64
	avail     []float64 // per machine: earliest it could finish its tasks
	cut       bool      // a child was skipped for the discrepancy limit
	polishing bool      // polish every new incumbent (lds)
}

const nres = 5

func (s *search) init() {
	in := s.in
	s.assign = make([]int, in.n)
	for i := range s.assign {
		s.assign[i] = -1
	}
	s.dur = make([]float64, in.n)
	s.demand = make([][]perfmodel.Demand, in.n)
	s.count = make([]int, in.m)
	s.load = make([]float64, in.m)
	s.res = make([]float64, in.m*nres)
	s.minDur = make([]float64, in.n)
	for t := range in.n {
		s.minDur[t] = slices.Min(in.lbDur[t])
		s.restMin += s.minDur[t]
	}
	s.est = make([]float64, in.n)
	s.eft = make([]float64, in.n)
	s.avail = make([]float64, in.m)
}

func (s *search) now() float64 { return clockNow(s.opt) }

// out reports whether the budget is spent.
func (s *search) out() bool { return spent(s.opt, s.stats.Nodes) }

// clockNow reads the injected clock, 0 without one.
func clockNow(opt Options) float64 {
	if opt.Clock == nil {
		return 0
	}
	return opt.Clock()
}

// spent reports whether a search that has visited nodes is out of its
// budget: the node budget, or the time limit by the clock, read every 64
// nodes.
func spent(opt Options, nodes int64) bool {
	if nodes >= opt.MaxNodes {
		return true
	}
	return opt.Clock != nil && nodes%64 == 0 && opt.Clock() >= opt.TimeLimit
}

// place assigns t to mach and updates the incremental sums.
func (s *search) place(t, mach int) error {
	r, err := s.in.run(t, mach, s.assign)
	if err != nil {
		return err
	}
	d, ds := r.iso, r.demand
	s.assign[t], s.dur[t], s.demand[t] = mach, d, ds
	s.count[mach]++
	s.load[mach] += d
	s.restMin -= s.minDur[t]
	for _, x := range ds {
		s.res[x.Machine*nres+int(x.Resource)] += x.Amount
	}
	return nil
}

func (s *search) unplace(t int) {
	mach := s.assign[t]
	s.count[mach]--
	s.load[mach] -= s.dur[t]
	s.restMin += s.minDur[t]
	for _, x := range s.demand[t] {
		s.res[x.Machine*nres+int(x.Resource)] -= x.Amount
	}
	s.assign[t], s.demand[t] = -1, nil
}

// bound is a lower bound on the makespan of every completion of the
// current partial assignment. Isolated run times bound contended ones
// from below, so each term holds: the critical path; each machine's busy
// time after its earliest possible start; all work spread over all
// machines; each resource's total demand over its capacity.
func (s *search) bound() float64 {
	in := s.in
	lb := 0.0
	first := make([]float64, in.m)
	for i := range first {
		first[i] = math.Inf(1)
	}
	for _, t := range in.prio {
		est, floor := 0.0, 0.0
		for _, a := range in.in[t] {
			if a.pipe {
				est = max(est, s.est[a.from])
				floor = max(floor, s.eft[a.from])
			} else {
				est = max(est, s.eft[a.from])
			}
		}
		d := s.minDur[t]
		if m := s.assign[t]; m >= 0 {
			d = s.dur[t]
			first[m] = min(first[m], est)
		}
		s.est[t] = est
		s.eft[t] = max(est+d, floor)
		lb = max(lb, s.eft[t])
	}
	work := s.restMin
	for m := range in.m {
		work += s.load[m]
		s.avail[m] = 0
		if s.count[m] > 0 {
			s.avail[m] = first[m] + s.load[m]
			lb = max(lb, s.avail[m])
		}
		mm := in.p.Machines[m]
		for r := range nres {
			if v := s.res[m*nres+r]; v > 0 {
				lb = max(lb, v/perfmodel.Capacity(mm, perfmodel.Resource(r)))
			}
		}
	}
	return max(lb, work/float64(in.m))
}

// eps absorbs floating-point noise when comparing makespans.
const eps = 1e-9

// dfs places prio[d:], straying from the heuristic's first choice at
// most disc times, and reports whether it finished the subtree (false:
// the budget ran out or an error occurred).
func (s *search) dfs(d, disc int) bool {
	in := s.in
	if d == in.n {
		s.stats.Leaves++
		plan, err := in.simulate(s.assign)
		if err != nil {
			s.err = err
			return false
		}
		if plan.Makespan < s.best.Makespan-eps*s.best.Makespan {
			s.best = plan
			s.stats.Improvements = append(s.stats.Improvements, Improvement{Node: s.stats.Nodes, Time: s.now(), Makespan: plan.Makespan})
			if s.polishing {
				s.polish()
				return s.err == nil && !s.out()
			}
		}
		return true
	}
	t := in.prio[d]
	lowest := 0
	if !s.opt.NoSymmetry && d > 0 && in.class[in.prio[d-1]] == in.class[t] {
		lowest = s.assign[in.prio[d-1]]
	}
	// The node's own bound fills est and avail for the heuristic below.
	s.bound()
	est := s.est[t]
	avail := slices.Clone(s.avail)
	type child struct {
		mach    int
		lb, eft float64
	}
	var kids []child
	for mach := lowest; mach < in.m; mach++ {
		if !s.opt.NoSymmetry && s.count[mach] == 0 && s.in.freshTwin(mach, s.count) {
			continue
		}
		if s.out() {
			return false
		}
		s.stats.Nodes++
		if err := s.place(t, mach); err != nil {
			s.err = err
			return false
		}
		lb := s.bound()
		eft := max(est, avail[mach]) + s.dur[t]
		s.unplace(t)
		if lb < s.best.Makespan-eps*s.best.Makespan {
			kids = append(kids, child{mach, lb, eft})
		}
	}
	// Earliest finish first (the list-scheduling heuristic), then the bound.
	slices.SortStableFunc(kids, func(a, b child) int {
		if c := cmp.Compare(a.eft, b.eft); c != 0 {
			return c
		}
		return cmp.Compare(a.lb, b.lb)
	})
	for i, k := range kids {
		if k.lb >= s.best.Makespan-eps*s.best.Makespan {
			continue // the incumbent improved since the bound was taken
		}
		left, ok := discrepancy(i, disc)
		if !ok {
			s.cut = true
			break
		}
		if err := s.place(t, k.mach); err != nil {
			s.err = err
			return false
		}
		ok = s.dfs(d+1, left)
		s.unplace(t)
		if !ok {
			return false
		}
	}
	return true
}

// freshTwin reports whether an unused machine (count 0) with mach's
// profile and a lower index exists: trying mach would repeat that
// machine's subtree.
func (in *instance) freshTwin(mach int, count []int) bool {
	c := in.mclass[mach]
	for m := range mach {
		if in.mclass[m] == c && count[m] == 0 {
			return true
		}
	}
	return false
}

// discrepancy returns the discrepancies left to the i-th child (in
// heuristic order) of a node allowed disc, and false if that child is
// beyond the limit.
func discrepancy(i, disc int) (int, bool) {
	switch {
	case i == 0:
		return disc, true
	case disc == 0:
		return 0, false
	}
	return disc - 1, true
}
