package client

import (
	"math/rand/v2"
	"testing"
	"time"
)

// The budget over a synthetic clock: each step records first attempts or
// asks for a resubmission at a time offset, and says what must follow.
func TestRetryBudget(t *testing.T) {
	t0 := time.Date(2026, 11, 23, 15, 0, 0, 0, time.UTC)
	type step struct {
		at        time.Duration
		first     int // first-attempt tasks to record (if > 0)
		retry     int // resubmitted tasks to ask for (if > 0)
		wantOK    bool
		wantLimit int // limit after the step
		wantUsed  int // used after the step
	}
	for _, tc := range []struct {
		name   string
		budget RetryBudget
		steps  []step
	}{
		{
			name:   "the floor lets a tiny run retry a few tasks",
			budget: RetryBudget{Fraction: 0.1, Window: 10 * time.Second, Min: 10},
			steps: []step{
				{at: 0, first: 6, wantLimit: 10},
				{at: time.Second, retry: 6, wantOK: true, wantLimit: 10, wantUsed: 6},
				{at: 2 * time.Second, retry: 4, wantOK: true, wantLimit: 10, wantUsed: 10},
				{at: 3 * time.Second, retry: 1, wantOK: false, wantLimit: 10, wantUsed: 10},
			},
		},
		{
			name:   "the fraction of first attempts above the floor",
			budget: RetryBudget{Fraction: 0.1, Window: 10 * time.Second, Min: 10},
			steps: []step{
				{at: 0, first: 300, wantLimit: 30},
				{at: time.Second, retry: 25, wantOK: true, wantLimit: 30, wantUsed: 25},
				{at: time.Second, retry: 6, wantOK: false, wantLimit: 30, wantUsed: 25}, // whole job or nothing
				{at: time.Second, retry: 5, wantOK: true, wantLimit: 30, wantUsed: 30},
				{at: 2 * time.Second, first: 100, wantLimit: 40, wantUsed: 30},
				{at: 2 * time.Second, retry: 10, wantOK: true, wantLimit: 40, wantUsed: 40},
			},
		},
		{
			name:   "the window slides: old first attempts and old retries expire",
			budget: RetryBudget{Fraction: 0.5, Window: 10 * time.Second, Min: 2},
			steps: []step{
				{at: 0, first: 20, wantLimit: 10},
				{at: time.Second, retry: 10, wantOK: true, wantLimit: 10, wantUsed: 10},
				{at: 5 * time.Second, first: 4, wantLimit: 12, wantUsed: 10},
				{at: 9 * time.Second, retry: 3, wantOK: false, wantLimit: 12, wantUsed: 10},
				// At 10 s the first 20 have left the window (an event counts
				// while now - t < window); the 10 retries at 1 s remain.
				{at: 10 * time.Second, retry: 1, wantOK: false, wantLimit: 2, wantUsed: 10},
				// At 11 s they have left too: only the 4 at 5 s count.
				{at: 11 * time.Second, retry: 2, wantOK: true, wantLimit: 2, wantUsed: 2},
				{at: 15 * time.Second, wantLimit: 2, wantUsed: 2},
				{at: 21 * time.Second, wantLimit: 2, wantUsed: 0},
			},
		},
		{
			name:   "no fraction: the floor alone",
			budget: RetryBudget{Fraction: 0, Window: time.Minute, Min: 3},
			steps: []step{
				{at: 0, first: 1000, wantLimit: 3},
				{at: 0, retry: 3, wantOK: true, wantLimit: 3, wantUsed: 3},
				{at: 0, retry: 1, wantOK: false, wantLimit: 3, wantUsed: 3},
			},
		},
		{
			name:   "no floor: a run with no first attempts in the window may not retry",
			budget: RetryBudget{Fraction: 0.1, Window: time.Second, Min: 0},
			steps: []step{
				{at: 0, first: 10, wantLimit: 1},
				{at: 2 * time.Second, retry: 1, wantOK: false, wantLimit: 0, wantUsed: 0},
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := tc.budget
			for i, s := range tc.steps {
				now := t0.Add(s.at)
				if s.first > 0 {
					b.AddFirst(now, s.first)
				}
				if s.retry > 0 {
					if ok := b.TryRetry(now, s.retry); ok != s.wantOK {
						t.Errorf("step %d: TryRetry(%v, %d) = %v, want %v", i, s.at, s.retry, ok, s.wantOK)
					}
				}
				if got := b.Limit(now); got != s.wantLimit {
					t.Errorf("step %d at %v: limit %d, want %d", i, s.at, got, s.wantLimit)
				}
				if got := b.Used(now); got != s.wantUsed {
					t.Errorf("step %d at %v: used %d, want %d", i, s.at, got, s.wantUsed)
				}
			}
		})
	}
}

// Against an independent oracle (a brute-force sum over every event):
// however first attempts and retries interleave, whenever a resubmission
// is admitted the resubmitted tasks of the window ending then, it
// included, are at most max(Min, Fraction × first attempts in it). (Later,
// as first attempts leave the window, the limit may fall below what was
// admitted: the budget bounds admissions, it cannot take them back.)
func TestRetryBudgetNeverExceeded(t *testing.T) {
	t0 := time.Date(2026, 11, 23, 15, 0, 0, 0, time.UTC)
	b := RetryBudget{Fraction: 0.1, Window: 10 * time.Second, Min: 5}
	type ev struct {
		at    time.Time
		n     int
		first bool
	}
	var all []ev
	refused := 0
	rng := rand.New(rand.NewPCG(42, 43))
	now := t0
	for i := 0; i < 5000; i++ {
		x := rng.Uint64()
		now = now.Add(time.Duration(x%300) * time.Millisecond)
		n := int(x>>20%6) + 1
		admitted := false
		if x>>40%3 == 0 {
			b.AddFirst(now, n)
			all = append(all, ev{now, n, true})
		} else if !b.TryRetry(now, n) {
			refused++
		} else {
			all = append(all, ev{now, n, false})
			admitted = true
		}
		// Oracle: sums over the window ending now.
		first, retried := 0, 0
		for _, e := range all {
			if now.Sub(e.at) < b.Window {
				if e.first {
					first += e.n
				} else {
					retried += e.n
				}
			}
		}
		if limit := max(b.Min, int(b.Fraction*float64(first))); admitted && retried > limit {
			t.Fatalf("at event %d: %d tasks resubmitted in the window, limit %d (%d first attempts)", i, retried, limit, first)
		}
		if got := b.Used(now); got != retried {
			t.Fatalf("at event %d: Used = %d, oracle %d", i, got, retried)
		}
	}
	if refused == 0 {
		t.Error("no resubmission was refused: the sequence does not exercise the budget")
	}
}
