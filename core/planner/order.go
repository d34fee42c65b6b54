package planner

import (
	"cmp"
	"math"
	"slices"

	"github.com/sparrowfleet/sparrow/core/perfmodel"
)

// orderSearch is branch and bound over machine assignments and machine
// orders together. A node is a partial schedule: a prefix of each
// machine's sequence. A child appends one task whose producers are all
// placed to the end of one machine's sequence, so every leaf is a set of
// sequences consistent with the arcs, and every such set is a leaf:
// generate its tasks in order of their start times in the isolated
// timing below, ties by priority rank. Children that start earlier than
// the task placed before them, or at the same time with a lower rank, are
// pruned, since their leaves are reached through that sorted order; this
// removes the permutations of independent appends. (With every run time
// positive, two tasks starting together are ordered only by pipelined
// arcs, which the rank respects; if some task may take no time, ties are
// left in any order.) Start times are computed the same way whatever the
// order of appends, so they compare exactly.
//
// The isolated timing gives each placed task its start and finish with
// isolated run times, which contention only lengthens: a task starts once
// its machine's previous task has finished and its inputs are ready (a
// file's producer finished, a pipe's producer started), and a pipe's
// consumer finishes no earlier than its producer. Every time in it is
// thus a lower bound of the same task's time in the contended simulation
// of any completion, which is what the leaf is worth.
//
// Not safe for concurrent use; one search runs on one goroutine.
type orderSearch struct {
	in    *instance
	opt   Options
	best  Plan
	stats *Stats
	err   error

	assign  []int     // machine of each placed task, -1 unplaced
	seq     [][]int   // each machine's sequence so far
	start   []float64 // isolated start of placed tasks
	finish  []float64 // isolated finish of placed tasks
	avail   []float64 // per machine: isolated finish of its last task
	waiting []int     // per task: producers not yet placed
	prevTwn []int     // per task: the previous task of its class, or -1
	dur     []float64 // isolated run time of placed tasks
	demand  [][]perfmodel.Demand
	res     []float64 // demand per machine resource of placed tasks
	count   []int     // tasks per machine
	minDur  []float64
	restMin float64   // Σ of minDur over unplaced tasks
	placed  int       // tasks placed
	last    float64   // isolated start of the last placed task
	lastT   int       // the last placed task, -1 before the first
	ties    bool      // every run time is positive: ties are ordered by rank
	estLB   []float64 // scratch: lower bounds on unplaced starts
	eftLB   []float64 // scratch: lower bounds on unplaced finishes
	cut     bool      // a child was skipped for the discrepancy limit
}

func newOrderSearch(in *instance, opt Options, best Plan, stats *Stats) *orderSearch {
	s := &orderSearch{in: in, opt: opt, best: best, stats: stats}
	s.assign = make([]int, in.n)
	s.prevTwn = make([]int, in.n)
	s.waiting = make([]int, in.n)
	s.minDur = make([]float64, in.n)
	for t := range in.n {
		s.assign[t] = -1
		s.prevTwn[t] = -1
		for u := t - 1; u >= 0; u-- {
			if in.class[u] == in.class[t] {
				s.prevTwn[t] = u
				break
			}
		}
		s.waiting[t] = len(in.in[t])
		s.minDur[t] = slices.Min(in.lbDur[t])
		s.restMin += s.minDur[t]
	}
	s.seq = make([][]int, in.m)
	s.start = make([]float64, in.n)
	s.finish = make([]float64, in.n)
	s.avail = make([]float64, in.m)
	s.dur = make([]float64, in.n)
	s.demand = make([][]perfmodel.Demand, in.n)
	s.res = make([]float64, in.m*nres)
	s.count = make([]int, in.m)
	s.estLB = make([]float64, in.n)
	s.eftLB = make([]float64, in.n)
	s.lastT = -1
	s.ties = true
	for t := range in.n {
		if s.minDur[t] <= 0 {
			s.ties = false
		}
	}
	return s
}

func (s *orderSearch) now() float64 { return clockNow(s.opt) }

func (s *orderSearch) out() bool { return spent(s.opt, s.stats.Nodes) }

// timing returns the isolated start and finish task t would have if
// appended to mach now, its producers being placed.
func (s *orderSearch) timing(t, mach int, iso float64) (st, fin float64) {
	st, floor := s.avail[mach], 0.0
	for _, a := range s.in.in[t] {
		if a.pipe {
			st = max(st, s.start[a.from])
			floor = max(floor, s.finish[a.from])
		} else {
			st = max(st, s.finish[a.from])
		}
	}
	return st, max(st+iso, floor)
}

// undo holds what place changed, for unplace.
type undo struct {
	avail, last float64
	lastT       int
}

// place appends t to mach's sequence.
func (s *orderSearch) place(t, mach int) (undo, error) {
	r, err := s.in.run(t, mach, s.assign)
	if err != nil {
		return undo{}, err
	}
	u := undo{avail: s.avail[mach], last: s.last, lastT: s.lastT}
	st, fin := s.timing(t, mach, r.iso)
	s.assign[t], s.dur[t], s.demand[t] = mach, r.iso, r.demand
	s.start[t], s.finish[t] = st, fin
	s.avail[mach], s.last, s.lastT = fin, st, t
	s.seq[mach] = append(s.seq[mach], t)
	s.count[mach]++
	s.restMin -= s.minDur[t]
	s.placed++
	for _, x := range r.demand {
		s.res[x.Machine*nres+int(x.Resource)] += x.Amount
	}
	for _, c := range s.in.succ[t] {
		s.waiting[c]--
	}
	return u, nil
}

func (s *orderSearch) unplace(t int, u undo) {
	mach := s.assign[t]
	for _, c := range s.in.succ[t] {
		s.waiting[c]++
	}
	for _, x := range s.demand[t] {
		s.res[x.Machine*nres+int(x.Resource)] -= x.Amount
	}
	s.placed--
	s.restMin += s.minDur[t]
	s.count[mach]--
	s.seq[mach] = s.seq[mach][:len(s.seq[mach])-1]
	s.avail[mach], s.last, s.lastT = u.avail, u.last, u.lastT
	s.assign[t], s.demand[t] = -1, nil
}

// bound is a lower bound on the contended makespan of every completion of
// the partial schedule: the isolated finishes of placed tasks; for each
// unplaced task, the earliest it could finish on any machine, after that
// machine's last placed task and its producers (placed or bounded the same
// way), with its fastest possible run time there, which also bounds the
// critical path through unplaced tasks; every machine's occupied time
// (up to its last task's finish, or the last placed start, which no later
// task precedes in this subtree) plus all remaining work, spread over all
// machines; and each resource's demand over its capacity.
func (s *orderSearch) bound() float64 {
	in := s.in
	lb, occupied := 0.0, s.restMin
	for _, a := range s.avail {
		lb = max(lb, a)
		occupied += max(a, s.last)
	}
	for _, t := range in.prio {
		if s.assign[t] >= 0 {
			continue
		}
		// Within this subtree every task still to be placed starts no
		// earlier than the last one placed.
		ready, floor := s.last, 0.0
		for _, a := range in.in[t] {
			st, fin := s.estLB[a.from], s.eftLB[a.from]
			if s.assign[a.from] >= 0 {
				st, fin = s.start[a.from], s.finish[a.from]
			}
			if a.pipe {
				ready = max(ready, st)
				floor = max(floor, fin)
			} else {
				ready = max(ready, fin)
			}
		}
		est, eft := math.Inf(1), math.Inf(1)
		for m := range in.m {
			b := max(ready, s.avail[m])
			est = min(est, b)
			eft = min(eft, b+in.lbDur[t][m])
		}
		s.estLB[t], s.eftLB[t] = est, max(eft, floor)
		lb = max(lb, s.eftLB[t])
	}
	for m := range in.m {
		mm := in.p.Machines[m]
		for r := range nres {
			if v := s.res[m*nres+r]; v > 0 {
				lb = max(lb, v/perfmodel.Capacity(mm, perfmodel.Resource(r)))
			}
		}
	}
	return max(lb, occupied/float64(in.m))
}

// better reports whether a makespan beats the incumbent.
func (s *orderSearch) better(v float64) bool {
	return v < s.best.Makespan-eps*s.best.Makespan
}

// dfs extends the partial schedule, straying from the heuristic's first
// choice at most disc times, and reports whether it finished the subtree
// (false: the budget ran out or an error occurred).
func (s *orderSearch) dfs(disc int) bool {
	in := s.in
	if s.placed == in.n {
		s.stats.Leaves++
		plan, err := in.simulateOrder(s.seq)
		if err != nil {
			s.err = err
			return false
		}
		if s.better(plan.Makespan) {
			s.best = plan
			s.stats.Improvements = append(s.stats.Improvements, Improvement{Node: s.stats.Nodes, Time: s.now(), Makespan: plan.Makespan})
		}
		return true
	}
	type child struct {
		t, mach  int
		lb, fin  float64
		startIso float64
	}
	var kids []child
	for _, t := range in.prio {
		if s.assign[t] >= 0 || s.waiting[t] > 0 {
			continue
		}
		if p := s.prevTwn[t]; !s.opt.NoSymmetry && p >= 0 && s.assign[p] < 0 {
			continue // a class's tasks are placed in index order
		}
		for mach := range in.m {
			if !s.opt.NoSymmetry && s.count[mach] == 0 && in.freshTwin(mach, s.count) {
				continue
			}
			if s.out() {
				return false
			}
			s.stats.Nodes++
			u, err := s.place(t, mach)
			if err != nil {
				s.err = err
				return false
			}
			st := s.start[t]
			if st < u.last || (st == u.last && s.ties && u.lastT >= 0 && in.rank[t] < in.rank[u.lastT]) {
				s.unplace(t, u)
				continue // reached with t placed before the last task
			}
			lb := s.bound()
			fin := s.finish[t]
			s.unplace(t, u)
			if s.better(lb) {
				kids = append(kids, child{t, mach, lb, fin, st})
			}
		}
	}
	// Earliest isolated finish first (list scheduling), then the bound.
	slices.SortStableFunc(kids, func(a, b child) int {
		if c := cmp.Compare(a.fin, b.fin); c != 0 {
			return c
		}
		return cmp.Compare(a.lb, b.lb)
	})
	for i, k := range kids {
		if !s.better(k.lb) {
			continue // the incumbent improved since the bound was taken
		}
		left, ok := discrepancy(i, disc)
		if !ok {
			s.cut = true
			break
		}
		u, err := s.place(k.t, k.mach)
		if err != nil {
			s.err = err
			return false
		}
		ok = s.dfs(left)
		s.unplace(k.t, u)
		if !ok {
			return false
		}
	}
	return true
}
