package lowerbound

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestLateAndQuantile(t *testing.T) {
	tests := []struct {
		name  string
		jobs  []Job
		slots int
		t     float64
		late  int
		q     float64
		quant float64 // the bound on the q-quantile, to 1e-3
	}{
		{
			// One slot, three jobs of 10 at once: they end at 10, 20
			// and 30 at best.
			name: "one slot, three at once", slots: 1,
			jobs: []Job{{0, 10, 1}, {0, 10, 1}, {0, 10, 1}},
			t:    15, late: 2, q: 0.5, quant: 20,
		},
		{
			name: "room for all", slots: 3,
			jobs: []Job{{0, 10, 10}, {0, 10, 10}, {0, 10, 10}},
			t:    10, late: 0, q: 0.99, quant: 10,
		},
		{
			// A job's ideal alone makes it late.
			name: "ideal over t", slots: 100,
			jobs: []Job{{0, 1, 50}, {0, 1, 1}},
			t:    20, late: 1, q: 0.99, quant: 50,
		},
		{
			// Two bursts far apart: each makes one job late, and the
			// counts add up.
			name: "two bursts", slots: 1,
			jobs: []Job{{0, 10, 1}, {0, 10, 1}, {1000, 10, 1}, {1000, 10, 1}},
			t:    15, late: 2, q: 0.5, quant: 10,
		},
		{
			// The largest job is the one to give up: one late, not two.
			name: "largest first", slots: 1,
			jobs: []Job{{0, 2, 1}, {0, 2, 1}, {0, 30, 1}},
			t:    10, late: 1, q: 1, quant: 34,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := New(tc.jobs, tc.slots)
			if got := p.Late(tc.t); got != tc.late {
				t.Errorf("Late(%v) = %d, want %d", tc.t, got, tc.late)
			}
			if got := p.Quantile(tc.q); math.Abs(got-tc.quant) > 1e-3*tc.quant {
				t.Errorf("Quantile(%v) = %v, want %v", tc.q, got, tc.quant)
			}
		})
	}
}

func TestQuantileNoJobs(t *testing.T) {
	if got := New(nil, 1).Quantile(0.5); !math.IsNaN(got) {
		t.Errorf("Quantile of no jobs = %v, want NaN", got)
	}
}

// exactLate is the fewest jobs late (response over t) in the relaxation
// itself, by exhaustive search over the sets of jobs on time: a set is
// feasible on one divisible machine of speed slots iff every job's ideal
// is within t and, for every interval [a, b], the work of the jobs whose
// [arrival, arrival+t] lies inside it fits in slots*(b-a) (the interval
// condition under which earliest-deadline-first meets every deadline).
func exactLate(jobs []Job, slots int, t float64) int {
	n := len(jobs)
	best := n
	for set := 0; set < 1<<n; set++ {
		onTime := 0
		ok := true
		for i := 0; i < n && ok; i++ {
			if set&(1<<i) != 0 {
				onTime++
				ok = jobs[i].Ideal <= t
			}
		}
		for _, a := range jobs {
			for _, b := range jobs {
				if !ok {
					break
				}
				lo, hi := a.Arrival, b.Arrival+t
				if hi <= lo {
					continue
				}
				w := 0.0
				for i, j := range jobs {
					if set&(1<<i) != 0 && j.Arrival >= lo && j.Arrival+t <= hi {
						w += j.Work
					}
				}
				ok = w <= float64(slots)*(hi-lo)*(1+1e-12)
			}
		}
		if ok {
			best = min(best, n-onTime)
		}
	}
	return best
}

func randomJobs(r *rand.Rand, n int) []Job {
	js := make([]Job, n)
	for i := range js {
		ideal := 1 + 9*r.Float64()
		js[i] = Job{
			Arrival: float64(r.IntN(20)),
			Ideal:   ideal,
			Work:    ideal * float64(1+r.IntN(4)),
		}
	}
	return js
}

// TestLateBelowExhaustive checks Late against the relaxation's own
// optimum, found by exhaustive search: never above it (it is a bound),
// and equal to it where one burst decides.
func TestLateBelowExhaustive(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	equal := 0
	const trials = 400
	for trial := range trials {
		jobs := randomJobs(r, 1+r.IntN(8))
		slots := 1 + r.IntN(2)
		tt := 2 + 20*r.Float64()
		p := New(jobs, slots)
		got, want := p.Late(tt), exactLate(p.jobs, slots, tt)
		if got > want {
			t.Fatalf("trial %d: Late(%v) = %d over the exact %d for %+v on %d slots", trial, tt, got, want, p.jobs, slots)
		}
		if got == want {
			equal++
		}
	}
	// A bound that said 0 everywhere would pass the check above; this
	// one matches the optimum on most small instances.
	if equal < trials*3/4 {
		t.Errorf("Late matched the exhaustive optimum in %d of %d trials, want most", equal, trials)
	}
}

// TestQuantileBelowExhaustive checks that Quantile never exceeds the
// relaxation's optimal quantile, which exhaustive search finds as the
// smallest candidate time at which few enough jobs must be late.
func TestQuantileBelowExhaustive(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 5))
	for trial := range 200 {
		jobs := randomJobs(r, 1+r.IntN(7))
		slots := 1 + r.IntN(2)
		q := []float64{0.5, 0.9, 0.99}[r.IntN(3)]
		p := New(jobs, slots)
		n := len(jobs)
		need := n - min(max(int(math.Ceil(q*float64(n))), 1), n) + 1
		// The relaxation's optimal quantile is the smallest t with
		// exactLate(t) < need (more time never makes more jobs late).
		lo, opt := 0.0, 1000.0
		for opt-lo > 1e-7 {
			if mid := (lo + opt) / 2; exactLate(p.jobs, slots, mid) < need {
				opt = mid
			} else {
				lo = mid
			}
		}
		got := p.Quantile(q)
		if got > opt+1e-6 {
			t.Fatalf("trial %d: Quantile(%v) = %v over the optimum %v for %+v on %d slots", trial, q, got, opt, p.jobs, slots)
		}
		ideals := make([]float64, n)
		for i, j := range jobs {
			ideals[i] = j.Ideal
		}
		slices.Sort(ideals)
		if floor := ideals[n-need]; got < floor {
			t.Fatalf("trial %d: Quantile(%v) = %v under the ideal quantile %v", trial, q, got, floor)
		}
	}
}

// TestMaxSpanOnlyWeakens checks that capping the windows' span never
// raises the bound.
func TestMaxSpanOnlyWeakens(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 9))
	for trial := range 200 {
		jobs := randomJobs(r, 2+r.IntN(30))
		tt := 2 + 20*r.Float64()
		full := New(jobs, 1).Late(tt)
		capped := New(jobs, 1)
		capped.MaxSpan = 1 + r.IntN(5)
		if got := capped.Late(tt); got > full {
			t.Fatalf("trial %d: MaxSpan %d gave %d late, over the uncapped %d", trial, capped.MaxSpan, got, full)
		}
	}
}

func TestMean(t *testing.T) {
	tests := []struct {
		name  string
		jobs  []Job
		slots int
		want  float64
	}{
		{"one slot, three at once", []Job{{0, 10, 1}, {0, 10, 1}, {0, 10, 1}}, 1, 20},
		{"a smaller job preempts", []Job{{0, 10, 1}, {1, 2, 1}}, 1, 7},
		{"ideals above the fluid optimum", []Job{{0, 10, 50}, {0, 10, 30}}, 10, 40},
		{"slots share the work", []Job{{0, 10, 1}, {0, 10, 1}}, 2, 7.5},
		{"idle between jobs", []Job{{0, 2, 1}, {100, 2, 1}}, 1, 2},
	}
	for _, tc := range tests {
		if got := New(tc.jobs, tc.slots).Mean(); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("%s: Mean = %v, want %v", tc.name, got, tc.want)
		}
	}
	if got := New(nil, 1).Mean(); !math.IsNaN(got) {
		t.Errorf("Mean of no jobs = %v, want NaN", got)
	}
}

// bestSum is the least sum of response times of jobs with integer
// arrivals and works on one slot, preempting at whole time units, by
// exhaustive search over which released job runs in each unit.
func bestSum(arrival, work []int) int {
	memo := map[string]int{}
	var search func(now int, left []int) int
	search = func(now int, left []int) int {
		key := fmt.Sprint(now, left)
		if v, ok := memo[key]; ok {
			return v
		}
		best, any := math.MaxInt, false
		for i := range left {
			if left[i] == 0 || arrival[i] > now {
				continue
			}
			any = true
			next := slices.Clone(left)
			next[i]--
			cost := 0
			if next[i] == 0 {
				cost = now + 1 - arrival[i]
			}
			best = min(best, cost+search(now+1, next))
		}
		if !any {
			done := true
			for _, l := range left {
				done = done && l == 0
			}
			if done {
				best = 0
			} else {
				best = search(now+1, left)
			}
		}
		memo[key] = best
		return best
	}
	return search(0, work)
}

// TestMeanMatchesExhaustive checks Mean's relaxation optimum against
// exhaustive search on one slot, with ideals too small to matter.
func TestMeanMatchesExhaustive(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 8))
	for trial := range 300 {
		n := 1 + r.IntN(4)
		arrival, work := make([]int, n), make([]int, n)
		jobs := make([]Job, n)
		for i := range jobs {
			arrival[i], work[i] = r.IntN(6), 1+r.IntN(4)
			jobs[i] = Job{Arrival: float64(arrival[i]), Work: float64(work[i]), Ideal: 0.5}
		}
		want := float64(bestSum(arrival, work)) / float64(n)
		if got := New(jobs, 1).Mean(); math.Abs(got-want) > 1e-9 {
			t.Fatalf("trial %d: Mean = %v, exhaustive optimum %v, for arrivals %v works %v", trial, got, want, arrival, work)
		}
	}
}
