// Package lowerbound bounds from below what any scheduler can achieve on
// a job trace: the quantiles of a class of jobs' response times on a
// cluster of a given number of slots, whatever the placement, order,
// preemption or central knowledge.
//
// The bound rests on a relaxation that only helps a scheduler: the jobs
// of the class alone (other jobs and work already running are dropped),
// their work divisible at will over the cluster's slots, no delays, and
// each job's response no shorter than its own ideal (its longest task).
// In that relaxation a job answered within T of its arrival did all its
// work in [arrival, arrival+T]. So for a window [a, b] of time, the jobs
// that arrive at or after a and whose arrival+T is at most b can all be
// within T only if their work fits in slots*(b-a); otherwise at least as
// many of them miss T as the fewest largest jobs whose removal makes the
// rest fit. Windows disjoint in time hold disjoint jobs, so their counts
// add up. Late is the best sum over disjoint windows (dynamic programming
// over windows that start and end at arrivals, plus the jobs whose ideal
// alone exceeds T); Quantile turns it into a bound on a quantile, and
// Mean bounds the mean by the relaxation's optimum.
//
// Every function is pure and deterministic.
package lowerbound

import (
	"container/heap"
	"math"
	"slices"
)

// Job is one job of the class bounded. Times are in seconds.
type Job struct {
	// Arrival is when the job is submitted.
	Arrival float64
	// Work is the sum of its tasks' durations (slot-seconds).
	Work float64
	// Ideal is its response time alone on an empty cluster, a bound below
	// its response under any scheduler.
	Ideal float64
}

// Problem is a set of jobs on a cluster of Slots slots. Build it with New.
type Problem struct {
	jobs  []Job // by arrival
	slots float64
	// MaxSpan caps the number of jobs a window may hold (0: no cap). A cap
	// only drops windows, so the bound stays a bound, and bounds the work
	// to O(n*MaxSpan*log n) per Late.
	MaxSpan int
}

// New returns the problem of jobs on slots slots. Jobs need not be in
// arrival order; New keeps a sorted copy.
func New(jobs []Job, slots int) *Problem {
	js := slices.Clone(jobs)
	slices.SortStableFunc(js, func(a, b Job) int {
		switch {
		case a.Arrival < b.Arrival:
			return -1
		case a.Arrival > b.Arrival:
			return 1
		}
		return 0
	})
	return &Problem{jobs: js, slots: float64(slots)}
}

// Len is the number of jobs.
func (p *Problem) Len() int { return len(p.jobs) }

// Late returns a number of jobs that, under any scheduler, take longer
// than t from arrival to end: a lower bound on how many miss t.
func (p *Problem) Late(t float64) int {
	var within []Job // jobs whose ideal is within t, by arrival
	late := 0
	for _, j := range p.jobs {
		if j.Ideal > t {
			late++
		} else {
			within = append(within, j)
		}
	}
	return late + p.windows(within, t)
}

// windows is the best sum, over windows disjoint in time, of the jobs in
// each that must miss t (see the package comment). js is by arrival.
func (p *Problem) windows(js []Job, t float64) int {
	n := len(js)
	if n == 0 {
		return 0
	}
	// rank orders the jobs by work, largest first, for the Fenwick trees.
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		switch {
		case js[a].Work > js[b].Work:
			return -1
		case js[a].Work < js[b].Work:
			return 1
		}
		return 0
	})
	rank := make([]int, n)
	for r, i := range order {
		rank[i] = r
	}
	suffix := make([]float64, n+1) // suffix[i]: work of js[i:]
	for i := n - 1; i >= 0; i-- {
		suffix[i] = suffix[i+1] + js[i].Work
	}
	best := make([]int, n+1) // best[i]: the most late jobs among js[i:]
	var tree largest
	tree.init(n)
	for i := n - 1; i >= 0; i-- {
		best[i] = best[i+1]
		tree.reset()
		total := 0.0
		end := n
		if p.MaxSpan > 0 {
			end = min(n, i+p.MaxSpan)
		}
		for k := i; k < end; k++ {
			capacity := p.slots * (js[k].Arrival + t - js[i].Arrival)
			if capacity >= suffix[i] {
				// Every later window from i fits all its jobs: none late.
				break
			}
			tree.add(rank[k], js[k].Work)
			total += js[k].Work
			if total <= capacity {
				continue
			}
			miss := tree.fewestReaching(total - capacity)
			// The next window starts at or after this one's end.
			next := k + 1 + firstAtOrAfter(js[k+1:], js[k].Arrival+t)
			best[i] = max(best[i], miss+best[next])
		}
	}
	return best[0]
}

// firstAtOrAfter is the index of the first job of js (by arrival) that
// arrives at or after at, len(js) if none.
func firstAtOrAfter(js []Job, at float64) int {
	i, _ := slices.BinarySearchFunc(js, at, func(j Job, at float64) int {
		if j.Arrival < at {
			return -1
		}
		return 1
	})
	return i
}

// Quantile returns a time that the q-quantile (nearest rank, as
// internal/stats.Quantile) of the jobs' response times reaches under any
// scheduler: the jobs' own ideal quantile, or a larger time at which Late
// shows enough jobs late, found by bisection to a relative precision of
// 1e-4. NaN for no jobs.
func (p *Problem) Quantile(q float64) float64 {
	n := len(p.jobs)
	if n == 0 {
		return math.NaN()
	}
	// The quantile is the rank-th smallest response, so it exceeds t once
	// more than n-rank responses do.
	rank := min(max(int(math.Ceil(q*float64(n))), 1), n)
	need := n - rank + 1
	ideals := make([]float64, n)
	for i, j := range p.jobs {
		ideals[i] = j.Ideal
	}
	slices.Sort(ideals)
	// Each response is at least its ideal, so the sorted responses are at
	// least the sorted ideals, rank by rank.
	lo := ideals[rank-1]
	if p.Late(lo) < need {
		return lo
	}
	hi := max(lo, 1e-9)
	for p.Late(hi) >= need {
		lo, hi = hi, 2*hi
	}
	for hi-lo > 1e-4*hi {
		mid := (lo + hi) / 2
		if p.Late(mid) >= need {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo
}

// Mean returns a time that the mean of the jobs' response times reaches
// under any scheduler: the larger of their ideals' mean and the mean
// response of the relaxation's own optimum, shortest remaining work first
// over the whole cluster as one divisible machine (optimal for the sum of
// response times of preemptible jobs released over time on one machine).
// NaN for no jobs.
func (p *Problem) Mean() float64 {
	n := len(p.jobs)
	if n == 0 {
		return math.NaN()
	}
	ideal := 0.0
	for _, j := range p.jobs {
		ideal += j.Ideal
	}
	return max(ideal, p.fluidSRPT()) / float64(n)
}

// fluidSRPT is the sum of the jobs' response times when the cluster's
// slots serve, as one divisible machine, the released job with the least
// work left.
func (p *Problem) fluidSRPT() float64 {
	var (
		left  remainingHeap
		total float64
		now   float64
		next  int
	)
	for next < len(p.jobs) || len(left) > 0 {
		if len(left) == 0 {
			now = max(now, p.jobs[next].Arrival)
		}
		for next < len(p.jobs) && p.jobs[next].Arrival <= now {
			heap.Push(&left, remaining{arrival: p.jobs[next].Arrival, work: p.jobs[next].Work})
			next++
		}
		until := math.Inf(1) // the next arrival
		if next < len(p.jobs) {
			until = p.jobs[next].Arrival
		}
		top := &left[0]
		if end := now + top.work/p.slots; end <= until {
			now = end
			total += now - top.arrival
			heap.Pop(&left)
		} else {
			top.work -= (until - now) * p.slots
			now = until
		}
	}
	return total
}

// remaining is a released job's work left in fluidSRPT.
type remaining struct {
	arrival, work float64
}

// remainingHeap orders released jobs by work left, for container/heap.
// Serving the top shrinks its work, which keeps it on top.
type remainingHeap []remaining

func (h remainingHeap) Len() int           { return len(h) }
func (h remainingHeap) Less(i, j int) bool { return h[i].work < h[j].work }
func (h remainingHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *remainingHeap) Push(x any)        { *h = append(*h, x.(remaining)) }
func (h *remainingHeap) Pop() any {
	old := *h
	r := old[len(old)-1]
	*h = old[:len(old)-1]
	return r
}

// largest is a Fenwick tree over work ranks (largest work first) holding
// the count and the work of the jobs added, so that the fewest largest
// jobs whose work reaches an amount can be found in O(log n).
type largest struct {
	n     int
	count []int
	work  []float64
	top   int // the highest power of two <= n
}

func (f *largest) init(n int) {
	f.n = n
	f.count = make([]int, n+1)
	f.work = make([]float64, n+1)
	f.top = 1
	for f.top*2 <= n {
		f.top *= 2
	}
}

func (f *largest) reset() {
	clear(f.count)
	clear(f.work)
}

// add files a job of work w at rank r (0 is the largest).
func (f *largest) add(r int, w float64) {
	for i := r + 1; i <= f.n; i += i & -i {
		f.count[i]++
		f.work[i] += w
	}
}

// fewestReaching returns the fewest of the added jobs, taken largest
// first, whose work reaches need (> 0). The added jobs' total must reach
// need.
func (f *largest) fewestReaching(need float64) int {
	// Find the longest prefix of ranks whose work falls short of need;
	// the next added job takes the sum to it.
	pos, cnt, sum := 0, 0, 0.0
	for step := f.top; step > 0; step /= 2 {
		if next := pos + step; next <= f.n && sum+f.work[next] < need {
			pos = next
			sum += f.work[next]
			cnt += f.count[next]
		}
	}
	return cnt + 1
}
