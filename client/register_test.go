package client

import (
	"context"
	"errors"
	"fmt"
	"io"
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

// The watch holds a connection to the node monitor; once it ends, it
// probes every interval and registers again once the node monitor
// answers, and only then; a failed registration is tried again at the
// next probe; a node monitor that stays up is never probed.
func TestWatchRegistration(t *testing.T) {
	for _, tc := range []struct {
		name       string
		holds      []time.Duration // how long each held connection lasts; later ones last
		probes     string          // one per probe: u (answers) or d (does not)
		registerOK string          // one per registration: y or n
		want       int             // registrations
	}{
		{"steady", nil, "", "", 0},
		{"restart", []time.Duration{2 * time.Second}, "ddu", "y", 1},
		{"two restarts", []time.Duration{time.Second, 2 * time.Second}, "uu", "yy", 2},
		{"registration fails once", []time.Duration{time.Second}, "uu", "ny", 2},
		{"still down", []time.Duration{time.Second}, "dddd", "", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				const every = time.Second
				ctx, cancel := context.WithCancel(context.Background())
				var mu sync.Mutex
				holds, probes, registrations := 0, 0, 0
				hold := func(ctx context.Context) error {
					mu.Lock()
					i := holds
					holds++
					mu.Unlock()
					if i >= len(tc.holds) {
						<-ctx.Done()
						return ctx.Err()
					}
					time.Sleep(tc.holds[i])
					return io.EOF
				}
				probe := func(context.Context) error {
					mu.Lock()
					defer mu.Unlock()
					i := probes
					probes++
					if i >= len(tc.probes) || tc.probes[i] == 'd' {
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
					watchRegistration(ctx, every, hold, probe, register, zerolog.Nop())
				}()
				var run time.Duration
				for _, d := range tc.holds {
					run += d
				}
				// Fake clock: every scripted probe is made, and one more if
				// the script ends with the node monitor still down.
				run += time.Duration(len(tc.probes))*every + every/2
				time.Sleep(run)
				cancel()
				<-done
				if registrations != tc.want {
					t.Errorf("%d registrations; want %d", registrations, tc.want)
				}
				if probes < len(tc.probes) {
					t.Errorf("%d probes; want the %d scripted", probes, len(tc.probes))
				}
				if tc.holds == nil && (probes != 0 || holds != 1) {
					t.Errorf("a node monitor that stayed up was probed %d times and held %d times; want 0 and 1", probes, holds)
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
