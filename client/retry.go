package client

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"
)

// Defaults of a RetryPolicy.
const (
	DefaultRetryAttempts  = 5
	DefaultRetryBase      = 100 * time.Millisecond
	DefaultRetryMax       = 10 * time.Second
	DefaultRetryBudget    = 0.1
	DefaultRetryWindow    = 10 * time.Second
	DefaultRetryBudgetMin = 100
)

// ErrRetryBudget is wrapped, with the last refusal, when a Frontend's
// retry budget refused to submit a job again.
var ErrRetryBudget = errors.New("retry budget exhausted")

// RetryPolicy makes Frontend.Submit submit a job again, under the same
// request id, when nothing of it was scheduled and it may succeed later:
// the fleet was saturated (SaturatedError) or no scheduler answered
// (UnreachableError). Other refusals, and a job in doubt (ErrInDoubt),
// are returned at once: submitting those again could not succeed, or
// could run a task twice.
//
// The k-th resubmission of a job waits Backoff{Base, Max}.Delay(k,
// suggested, Rand()): the scheduler's suggested delay as a floor plus a
// full-jitter draw. A budget shared by every Submit of the frontend bounds
// the resubmitted tasks over any sliding BudgetWindow to max(BudgetMin,
// Budget × first-attempt tasks in it); past it Submit gives up with
// ErrRetryBudget and the last refusal. Zero fields take the Default*
// constants; a negative Budget or BudgetMin means none (fraction 0, no
// floor).
type RetryPolicy struct {
	// MaxAttempts bounds the submissions of one job, the first included.
	MaxAttempts int
	// Base and Max shape the backoff (see Backoff).
	Base, Max time.Duration
	// Budget, BudgetWindow and BudgetMin shape the retry budget (see
	// RetryBudget).
	Budget       float64
	BudgetWindow time.Duration
	BudgetMin    int
	// Rand returns a uniform draw in [0, 1) for the jitter (nil:
	// math/rand/v2's Float64). Called from concurrent Submits, so it
	// must be safe for concurrent use. Tests pass a fixed draw.
	Rand func() float64
	// Sleep waits d, or returns ctx's error if ctx ends first (nil: a
	// timer). Tests pass a fake that records the delays.
	Sleep func(ctx context.Context, d time.Duration) error
	// Now is the budget's clock (nil: time.Now).
	Now func() time.Time
	// OnRetry, if set, is called before each wait with the attempt about
	// to be made (2 for the first resubmission), the delay, and the error
	// that caused it.
	OnRetry func(attempt int, delay time.Duration, cause error)
}

// WithDefaults is p with its zero fields defaulted, or an error naming a
// field out of range. NewFrontend applies it to FrontendConfig.Retry.
func (p RetryPolicy) WithDefaults() (RetryPolicy, error) {
	switch {
	case p.MaxAttempts < 0:
		return p, fmt.Errorf("retry policy: MaxAttempts %d is negative", p.MaxAttempts)
	case p.Base < 0 || p.Max < 0 || p.BudgetWindow < 0:
		return p, fmt.Errorf("retry policy: Base, Max and BudgetWindow must not be negative")
	case p.Budget > 100:
		return p, fmt.Errorf("retry policy: Budget %v: want a fraction of first attempts (0.1 is 10%%)", p.Budget)
	}
	if p.MaxAttempts == 0 {
		p.MaxAttempts = DefaultRetryAttempts
	}
	if p.Base == 0 {
		p.Base = DefaultRetryBase
	}
	if p.Max == 0 {
		p.Max = DefaultRetryMax
	}
	if p.Max < p.Base {
		return p, fmt.Errorf("retry policy: Max %v is below Base %v", p.Max, p.Base)
	}
	if p.Budget == 0 {
		p.Budget = DefaultRetryBudget
	}
	if p.BudgetWindow == 0 {
		p.BudgetWindow = DefaultRetryWindow
	}
	if p.BudgetMin == 0 {
		p.BudgetMin = DefaultRetryBudgetMin
	}
	if p.Rand == nil {
		p.Rand = rand.Float64
	}
	if p.Sleep == nil {
		p.Sleep = sleep
	}
	if p.Now == nil {
		p.Now = time.Now
	}
	return p, nil
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// retrier carries out a RetryPolicy for one frontend. mu guards budget;
// it is never held while submitting or sleeping.
type retrier struct {
	p       RetryPolicy
	backoff Backoff

	mu     sync.Mutex
	budget RetryBudget
}

func newRetrier(p RetryPolicy) (*retrier, error) {
	p, err := p.WithDefaults()
	if err != nil {
		return nil, err
	}
	return &retrier{
		p: p, backoff: Backoff{Base: p.Base, Max: p.Max},
		budget: RetryBudget{Fraction: max(p.Budget, 0), Window: p.BudgetWindow, Min: max(p.BudgetMin, 0)},
	}, nil
}

// do calls submit, a job of tasks tasks, and calls it again after a
// backoff while it fails retryably, within the attempts and the budget.
// It returns nil or the error that ended it.
func (r *retrier) do(ctx context.Context, tasks int, submit func() error) error {
	r.mu.Lock()
	r.budget.AddFirst(r.p.Now(), tasks)
	r.mu.Unlock()
	err := submit()
	for attempt := 2; err != nil; attempt++ {
		again, suggested := retryable(err)
		if !again {
			return err
		}
		if attempt > r.p.MaxAttempts {
			return fmt.Errorf("gave up after %d attempts: %w", r.p.MaxAttempts, err)
		}
		r.mu.Lock()
		now := r.p.Now()
		ok := r.budget.TryRetry(now, tasks)
		used, limit := r.budget.Used(now), r.budget.Limit(now)
		r.mu.Unlock()
		if !ok {
			return fmt.Errorf("%w (%d of %d resubmitted tasks in the last %v): %w",
				ErrRetryBudget, used, limit, r.p.BudgetWindow, err)
		}
		delay := r.backoff.Delay(attempt-1, suggested, r.p.Rand())
		if r.p.OnRetry != nil {
			r.p.OnRetry(attempt, delay, err)
		}
		if serr := r.p.Sleep(ctx, delay); serr != nil {
			return fmt.Errorf("%w (waiting to retry: %w)", err, serr)
		}
		err = submit()
	}
	return nil
}

// draw is a uniform draw in [0, 1) for a jitter: from the frontend's
// RetryPolicy.Rand if it has one.
func (f *Frontend) draw() float64 {
	if f.retry != nil {
		return f.retry.p.Rand()
	}
	return rand.Float64()
}
