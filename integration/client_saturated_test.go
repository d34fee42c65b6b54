package integration

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sparrowfleet/sparrow/client"
)

// libraryFrontend is a frontend written against the client library alone:
// it submits with the retry policy given and counts what the fleet tells
// it in f.
func (f *holdFleet) libraryFrontend(t *testing.T, app string, retry *client.RetryPolicy) *client.Frontend {
	t.Helper()
	fe, err := client.NewFrontend(context.Background(), client.FrontendConfig{
		App: app, Schedulers: []string{f.sched.ServiceAddr()}, Listen: "127.0.0.1:0",
		Timeout: 5 * time.Second, Heartbeat: -1, Retry: retry, Log: testLogger(t),
		OnMessage: func(m client.Message) {
			f.mu.Lock()
			f.msgs[m.Task.RequestID]++
			if m.Status == client.StatusOK {
				f.ok++
			}
			f.mu.Unlock()
		},
	})
	if err != nil {
		t.Fatalf("frontend: %v", err)
	}
	t.Cleanup(func() { fe.Close() })
	return fe
}

// A saturated fleet over real Thrift: one scheduler that holds calls at
// most 100 ms, two one-slot node monitors whose tasks run until released.
// A frontend using the library's retry option sees the refusal as a
// *client.SaturatedError with the scheduler's suggested delay; its Submit
// resubmits under the same request id with backoff, gives up after its
// attempts with that error, and succeeds once capacity frees; no task
// runs twice. The scheduler's other refusals come back typed too.
func TestClientLibrarySaturatedFleet(t *testing.T) {
	gate, release := taskGate(t)
	f := startHoldFleet(t, 2, 64, 100*time.Millisecond, gatedRun(gate))

	var (
		mu      sync.Mutex
		retries []error         // the cause of every resubmission
		delays  []time.Duration // and its delay
		onRetry atomic.Pointer[func()]
	)
	policy := &client.RetryPolicy{
		MaxAttempts: 3, Base: 10 * time.Millisecond, Max: 50 * time.Millisecond,
		OnRetry: func(_ int, d time.Duration, cause error) {
			mu.Lock()
			retries, delays = append(retries, cause), append(delays, d)
			mu.Unlock()
			if hook := onRetry.Load(); hook != nil {
				(*hook)()
			}
		},
	}
	fe := f.libraryFrontend(t, holdApp, policy)
	taken := func() ([]error, []time.Duration) {
		mu.Lock()
		defer mu.Unlock()
		r, d := retries, delays
		retries, delays = nil, nil
		return r, d
	}

	// Fill the fleet until a call is held; with the tasks gated it is
	// refused at every attempt, and Submit returns the last refusal.
	call, accepted := f.fill(t, fe)
	var err error
	select {
	case err = <-call:
	case <-time.After(60 * time.Second):
		t.Fatal("held call neither answered nor refused")
	}
	var sat *client.SaturatedError
	if !errors.As(err, &sat) {
		t.Fatalf("submit on a saturated fleet: %v, want a *client.SaturatedError", err)
	}
	if sat.RetryAfter <= 0 || sat.Scheduler != f.sched.ServiceAddr() || !strings.Contains(sat.Message, "fleet saturated") {
		t.Errorf("saturated error %+v: want the scheduler, its message and a suggested delay", sat)
	}
	if !strings.Contains(err.Error(), "gave up after 3 attempts") {
		t.Errorf("error %q does not say the attempts ran out", err)
	}
	causes, waits := taken()
	if len(causes) != 2 {
		t.Fatalf("%d resubmissions, want 2 (3 attempts)", len(causes))
	}
	for i, c := range causes {
		var s *client.SaturatedError
		if !errors.As(c, &s) || waits[i] < s.RetryAfter {
			t.Errorf("resubmission %d: cause %v, delay %v: want a saturation refusal and at least its suggested delay", i, c, waits[i])
		}
	}

	// Once capacity frees during the backoff, the resubmission is
	// accepted: Submit returns the request id it was given.
	onRetry.Store(&release)
	id, err := fe.Submit(context.Background(), client.Job{RequestID: "after-saturation", Tasks: tasks(1, "")})
	if err != nil || id != "after-saturation" {
		t.Fatalf("submit while capacity frees: %q, %v", id, err)
	}
	if causes, _ := taken(); len(causes) == 0 {
		t.Error("the job was accepted without a resubmission: the fleet was not saturated")
	}
	waitFor(t, "every accepted task to report done", 30*time.Second, func() bool { return f.okCount() == accepted+1 })
	f.checkExactlyOnce(t, accepted+1)

	// The scheduler's other refusals, typed; none is resubmitted.
	other := f.libraryFrontend(t, "nobody-runs-this", policy)
	for _, tc := range []struct {
		name  string
		fe    *client.Frontend
		job   client.Job
		check func(error) bool
	}{
		{"unknown app", other, client.Job{Tasks: tasks(1, "")}, func(err error) bool {
			var e *client.UnknownAppError
			return errors.As(err, &e) && e.App == "nobody-runs-this"
		}},
		{"invalid request", fe, client.Job{Tasks: []client.Task{{ID: "x"}, {ID: "x"}}}, func(err error) bool {
			var e *client.InvalidRequestError
			return errors.As(err, &e) && strings.Contains(e.Message, "duplicate task id")
		}},
		{"unplaceable", fe, client.Job{Constraints: []client.Constraint{{Key: "zone", Op: "=", Values: []string{"nowhere"}}}, Tasks: tasks(1, "")}, func(err error) bool {
			var e *client.UnplaceableError
			return errors.As(err, &e)
		}},
	} {
		_, err := tc.fe.Submit(context.Background(), tc.job)
		if !tc.check(err) {
			t.Errorf("%s: %v (%T)", tc.name, err, errors.Unwrap(err))
		}
		if causes, _ := taken(); len(causes) != 0 {
			t.Errorf("%s: resubmitted %d times", tc.name, len(causes))
		}
	}
}
