package client

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"testing/synctest"
	"time"
)

// fakeTime is a RetryPolicy's clock and sleeper: Sleep records the delay
// and advances the clock by it, without waiting.
type fakeTime struct {
	now    time.Time
	slept  []time.Duration
	cancel context.CancelFunc // if set, called at the sleep numbered cancelAt
	at     int
}

func (f *fakeTime) Now() time.Time { return f.now }
func (f *fakeTime) Sleep(ctx context.Context, d time.Duration) error {
	f.slept = append(f.slept, d)
	f.now = f.now.Add(d)
	if f.cancel != nil && len(f.slept) == f.at {
		f.cancel()
	}
	return ctx.Err()
}

func saturatedAfter(d time.Duration) error {
	return refusalError("s:1", "r", "app", textRefusal(fmt.Sprintf("fleet saturated: …; retry after %v", d)))
}

// The retry loop over scripted submit outcomes: which errors are retried,
// the delays waited (suggested floor plus jitter, doubling ceiling), and
// how it ends (attempts, budget, context).
func TestRetrierDo(t *testing.T) {
	unreachable := &UnreachableError{RequestID: "r"}
	invalid := refusalError("s:1", "r", "app", textRefusal("duplicate task id \"1\""))
	inDoubt := fmt.Errorf("submit r: %w", ErrInDoubt)
	for _, tc := range []struct {
		name     string
		policy   RetryPolicy
		tasks    int
		outcomes []error // one per submit; past the end, nil
		cancelAt int     // cancel the context at this sleep (0: never)
		// want
		submits int
		slept   []time.Duration
		errIs   []error // the returned error matches each (nil: no error)
		errAs   bool    // the returned error is still a *SaturatedError
	}{
		{
			name: "accepted at once", policy: RetryPolicy{}, tasks: 1,
			submits: 1,
		},
		{
			name:   "saturated twice then accepted: suggested floor plus half the ceiling",
			policy: RetryPolicy{Base: 100 * time.Millisecond, Max: time.Second}, tasks: 2,
			outcomes: []error{saturatedAfter(time.Second), saturatedAfter(500 * time.Millisecond)},
			submits:  3, slept: []time.Duration{time.Second + 50*time.Millisecond, 600 * time.Millisecond},
		},
		{
			name:   "unreachable is retried with no floor",
			policy: RetryPolicy{Base: 100 * time.Millisecond, Max: time.Second}, tasks: 1,
			outcomes: []error{unreachable, unreachable, unreachable},
			submits:  4, slept: []time.Duration{50 * time.Millisecond, 100 * time.Millisecond, 200 * time.Millisecond},
		},
		{
			name:   "the drawn part is capped, the suggestion is not",
			policy: RetryPolicy{Base: 100 * time.Millisecond, Max: 150 * time.Millisecond, MaxAttempts: 4}, tasks: 1,
			outcomes: []error{saturatedAfter(0), saturatedAfter(0), saturatedAfter(3 * time.Second)},
			submits:  4, slept: []time.Duration{50 * time.Millisecond, 75 * time.Millisecond, 3*time.Second + 75*time.Millisecond},
		},
		{
			name: "an invalid request is not retried", policy: RetryPolicy{}, tasks: 1,
			outcomes: []error{invalid}, submits: 1, errIs: []error{invalid},
		},
		{
			name: "a job in doubt is not retried", policy: RetryPolicy{}, tasks: 1,
			outcomes: []error{inDoubt}, submits: 1, errIs: []error{ErrInDoubt},
		},
		{
			name:   "attempts run out: the last refusal is returned",
			policy: RetryPolicy{MaxAttempts: 3, Base: 10 * time.Millisecond, Max: time.Second}, tasks: 1,
			outcomes: []error{saturatedAfter(0), saturatedAfter(0), saturatedAfter(0), nil},
			submits:  3, slept: []time.Duration{5 * time.Millisecond, 10 * time.Millisecond}, errAs: true,
		},
		{
			name: "the budget's floor runs out first",
			// Fraction 0.1 of 10 tasks is 1, the floor 15: one job of
			// 10 tasks may be resubmitted once.
			policy: RetryPolicy{MaxAttempts: 10, Base: 10 * time.Millisecond, Max: time.Second, Budget: 0.1, BudgetMin: 15}, tasks: 10,
			outcomes: []error{saturatedAfter(0), saturatedAfter(0), nil},
			submits:  2, slept: []time.Duration{5 * time.Millisecond}, errIs: []error{ErrRetryBudget}, errAs: true,
		},
		{
			name:   "no budget at all: nothing is resubmitted",
			policy: RetryPolicy{Budget: -1, BudgetMin: -1}, tasks: 1,
			outcomes: []error{unreachable}, submits: 1, errIs: []error{ErrRetryBudget, ErrNoScheduler},
		},
		{
			name:   "the context ends while waiting",
			policy: RetryPolicy{Base: 10 * time.Millisecond, Max: time.Second}, tasks: 1,
			outcomes: []error{saturatedAfter(0), saturatedAfter(0), nil}, cancelAt: 2,
			submits: 2, slept: []time.Duration{5 * time.Millisecond, 10 * time.Millisecond},
			errIs: []error{context.Canceled}, errAs: true,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			clock := &fakeTime{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
			if tc.cancelAt > 0 {
				clock.cancel, clock.at = cancel, tc.cancelAt
			}
			p := tc.policy
			p.Rand = func() float64 { return 0.5 }
			p.Now, p.Sleep = clock.Now, clock.Sleep
			var retries []int
			p.OnRetry = func(attempt int, _ time.Duration, cause error) {
				if cause == nil {
					t.Error("OnRetry without a cause")
				}
				retries = append(retries, attempt)
			}
			r, err := newRetrier(p)
			if err != nil {
				t.Fatal(err)
			}
			submits := 0
			err = r.do(ctx, tc.tasks, func() error {
				submits++
				if submits <= len(tc.outcomes) {
					return tc.outcomes[submits-1]
				}
				return nil
			})
			if submits != tc.submits {
				t.Errorf("%d submits, want %d", submits, tc.submits)
			}
			if !slices.Equal(clock.slept, tc.slept) {
				t.Errorf("slept %v, want %v", clock.slept, tc.slept)
			}
			if len(retries) != len(tc.slept) || (len(retries) > 0 && retries[0] != 2) {
				t.Errorf("OnRetry attempts %v for %d waits", retries, len(tc.slept))
			}
			if len(tc.errIs) == 0 && !tc.errAs {
				if err != nil {
					t.Errorf("error %v, want none", err)
				}
				return
			}
			if err == nil {
				t.Fatal("no error")
			}
			for _, target := range tc.errIs {
				if !errors.Is(err, target) {
					t.Errorf("error %v is not %v", err, target)
				}
			}
			var sat *SaturatedError
			if errors.As(err, &sat) != tc.errAs {
				t.Errorf("error %v: errors.As saturated = %v, want %v", err, !tc.errAs, tc.errAs)
			}
		})
	}
}

// The budget is shared by the jobs of one frontend: once earlier jobs'
// resubmissions used it, a later job's are refused until the window
// slides past them.
func TestRetrierBudgetShared(t *testing.T) {
	clock := &fakeTime{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	r, err := newRetrier(RetryPolicy{
		MaxAttempts: 2, Base: time.Millisecond, Max: time.Millisecond,
		Budget: -1, BudgetMin: 3, BudgetWindow: time.Minute,
		Rand: func() float64 { return 0 }, Now: clock.Now, Sleep: clock.Sleep,
	})
	if err != nil {
		t.Fatal(err)
	}
	refusedOnce := func() func() error {
		n := 0
		return func() error {
			if n++; n == 1 {
				return saturatedAfter(0)
			}
			return nil
		}
	}
	for i, want := range []bool{true, true, true, false, false} {
		err := r.do(context.Background(), 1, refusedOnce())
		if got := err == nil; got != want {
			t.Errorf("job %d: accepted %v (%v), want %v", i, got, err, want)
		}
		if err != nil && !errors.Is(err, ErrRetryBudget) {
			t.Errorf("job %d: %v, want the budget's refusal", i, err)
		}
	}
	clock.now = clock.now.Add(time.Minute)
	if err := r.do(context.Background(), 1, refusedOnce()); err != nil {
		t.Errorf("after the window slid: %v", err)
	}
}

func TestRetryPolicyValidation(t *testing.T) {
	for _, p := range []RetryPolicy{
		{MaxAttempts: -1},
		{Base: -time.Second},
		{BudgetWindow: -time.Second},
		{Budget: 1000},
		{Base: time.Second, Max: time.Millisecond},
	} {
		if _, err := newRetrier(p); err == nil {
			t.Errorf("%+v accepted", p)
		}
	}
	r, err := newRetrier(RetryPolicy{})
	if err != nil {
		t.Fatal(err)
	}
	if r.p.MaxAttempts != DefaultRetryAttempts || r.backoff != (Backoff{DefaultRetryBase, DefaultRetryMax}) ||
		r.budget.Fraction != DefaultRetryBudget || r.budget.Window != DefaultRetryWindow || r.budget.Min != DefaultRetryBudgetMin {
		t.Errorf("defaults: %+v, %+v, %+v", r.p, r.backoff, r.budget)
	}
}

// The default sleeper waits the delay on the clock, and returns early
// when the context ends.
func TestSleep(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		if err := sleep(context.Background(), 3*time.Second); err != nil || time.Since(start) != 3*time.Second {
			t.Errorf("sleep 3s: %v after %v", err, time.Since(start))
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		start = time.Now()
		if err := sleep(ctx, time.Hour); !errors.Is(err, context.DeadlineExceeded) || time.Since(start) != time.Second {
			t.Errorf("sleep cancelled after 1s: %v after %v", err, time.Since(start))
		}
		if err := sleep(ctx, 0); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("zero sleep on an ended context: %v", err)
		}
	})
}
