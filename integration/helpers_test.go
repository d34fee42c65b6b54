package integration

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/sparrowfleet/sparrow/bench/fleet"
	"github.com/sparrowfleet/sparrow/client"
	"github.com/sparrowfleet/sparrow/internal/logging"
)

// testLogger writes warnings and errors to the test log until the test
// ends; daemons' goroutines may log a moment after that, which testing
// does not allow.
func testLogger(t *testing.T) zerolog.Logger {
	w := &testWriter{t: t}
	t.Cleanup(func() {
		w.mu.Lock()
		w.done = true
		w.mu.Unlock()
	})
	l, err := logging.New(w, "warn")
	if err != nil {
		t.Fatal(err)
	}
	return l
}

type testWriter struct {
	t    *testing.T
	mu   sync.Mutex // held across the check and the log, so done is final
	done bool
}

func (w *testWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.done {
		w.t.Logf("%s", p)
	}
	return len(p), nil
}

// startFleet starts cfg's fleet and stops it when the test ends.
func startFleet(t *testing.T, cfg fleet.Config) *fleet.Fleet {
	t.Helper()
	if testing.Short() {
		t.Skip("integration test; skipped with -short")
	}
	cfg.Log = testLogger(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	f, err := fleet.Start(ctx, cfg)
	if err != nil {
		t.Fatalf("start fleet: %v", err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, what string, timeout time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		<-tick.C
	}
}

// launch is one launchTask seen by an executor.
type launch struct {
	node int
	app  string
}

// ledger records every launch and frontend message, keyed by
// "request/task", so tests can check exactly-once delivery.
type ledger struct {
	mu       sync.Mutex
	launches map[string][]launch
	messages map[string][]client.Message
}

func newLedger() *ledger {
	return &ledger{launches: map[string][]launch{}, messages: map[string][]client.Message{}}
}

func key(requestID, taskID string) string { return requestID + "/" + taskID }

func (l *ledger) launched(node int, t client.LaunchedTask) {
	l.mu.Lock()
	defer l.mu.Unlock()
	k := key(t.Ref.RequestID, t.Ref.TaskID)
	l.launches[k] = append(l.launches[k], launch{node: node, app: t.Ref.App})
}

func (l *ledger) message(m client.Message) {
	l.mu.Lock()
	defer l.mu.Unlock()
	k := key(m.Task.RequestID, m.Task.TaskID)
	l.messages[k] = append(l.messages[k], m)
}

// checkOnce fails t unless the ledger saw exactly total distinct tasks,
// each launched once.
func (l *ledger) checkOnce(t *testing.T, total int) {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.launches) != total {
		t.Errorf("launched %d distinct tasks, want %d", len(l.launches), total)
	}
	for id, ls := range l.launches {
		if len(ls) != 1 {
			t.Errorf("task %s launched %d times, want exactly once", id, len(ls))
		}
	}
}

// ledgerFrontend starts a frontend for app "app" on host, its messages
// recorded by l.
func ledgerFrontend(t *testing.T, f *fleet.Fleet, l *ledger, host string) *client.Frontend {
	t.Helper()
	fe, err := client.NewFrontend(context.Background(), client.FrontendConfig{
		App: "app", Schedulers: f.SchedulerAddrs(),
		Listen: host + ":0", AdvertiseHost: host,
		OnMessage: l.message, Log: testLogger(t), Timeout: 5 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fe.Close() })
	return fe
}

func (l *ledger) counts() (launches, messages int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.launches), len(l.messages)
}

// echoTask runs briefly and answers with its own identity, so that tests
// can check each message belongs to its task.
func echoTask(d time.Duration) client.TaskFunc {
	return func(ctx context.Context, t client.LaunchedTask) ([]byte, error) {
		select {
		case <-time.After(d):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return []byte("done:" + key(t.Ref.RequestID, t.Ref.TaskID) + ":" + string(t.Message)), nil
	}
}

// newJob builds a job of n tasks whose messages name them.
func newJob(id string, n int) client.Job {
	job := client.Job{RequestID: id, Tasks: make([]client.Task, n)}
	for i := range job.Tasks {
		job.Tasks[i] = client.Task{ID: fmt.Sprint(i), Message: []byte(fmt.Sprintf("m%d", i))}
	}
	return job
}
