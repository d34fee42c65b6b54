package quincy

import (
	"math/rand/v2"
	"slices"
	"testing"
)

func TestFairShares(t *testing.T) {
	for _, tc := range []struct {
		slots  int
		demand []int
		want   []int
	}{
		{10, []int{5, 5}, []int{5, 5}},
		{10, []int{2, 20, 20}, []int{2, 4, 4}},          // base 3; the 2 left split
		{7, []int{10, 10, 10}, []int{3, 2, 2}},          // base 2; one left, to job 0
		{10, []int{0, 3, 100}, []int{0, 3, 7}},          // the rest to the only job short
		{10, []int{1, 1}, []int{1, 1}},                  // Σ A = min(M, Σ N)
		{0, []int{3}, []int{0}},                         // no slots
		{5, nil, []int{}},                               // no jobs
		{3, []int{5, 5, 5, 5, 5}, []int{1, 1, 1, 0, 0}}, // K > M: base 0
	} {
		if got := FairShares(tc.slots, tc.demand); !slices.Equal(got, tc.want) {
			t.Errorf("FairShares(%d, %v) = %v, want %v", tc.slots, tc.demand, got, tc.want)
		}
	}
}

// TestFairSharesProperties: Σ A = min(M, Σ N), A_j <= N_j, and shares of
// jobs short of their demand differ by at most one.
func TestFairSharesProperties(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		demand := make([]int, 1+rng.IntN(8))
		sum := 0
		for j := range demand {
			demand[j] = rng.IntN(30)
			sum += demand[j]
		}
		slots := rng.IntN(100)
		a := FairShares(slots, demand)
		total := 0
		for j := range a {
			total += a[j]
			if a[j] > demand[j] || a[j] < 0 {
				t.Fatalf("FairShares(%d, %v) = %v: share above demand", slots, demand, a)
			}
		}
		if total != min(slots, sum) {
			t.Fatalf("FairShares(%d, %v) = %v: sum %d, want %d", slots, demand, a, total, min(slots, sum))
		}
		// Every job short of its demand has at least as much as any
		// other job's share, less one (max-min fairness in whole slots).
		for j := range a {
			if a[j] < demand[j] {
				for k := range a {
					if a[k] > a[j]+1 {
						t.Fatalf("FairShares(%d, %v) = %v: job %d short at %d while job %d has %d", slots, demand, a, j, a[j], k, a[k])
					}
				}
			}
		}
	}
}

func TestNonPreemptiveShares(t *testing.T) {
	for _, tc := range []struct {
		shares, running, want []int
	}{
		{[]int{5, 5}, []int{0, 0}, []int{5, 5}},
		// Job 0 runs 6 > 3: raised to 6; the 4 left are split 3:4 →
		// floors 1 and 2, the slot lost to rounding to job 1.
		{[]int{3, 3, 4}, []int{6, 0, 1}, []int{6, 2, 2}},
		// Job 1 drops below its running 2 after job 0 is raised, so it
		// is raised too and job 2 gets nothing.
		{[]int{2, 2, 2}, []int{4, 2, 0}, []int{4, 2, 0}},
	} {
		if got := nonPreemptiveShares(tc.shares, tc.running); !slices.Equal(got, tc.want) {
			t.Errorf("nonPreemptiveShares(%v, %v) = %v, want %v", tc.shares, tc.running, got, tc.want)
		}
	}
}

func TestPolicyNames(t *testing.T) {
	for _, p := range Policies {
		q, err := ParsePolicy(p.String())
		if err != nil || q != p {
			t.Errorf("ParsePolicy(%q) = %v, %v", p.String(), q, err)
		}
	}
	if _, err := ParsePolicy("GFP"); err == nil {
		t.Error("ParsePolicy accepted a queue-based policy")
	}
	for p, want := range map[Policy][2]bool{Q: {false, false}, QP: {false, true}, QF: {true, false}, QFP: {true, true}, QFPX: {true, true}} {
		if p.Fair() != want[0] || p.Preempts() != want[1] {
			t.Errorf("%v: fair %v preempts %v, want %v", p, p.Fair(), p.Preempts(), want)
		}
	}
}
