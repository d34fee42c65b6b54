package client

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/rs/zerolog"

	"github.com/sparrowfleet/sparrow/internal/rpc"
	"github.com/sparrowfleet/sparrow/thrift/gen-go/sparrowrpc"
)

// Registration is tried again, after the backoff's doubling waits, while
// the node monitor does not answer; a refusal ends it at once, and so
// does the context, with the last attempt's error.
func TestRegisterWithRetry(t *testing.T) {
	backoff := Backoff{Base: 100 * time.Millisecond, Max: time.Second}
	down := errors.New("connection refused")
	for _, tc := range []struct {
		name      string
		failures  int   // attempts that fail before one succeeds
		last      error // the error of the failing attempts
		timeout   time.Duration
		wantTries int
		wantWait  time.Duration
		wantErr   []error
	}{
		{"answers at once", 0, nil, time.Minute, 1, 0, nil},
		{"answers on the fourth try", 3, down, time.Minute, 4, 100*time.Millisecond + 200*time.Millisecond + 400*time.Millisecond, nil},
		{"waits are capped", 6, down, time.Minute, 7, 100*time.Millisecond + 200*time.Millisecond + 400*time.Millisecond + 800*time.Millisecond + 2*time.Second, nil},
		{"refused", 1, errRegistrationRefused, time.Minute, 1, 0, []error{errRegistrationRefused}},
		{"never answers", 1 << 30, down, 2 * time.Second, 5, 2 * time.Second, []error{down, context.DeadlineExceeded}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx, cancel := context.WithTimeout(context.Background(), tc.timeout)
				defer cancel()
				tries := 0
				register := func(context.Context) error {
					tries++
					if tries <= tc.failures {
						return tc.last
					}
					return nil
				}
				var failed []int
				start := time.Now()
				err := registerWithRetry(ctx, register, backoff, func(n int, _ error) { failed = append(failed, n) })
				waited := time.Since(start)
				for _, want := range tc.wantErr {
					if !errors.Is(err, want) {
						t.Errorf("error %v, want it to wrap %v", err, want)
					}
				}
				if tc.wantErr == nil && err != nil {
					t.Errorf("error %v, want nil", err)
				}
				if tries != tc.wantTries || waited != tc.wantWait {
					t.Errorf("%d tries over %v, want %d over %v", tries, waited, tc.wantTries, tc.wantWait)
				}
				if tc.last == down && len(failed) != min(tc.failures, tries) {
					t.Errorf("onFail saw attempts %v", failed)
				}
			})
		})
	}
}

// The watch registers again once the node monitor answers after it did
// not (it restarted, forgetting its executors), and only then; a failed
// registration is tried again at the next check.
func TestWatchRegistration(t *testing.T) {
	for _, tc := range []struct {
		name       string
		probes     string // one per check: u (answers) or d (does not)
		registerOK string // one per registration: y or n
		want       int    // registrations
	}{
		{"steady", "uuuuu", "", 0},
		{"restart", "uuddduu", "y", 1},
		{"two restarts", "uduudu", "yy", 2},
		{"registration fails once", "uduuu", "ny", 2},
		{"still down", "uddd", "", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				const every = time.Second
				ctx, cancel := context.WithCancel(context.Background())
				var mu sync.Mutex
				checks, registrations := 0, 0
				probe := func(context.Context) error {
					mu.Lock()
					defer mu.Unlock()
					i := checks
					checks++
					if i < len(tc.probes) && tc.probes[i] == 'd' {
						return fmt.Errorf("dial: connection refused")
					}
					return nil
				}
				register := func(context.Context) error {
					mu.Lock()
					defer mu.Unlock()
					i := registrations
					registrations++
					if i < len(tc.registerOK) && tc.registerOK[i] == 'n' {
						return fmt.Errorf("node monitor not ready")
					}
					return nil
				}
				done := make(chan struct{})
				go func() {
					defer close(done)
					watchRegistration(ctx, every, probe, register, zerolog.Nop())
				}()
				time.Sleep(time.Duration(len(tc.probes))*every + every/2) // fake clock: exactly len(probes) checks
				cancel()
				<-done
				if checks != len(tc.probes) || registrations != tc.want {
					t.Errorf("%d checks, %d registrations; want %d, %d", checks, registrations, len(tc.probes), tc.want)
				}
			})
		})
	}
}

// startNodeMonitor serves nm on a loopback port.
func startNodeMonitor(t *testing.T, nm *fakeNodeMonitor) string {
	t.Helper()
	srv, err := rpc.Listen("127.0.0.1:0", rpc.Config{}, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(sparrowrpc.NewNodeMonitorServiceProcessor(nm))
	t.Cleanup(func() { srv.Close() })
	return srv.Addr()
}

// launch sends launchTask for task id to the executor at addr.
func launch(t *testing.T, addr, id string) error {
	t.Helper()
	p := rpc.NewPool(rpc.Config{}, sparrowrpc.NewExtendedBackendServiceClient)
	defer p.Close()
	tid := &sparrowrpc.TFullTaskId{TaskId: id, RequestId: "r", AppId: "app",
		SchedulerAddress: &sparrowrpc.THostPort{Host: "127.0.0.1", Port: 20503}}
	return p.Call(context.Background(), addr, func(ctx context.Context, c *sparrowrpc.ExtendedBackendServiceClient) error {
		return c.LaunchTask(ctx, []byte(id), tid, &sparrowrpc.TUserGroupInfo{})
	})
}

// waitUntil polls cond until it holds or the deadline passes.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("after 20 s: %s", what)
		}
		time.Sleep(5 * time.Millisecond) // polling a condition, with a deadline
	}
}

// Shutdown refuses new launches at once, lets a running task finish and
// report its result, and returns once it has; past its context's end it
// cancels the task, which is reported failed, and returns the context's
// error.
func TestBackendShutdown(t *testing.T) {
	for _, tc := range []struct {
		name       string
		deadline   bool // Shutdown's context ends before the task would
		wantStatus int32
		wantBody   string
	}{
		{"task finishes", false, StatusOK, "counted"},
		{"deadline cancels the task", true, StatusFailed, context.Canceled.Error()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			nm := newFakeNodeMonitor()
			release := make(chan struct{})
			started := make(chan struct{}, 1)
			b, err := NewBackend(context.Background(), BackendConfig{
				App: "app", NodeMonitor: startNodeMonitor(t, nm), Listen: "127.0.0.1:0", Watch: -1,
				Run: func(ctx context.Context, _ LaunchedTask) ([]byte, error) {
					started <- struct{}{}
					select {
					case <-release:
						return []byte("counted"), nil
					case <-ctx.Done():
						return nil, ctx.Err()
					}
				},
			})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { b.Close() })
			if err := launch(t, b.Addr(), "t1"); err != nil {
				t.Fatal(err)
			}
			<-started
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			shut := make(chan error, 1)
			go func() { shut <- b.Shutdown(ctx) }()
			waitUntil(t, "a launch to be refused while shutting down", func() bool { return launch(t, b.Addr(), "t2") != nil })
			select {
			case err := <-shut:
				t.Fatalf("Shutdown returned %v with a task running", err)
			default:
			}
			if tc.deadline {
				cancel()
			} else {
				close(release)
			}
			err = <-shut
			if tc.deadline != errors.Is(err, context.Canceled) {
				t.Errorf("Shutdown: %v", err)
			}
			_, _, done := nm.counts()
			nm.mu.Lock()
			status, body := nm.status["t1"], nm.bodies["t1"]
			nm.mu.Unlock()
			if done["t1"] != 1 || done["t2"] != 0 || status != tc.wantStatus || body != tc.wantBody {
				t.Errorf("taskDone t1 %d times (status %d, %q), t2 %d times; want t1 once with %d, %q",
					done["t1"], status, body, done["t2"], tc.wantStatus, tc.wantBody)
			}
		})
	}
}
