package nodemonitor

import (
	"context"
	"reflect"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sparrowfleet/sparrow/internal/metrics/metricstest"
	"github.com/sparrowfleet/sparrow/thrift/gen-go/sparrowrpc"
)

// TestCollector checks each series against the State field it reports.
func TestCollector(t *testing.T) {
	got := metricstest.Values(t, Collector(func() State {
		return State{Slots: 4, Free: 1, Fetching: 1, Running: 2, Queued: 5, Launches: 11, Finished: 6, Failed: 2, Lost: 1, Apps: []string{"a", "b"}, PullTasks: 3, PullsEmpty: 7}
	}))
	for _, tc := range []struct {
		name string
		want float64
	}{
		{"sparrow_nodemonitor_slots", 4},
		{"sparrow_nodemonitor_slots_free", 1},
		{"sparrow_nodemonitor_slots_fetching", 1},
		{"sparrow_nodemonitor_tasks_running", 2},
		{"sparrow_nodemonitor_reservations_queued", 5},
		{"sparrow_nodemonitor_launches_total", 11},
		{"sparrow_nodemonitor_tasks_ended_total{finished}", 6},
		{"sparrow_nodemonitor_tasks_ended_total{failed}", 2},
		{"sparrow_nodemonitor_tasks_ended_total{lost}", 1},
		{"sparrow_nodemonitor_apps", 2},
		{"sparrow_nodemonitor_pulls_total{task}", 3},
		{"sparrow_nodemonitor_pulls_total{empty}", 7},
	} {
		if v, ok := got[tc.name]; !ok || v != tc.want {
			t.Errorf("%s = %v (exported: %v), want %v", tc.name, v, ok, tc.want)
		}
	}
}

// TestTaskOutcomes drives launched tasks to each end and checks that each
// is counted once, under its outcome, so that the launches always equal
// the running tasks plus the finished, failed and lost.
func TestTaskOutcomes(t *testing.T) {
	done := func(status int32, tasks ...string) func(*harness) {
		return func(h *harness) {
			for _, task := range tasks {
				id := &sparrowrpc.TFullTaskId{RequestId: "r", TaskId: task, AppId: "app", SchedulerAddress: h.self}
				h.nm.TaskDone(context.Background(), "app", id, status, nil)
			}
			synctest.Wait()
		}
	}
	for _, tc := range []struct {
		name       string
		slots      int
		failLaunch bool
		then       func(*harness)
		want       State // Launches, Running and the outcomes compared
	}{
		{"finished, reported twice", 2, false, func(h *harness) { h.finish("r", "a", "a", "never-ran") },
			State{Launches: 3, Running: 2, Finished: 1}},
		{"finished with a message", 2, false, done(sparrowrpc.STATUS_APP, "a", "b"),
			State{Launches: 3, Running: 1, Finished: 2}},
		{"failed by its executor", 2, false, done(sparrowrpc.STATUS_TASK_FAILED, "a", "a"),
			State{Launches: 3, Running: 2, Failed: 1}},
		{"lost with its executor", 2, false, func(h *harness) {
			h.execs.kill(backend)
			h.nm.checkExecutors(time.Second)
			h.nm.checkExecutors(time.Second)
			synctest.Wait()
		}, State{Launches: 2, Running: 0, Lost: 2}},
		// c's launch, after a finished, fails: c failed, and b, running
		// on the executor declared lost with it, is lost.
		{"lost with a failed launch", 2, false, func(h *harness) {
			h.execs.mu.Lock()
			h.execs.failLaunch = true
			h.execs.mu.Unlock()
			h.finish("r", "a")
		}, State{Launches: 3, Running: 0, Finished: 1, Failed: 1, Lost: 1}},
		// The launch fails: that task failed, and the executor is lost
		// with nothing else running; the app is no longer offered, so
		// nothing more launches.
		{"launch failed", 1, true, func(*harness) {}, State{Launches: 1, Running: 0, Failed: 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := newHarness(t, opts{slots: tc.slots})
				h.execs.mu.Lock()
				h.execs.failLaunch = tc.failLaunch
				h.execs.mu.Unlock()
				h.sched.script("r", "a", "b", "c")
				h.enqueue(t, "app", "r", 3)
				tc.then(h)
				st := h.nm.State()
				got := State{Launches: st.Launches, Running: st.Running, Finished: st.Finished, Failed: st.Failed, Lost: st.Lost}
				if !reflect.DeepEqual(got, tc.want) {
					t.Errorf("state %+v, want %+v", got, tc.want)
				}
				if st.Launches != uint64(st.Running)+st.Finished+st.Failed+st.Lost {
					t.Errorf("%d launches but %d running, %d finished, %d failed and %d lost", st.Launches, st.Running, st.Finished, st.Failed, st.Lost)
				}
			})
		})
	}
}
