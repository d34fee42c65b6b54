package nodemonitor

import (
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/apache/thrift/lib/go/thrift"

	"github.com/sparrowfleet/sparrow/thrift/gen-go/sparrowrpc"
)

// An executor registered with BACKEND_LAUNCH_AND_WAIT is launched with
// launchTaskAndWait; a task its answer reports ended frees its slot (the
// queued reservation runs next) and is reported to the scheduler as a
// taskDone would be. An executor registered without the bit, or a node
// monitor configured not to wait, gets the original launchTask.
func TestLaunchAndWait(t *testing.T) {
	done := &sparrowrpc.TLaunchReply{Done: true, Status: thrift.Int32Ptr(0), Message: []byte("ok")}
	failed := &sparrowrpc.TLaunchReply{Done: true, Status: thrift.Int32Ptr(sparrowrpc.STATUS_TASK_FAILED), Message: []byte("boom")}
	for _, tt := range []struct {
		name       string
		features   int32
		wait       time.Duration
		reply      *sparrowrpc.TLaunchReply
		wantWaited []time.Duration
		wantState  State
		wantDone   []string
		wantMsgs   []string
	}{
		{name: "original executor", features: 0, reply: done,
			wantState: State{Slots: 1, Running: 1, Queued: 1, Launches: 1}},
		{name: "unknown bits only", features: 4, reply: done,
			wantState: State{Slots: 1, Running: 1, Queued: 1, Launches: 1}},
		{name: "waiting disabled", features: sparrowrpc.BACKEND_LAUNCH_AND_WAIT, wait: -1, reply: done,
			wantState: State{Slots: 1, Running: 1, Queued: 1, Launches: 1}},
		{name: "task still running", features: sparrowrpc.BACKEND_LAUNCH_AND_WAIT, reply: nil,
			wantWaited: []time.Duration{DefaultLaunchWait}, wantState: State{Slots: 1, Running: 1, Queued: 1, Launches: 1}},
		{name: "task ended", features: sparrowrpc.BACKEND_LAUNCH_AND_WAIT, wait: 5 * time.Millisecond, reply: done,
			wantWaited: []time.Duration{5 * time.Millisecond, 5 * time.Millisecond},
			wantState:  State{Slots: 1, Free: 1, Launches: 2},
			wantDone:   []string{"a", "b"}, wantMsgs: []string{"a:0:ok", "b:0:ok"}},
		{name: "task failed", features: sparrowrpc.BACKEND_LAUNCH_AND_WAIT, reply: failed,
			wantWaited: []time.Duration{DefaultLaunchWait, DefaultLaunchWait},
			wantState:  State{Slots: 1, Free: 1, Launches: 2},
			wantDone:   []string{"a", "b"}, wantMsgs: []string{"a:1002:boom", "b:1002:boom"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := newHarness(t, opts{slots: 1, cfg: func(c *Config) { c.LaunchWait = tt.wait }})
				if ok, err := h.nm.RegisterBackendWithFeatures(t.Context(), "app", backend, tt.features); !ok || err != nil {
					t.Fatalf("registerBackendWithFeatures: %v %v", ok, err)
				}
				h.execs.reply = tt.reply
				h.sched.script("r", "a", "b")
				h.enqueue(t, "app", "r", 2)
				wantState(t, h, tt.wantState)
				if got := h.execs.waited; !slices.Equal(got, tt.wantWaited) {
					t.Errorf("launchTaskAndWait waits %v, want %v", got, tt.wantWaited)
				}
				// Each task's end is relayed on its own; their order between
				// tasks is not part of the contract.
				if got := sorted(h.sched.read(&h.sched.done)); !slices.Equal(got, tt.wantDone) {
					t.Errorf("reported by taskDone: %v, want %v", got, tt.wantDone)
				}
				if got := sorted(h.sched.read(&h.sched.msgs)); !slices.Equal(got, tt.wantMsgs) {
					t.Errorf("relayed %v, want %v", got, tt.wantMsgs)
				}
			})
		})
	}
}

// A launchTaskAndWait that fails loses the executor, as a failed
// launchTask does: the task is reported failed and the app withdrawn.
func TestLaunchAndWaitFailureLosesTheExecutor(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, opts{slots: 1})
		h.nm.RegisterBackendWithFeatures(t.Context(), "app", backend, sparrowrpc.BACKEND_LAUNCH_AND_WAIT)
		h.execs.failLaunch = true
		h.sched.script("r", "a")
		h.enqueue(t, "app", "r", 1)
		if got := h.nm.State(); got.Failed != 1 || len(got.Apps) != 0 {
			t.Errorf("state %+v, want the task failed and no app offered", got)
		}
		if got := h.sched.read(&h.sched.msgs); len(got) != 1 || got[0][:7] != "a:1002:" {
			t.Errorf("relayed %v, want task a reported failed", got)
		}
	})
}

// The ends of tasks reported in their launches' answers, for a scheduler
// whose reservations say it serves tasksDone, go to it gathered over the
// window: here two tasks ended within one window go in one call.
func TestTasksEndedGatheredForTasksDone(t *testing.T) {
	const doneWindow = 10 * time.Millisecond
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, opts{slots: 2, cfg: func(c *Config) { c.DoneWindow = doneWindow }})
		h.nm.RegisterBackendWithFeatures(t.Context(), "app", backend, sparrowrpc.BACKEND_LAUNCH_AND_WAIT)
		h.execs.reply = &sparrowrpc.TLaunchReply{Done: true, Status: thrift.Int32Ptr(0), Message: []byte("ok")}
		h.sched.script("r", "a", "b")
		req := h.req("app", "r", 2)
		req.SchedulerFeatures = thrift.Int32Ptr(sparrowrpc.SCHEDULER_TASKS_DONE)
		if ok, err := h.nm.EnqueueTaskReservations(t.Context(), req); !ok || err != nil {
			t.Fatalf("enqueue: %v %v", ok, err)
		}
		synctest.Wait()
		if got := h.sched.read(&h.sched.done); len(got) != 0 {
			t.Errorf("reported %v before the window closed", got)
		}
		time.Sleep(doneWindow)
		synctest.Wait()
		wantState(t, h, State{Slots: 2, Free: 2, Launches: 2})
		h.sched.mu.Lock()
		batches := slices.Clone(h.sched.batches)
		h.sched.mu.Unlock()
		if !slices.Equal(batches, []int{2}) {
			t.Errorf("tasksDone calls of %v tasks, want one of 2", batches)
		}
		if got := h.sched.read(&h.sched.msgs); len(got) != 2 {
			t.Errorf("relayed %v, want both tasks' messages", got)
		}
	})
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}
