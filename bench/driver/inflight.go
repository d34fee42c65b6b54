package driver

import (
	"context"
	"time"

	"github.com/sparrowfleet/sparrow/client"
	"github.com/sparrowfleet/sparrow/internal/rpc"
)

// Backpressure at submit.
//
// A saturated scheduler holds submitJob calls until their reservations are
// placed (scheduler/hold.go). An open-loop driver that kept starting a
// submit per arrival would then pile up goroutines, and once its
// connection pool to the scheduler (rpc.DefaultMaxConnsPerPeer) was all
// held calls, every further submit would fail with rpc.ErrBusy and be
// resubmitted as a new job: attempts that the fleet never saw, charged to
// the retry budget. So the driver keeps at most Config.MaxInFlight
// submitJob calls in flight: an arrival past it waits for one to return
// (the arrival loop blocks, so the offered rate falls to the fleet's
// pace), and a resubmission waits likewise after its backoff. A call that
// still meets rpc.ErrBusy (the pool shared with something else) was never
// sent; it is retried under the same request id after a short pause, not
// counted as an attempt.

// DefaultMaxInFlight is the most submitJob calls in flight at once: the
// client pool's connections to one scheduler.
const DefaultMaxInFlight = rpc.DefaultMaxConnsPerPeer

// acquireSlot takes one of the MaxInFlight submit slots, waiting while all
// are taken. It returns false if ctx ends or stop fires first; fired says
// stop fired (the caller's deadline timer, whose one value this consumed).
// A wait is counted in the summary as backpressure.
func (r *runner) acquireSlot(ctx context.Context, stop <-chan time.Time) (ok, fired bool) {
	select {
	case r.slots <- struct{}{}:
		return true, false
	default:
	}
	if r.cfg.onSlotWait != nil {
		r.cfg.onSlotWait()
	}
	start := time.Now()
	select {
	case r.slots <- struct{}{}:
	case <-ctx.Done():
		return false, false
	case <-stop:
		return false, true
	}
	waited := time.Since(start)
	r.mu.Lock()
	r.sum.BackpressureWaits++
	r.sum.BackpressureWaitS += waited.Seconds()
	r.mu.Unlock()
	return true, false
}

// releaseSlot returns a slot taken by acquireSlot.
func (r *runner) releaseSlot() { <-r.slots }

// submitUntilSent submits job, trying again under the same request id
// while every connection to the scheduler is busy (the call was never
// sent), until ctx ends. It returns the last submit's error.
func (r *runner) submitUntilSent(ctx context.Context, job client.Job) error {
	return rpc.UntilSent(ctx, func() error {
		_, err := r.fe.Submit(ctx, job)
		return err
	}, func() {
		r.mu.Lock()
		r.sum.BusyRetries++
		r.mu.Unlock()
	})
}
