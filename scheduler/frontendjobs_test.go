package scheduler

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sparrowfleet/sparrow/thrift/gen-go/sparrowrpc"
)

// TestJobBook: a job's address is kept until its last task ended and the
// linger passed, a resubmission under the same name replaces it, a
// withdrawn job and the jobs of a forgotten address go at once, and the
// number of jobs is bounded.
func TestJobBook(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	type step struct {
		op        string // add, end, withdraw, forget, expire
		app, req  string
		addr      string
		tasks     int
		at        time.Duration
		wantErr   string
		wantForgt int
	}
	tests := []struct {
		name  string
		max   int
		steps []step
		want  map[jobKey]string // kept jobs after
	}{
		{name: "kept while a task is open", steps: []step{
			{op: "add", app: "a", req: "r", addr: "f:1", tasks: 2},
			{op: "end", app: "a", req: "r"},
			{op: "expire", at: 2 * jobFrontendLinger},
		}, want: map[jobKey]string{{"a", "r"}: "f:1"}},
		{name: "kept for the linger after the last task ended", steps: []step{
			{op: "add", app: "a", req: "r", addr: "f:1", tasks: 1},
			{op: "end", app: "a", req: "r", at: time.Second},
			{op: "expire", at: jobFrontendLinger},
		}, want: map[jobKey]string{{"a", "r"}: "f:1"}},
		{name: "forgotten once the linger passed", steps: []step{
			{op: "add", app: "a", req: "r", addr: "f:1", tasks: 1},
			{op: "end", app: "a", req: "r", at: time.Second},
			{op: "end", app: "a", req: "r", at: 2 * time.Second}, // a second report counts nothing
			{op: "expire", at: time.Second + jobFrontendLinger},
		}, want: map[jobKey]string{}},
		{name: "a resubmission outlives the ended first submission", steps: []step{
			{op: "add", app: "a", req: "r", addr: "f:1", tasks: 1},
			{op: "end", app: "a", req: "r"},
			{op: "add", app: "a", req: "r", addr: "f:2", tasks: 1},
			{op: "expire", at: 2 * jobFrontendLinger},
		}, want: map[jobKey]string{{"a", "r"}: "f:2"}},
		{name: "same request id, other app", steps: []step{
			{op: "add", app: "a", req: "r", addr: "f:1", tasks: 1},
			{op: "add", app: "b", req: "r", addr: "f:2", tasks: 1},
			{op: "end", app: "a", req: "r"},
			{op: "expire", at: jobFrontendLinger},
		}, want: map[jobKey]string{{"b", "r"}: "f:2"}},
		{name: "withdrawn", steps: []step{
			{op: "add", app: "a", req: "r", addr: "f:1", tasks: 3},
			{op: "withdraw", app: "a", req: "r"},
		}, want: map[jobKey]string{}},
		{name: "an address forgotten takes exactly its jobs", steps: []step{
			{op: "add", app: "a", req: "r1", addr: "f:1", tasks: 1},
			{op: "add", app: "b", req: "r2", addr: "f:1", tasks: 1},
			{op: "add", app: "a", req: "r3", addr: "f:2", tasks: 1},
			{op: "forget", addr: "f:1", wantForgt: 2},
		}, want: map[jobKey]string{{"a", "r3"}: "f:2"}},
		{name: "bounded", max: 2, steps: []step{
			{op: "add", app: "a", req: "r1", addr: "f:1", tasks: 1},
			{op: "add", app: "a", req: "r2", addr: "f:1", tasks: 1},
			{op: "add", app: "a", req: "r3", addr: "f:1", tasks: 1, wantErr: "the most this scheduler keeps"},
			{op: "add", app: "a", req: "r1", addr: "f:2", tasks: 1}, // a known job may be replaced
		}, want: map[jobKey]string{{"a", "r1"}: "f:2", {"a", "r2"}: "f:1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newJobBook()
			if tt.max > 0 {
				b.max = tt.max
			}
			for i, s := range tt.steps {
				now := t0.Add(s.at)
				switch s.op {
				case "add":
					err := b.add(s.app, s.req, s.addr, s.tasks, false)
					if (err == nil) != (s.wantErr == "") || (err != nil && !strings.Contains(err.Error(), s.wantErr)) {
						t.Fatalf("step %d: add = %v, want error %q", i, err, s.wantErr)
					}
				case "end":
					b.taskEnded(s.app, s.req, now)
				case "withdraw":
					b.withdraw(s.app, s.req)
				case "forget":
					if n := b.forgetAddr(s.addr); n != s.wantForgt {
						t.Fatalf("step %d: forgot %d jobs, want %d", i, n, s.wantForgt)
					}
				case "expire":
					b.expire(now)
				}
			}
			if b.len() != len(tt.want) {
				t.Fatalf("%d jobs kept, want %d", b.len(), len(tt.want))
			}
			for k, addr := range tt.want {
				if got, _, ok := b.lookup(k.app, k.request); !ok || got != addr {
					t.Fatalf("%v -> %q, %v; want %q", k, got, ok, addr)
				}
			}
		})
	}
}

// serveRecorder serves a frontendRecorder at a fresh address, registered
// with no scheduler.
func (c *cluster) serveRecorder() (*frontendRecorder, string) {
	fe := &frontendRecorder{hub: c.hub}
	addr := c.net.addr()
	c.net.serveFrontend(addr, fe)
	return fe, addr
}

// withFrontend returns req naming addr as its frontend.
func withFrontend(req *sparrowrpc.TSchedulingRequest, addr string) *sparrowrpc.TSchedulingRequest {
	req.FrontendAddress = &addr
	return req
}

// A job that names its frontend has its messages sent there, whether its
// app registered elsewhere or not at all, and a job that names none
// still goes by the registration; once its tasks have finished and the
// linger passed, the job is forgotten and its late messages go by the
// registration too.
func TestJobFrontendAddress(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t, 2, Config{NoOffers: true})
		t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		clk := &clock{t: t0}
		c.s.now = clk.now
		ctx := context.Background()
		own, ownAddr := c.serveRecorder()

		// No registration at all: the job's own address is enough.
		if err := c.s.SubmitJob(ctx, withFrontend(job("named", 1, freeTasks(2)...), ownAddr)); err != nil {
			t.Fatal(err)
		}
		c.waitAccepted(t, "named", 2)
		finished := c.launchAll(t, "named")
		id := &sparrowrpc.TFullTaskId{TaskId: "t0", RequestId: "named", AppId: app}
		if err := c.s.SendFrontendMessage(ctx, app, id, 0, nil); err != nil {
			t.Fatalf("message for a job naming its frontend, app unregistered: %v", err)
		}
		if own.count() != 1 {
			t.Fatalf("the job's frontend got %d messages, want 1", own.count())
		}

		// The app registers elsewhere: the named job's messages still go to
		// its own frontend, another job's to the registered one.
		registered := c.startFrontendRecorder(t)
		if err := c.s.SendFrontendMessage(ctx, app, &sparrowrpc.TFullTaskId{TaskId: "t1", RequestId: "named", AppId: app}, 0, nil); err != nil {
			t.Fatal(err)
		}
		if err := c.s.SendFrontendMessage(ctx, app, &sparrowrpc.TFullTaskId{TaskId: "t0", RequestId: "plain", AppId: app}, 0, nil); err != nil {
			t.Fatal(err)
		}
		if own.count() != 2 || registered.count() != 1 {
			t.Fatalf("job's frontend got %d, registered one %d; want 2 and 1", own.count(), registered.count())
		}
		if st := c.s.Stats().Frontend; st.Jobs != 1 {
			t.Fatalf("%d jobs kept with their frontend, want 1", st.Jobs)
		}

		// Every task finishes: kept for the linger, then forgotten.
		for nm, ids := range finished {
			if err := c.s.TasksFinished(ctx, nm.hp, ids); err != nil {
				t.Fatal(err)
			}
		}
		clk.set(t0.Add(jobFrontendLinger - time.Second))
		c.s.Sweep(clk.now())
		if err := c.s.SendFrontendMessage(ctx, app, id, 0, nil); err != nil || own.count() != 3 {
			t.Fatalf("message within the linger: %v, job's frontend got %d, want 3", err, own.count())
		}
		clk.set(t0.Add(jobFrontendLinger))
		c.s.Sweep(clk.now())
		if st := c.s.Stats().Frontend; st.Jobs != 0 {
			t.Fatalf("%d jobs kept past the linger, want 0", st.Jobs)
		}
		if err := c.s.SendFrontendMessage(ctx, app, id, 0, nil); err != nil || registered.count() != 2 {
			t.Fatalf("message past the linger: %v, registered frontend got %d, want 2", err, registered.count())
		}
	})
}

// A task the scheduler itself reports (here: failed, none placeable) goes
// to the job's own frontend and ends the task there.
func TestJobFrontendGetsTheSchedulersReports(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t, 3, Config{})
		for _, nm := range c.nms {
			nm.refuse.Store(true)
		}
		own, ownAddr := c.serveRecorder()
		if err := c.s.SubmitJob(context.Background(), withFrontend(job("doomed", 1, freeTasks(2)...), ownAddr)); err != nil {
			t.Fatal(err)
		}
		c.hub.waitUntil(t, "both tasks reported failed", func() bool { return own.count() == 2 })
		own.mu.Lock()
		for i, st := range own.stat {
			if st != sparrowrpc.STATUS_TASK_FAILED {
				t.Errorf("report %d has status %d, want STATUS_TASK_FAILED", i, st)
			}
		}
		own.mu.Unlock()
		synctest.Wait() // the reports' goroutines end the tasks once delivered
		c.s.Sweep(time.Now().Add(jobFrontendLinger))
		if st := c.s.Stats().Frontend; st.Jobs != 0 {
			t.Fatalf("%d jobs kept after every task was reported and the linger passed, want 0", st.Jobs)
		}
	})
}

// A job naming a frontend that is gone is paced like a registered one,
// and when its address is deregistered as dead the job is forgotten too.
func TestJobFrontendGoneIsDeregistered(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t, 1, Config{NoOffers: true, FrontendDeadAfter: time.Second})
		t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		clk := &clock{t: t0}
		c.s.now = clk.now
		gone := c.startHangUp()
		ctx := context.Background()
		if err := c.s.SubmitJob(ctx, withFrontend(job("j", 1, freeTasks(1)...), gone.addr)); err != nil {
			t.Fatal(err)
		}
		id := &sparrowrpc.TFullTaskId{TaskId: "t0", RequestId: "j", AppId: app}
		for range 100 {
			_ = c.s.SendFrontendMessage(ctx, app, id, 0, nil)
		}
		if d := gone.dials(); d != 1 {
			t.Fatalf("%d dials for 100 messages within the backoff, want 1", d)
		}
		clk.set(t0.Add(time.Second))
		_ = c.s.SendFrontendMessage(ctx, app, id, 0, nil) // the probe past the backoff fails
		c.s.Sweep(clk.now())
		if st := c.s.Stats().Frontend; st.Jobs != 0 || st.Deregistered != 1 {
			t.Fatalf("stats %+v: want the job forgotten and its address deregistered", st)
		}
		err := c.s.SendFrontendMessage(ctx, app, id, 0, nil)
		if err == nil || !strings.Contains(err.Error(), "no frontend registered") {
			t.Fatalf("message after the job's frontend was deregistered: %v, want no frontend", err)
		}
	})
}

// A malformed frontend address refuses the job whole, naming the problem.
func TestJobFrontendAddressValidated(t *testing.T) {
	tests := []struct{ addr, want string }{
		{"0.0.0.0:50201", "wildcard host"},
		{"[::]:50201", "wildcard host"},
		{"frontend", "not host:port"},
		{"frontend:0", "bad port"},
		{":50201", "no host"},
		{strings.Repeat("h", maxIDBytes) + ":1", "over the"},
	}
	for _, tt := range tests {
		t.Run(tt.addr, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				c := newCluster(t, 1, Config{})
				err := c.s.SubmitJob(context.Background(), withFrontend(job("j", 1, freeTasks(1)...), tt.addr))
				var ire *sparrowrpc.IncompleteRequestException
				if !errors.As(err, &ire) || !strings.Contains(ire.Message, "frontend") || !strings.Contains(ire.Message, tt.want) {
					t.Fatalf("SubmitJob with frontend address %q: %v, want refused for %q", tt.addr, err, tt.want)
				}
				if c.accepted("j") != 0 || c.s.Stats().Frontend.Jobs != 0 {
					t.Fatal("a refused job placed reservations or was kept")
				}
			})
		})
	}
}
