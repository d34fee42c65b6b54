package nodemonitor

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/rs/zerolog"

	"github.com/sparrowfleet/sparrow/core/queue"
	"github.com/sparrowfleet/sparrow/thrift/gen-go/sparrowrpc"
)

func TestEmptyGetTaskFreesTheSlot(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, opts{slots: 1})
		// Two reservations for a request with no tasks left, then one
		// with a task: a single slot must pass through both empty
		// answers.
		h.sched.script("real", "t0")
		if !h.enqueue(t, "app", "empty", 2) || !h.enqueue(t, "app", "real", 1) {
			t.Fatal("reservations refused")
		}
		if got := h.sched.askedFor("empty"); got != 2 {
			t.Errorf("the empty request was asked for %d times, want 2", got)
		}
		wantState(t, h, State{Slots: 1, Running: 1, Launches: 1})
		if got := h.execs.launches(); !slices.Equal(got, []string{"real/t0"}) {
			t.Errorf("launched %v, want real/t0", got)
		}
	})
}

func TestSlotAccountingAndFinish(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, opts{slots: 2})
		h.sched.script("r", "a", "b", "c")
		h.enqueue(t, "app", "r", 3)
		wantState(t, h, State{Slots: 2, Running: 2, Queued: 1, Launches: 2})
		h.finish("r", "zzz") // not running here: frees nothing
		wantState(t, h, State{Slots: 2, Running: 2, Queued: 1, Launches: 2})
		h.finish("r", "a")
		wantState(t, h, State{Slots: 2, Running: 2, Launches: 3})
		h.finish("r", "a") // a repeated report frees nothing
		wantState(t, h, State{Slots: 2, Running: 2, Launches: 3})
		if got := h.execs.launches(); !slices.Equal(got, []string{"r/a", "r/b", "r/c"}) {
			t.Errorf("launched %v, want r/a, r/b, r/c once each", got)
		}
	})
}

func TestCancelRemovesQueuedReservations(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, opts{slots: 1})
		open := h.gate() // the one slot stays busy fetching
		h.enqueue(t, "app", "first", 1)
		h.enqueue(t, "app", "victim", 3)
		h.enqueue(t, "app", "other", 2)
		h.nm.CancelTaskReservations(t.Context(), &sparrowrpc.TCancelTaskReservationsRequest{RequestId: "victim"})
		wantState(t, h, State{Slots: 1, Fetching: 1, Queued: 2})
		open()
		synctest.Wait()
		wantState(t, h, State{Slots: 1, Free: 1})
		if n := h.sched.askedFor("victim"); n != 0 {
			t.Errorf("a cancelled request was asked for %d times", n)
		}
		if n := h.sched.askedFor("other"); n != 2 {
			t.Errorf("the other request was asked for %d times, want 2", n)
		}
	})
}

func TestBadRegistrationsAndUnknownAppsRefused(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, opts{})
		if h.enqueue(t, "ghost", "r", 1) {
			t.Fatal("a reservation for an app with no executor was accepted")
		}
		wantState(t, h, State{Slots: 1, Free: 1})
		tests := []struct{ app, addr string }{{"", "127.0.0.1:9"}, {"x", "not-an-address"}}
		for _, tt := range tests {
			if ok, err := h.nm.RegisterBackend(t.Context(), tt.app, tt.addr); ok || err == nil {
				t.Errorf("registerBackend(%q, %q) accepted", tt.app, tt.addr)
			}
		}
		for _, req := range []*sparrowrpc.TEnqueueTaskReservationsRequest{nil, {RequestId: "r"}, {SchedulerAddress: h.self}} {
			if _, err := h.nm.EnqueueTaskReservations(t.Context(), req); err == nil {
				t.Errorf("enqueue %+v: no error", req)
			}
		}
	})
}

func TestFinishedTasksReportedToTheirScheduler(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, opts{slots: 2})
		h.sched.script("r", "a", "b")
		h.enqueue(t, "app", "r", 2)
		h.finish("r", "a", "b", "never-ran")
		got := slices.Sorted(slices.Values(h.sched.read(&h.sched.finished)))
		if !slices.Equal(got, []string{"r/a", "r/b"}) {
			t.Errorf("the scheduler heard %v finished, want r/a and r/b only", got)
		}
	})
}

func TestLostExecutorFreesSlotsAndStopsOfferingTheApp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, opts{slots: 2})
		h.sched.script("r", "a", "b")
		h.enqueue(t, "app", "r", 3)
		h.execs.kill(backend)
		h.nm.checkExecutors(time.Second)
		wantState(t, h, State{Slots: 2, Running: 2, Queued: 1, Launches: 2}) // one miss is not a loss
		h.nm.checkExecutors(time.Second)
		synctest.Wait()
		wantState(t, h, State{Slots: 2, Free: 2, Launches: 2})
		if apps := h.lastApps(); len(apps) != 0 {
			t.Errorf("still advertising %v", apps)
		}
		if h.enqueue(t, "app", "r2", 1) {
			t.Error("a reservation was accepted for an app whose executor is gone")
		}
		if got := slices.Sorted(slices.Values(h.sched.read(&h.sched.finished))); !slices.Equal(got, []string{"r/a", "r/b"}) {
			t.Errorf("the scheduler heard %v no longer run, want r/a and r/b", got)
		}
		if msgs := h.sched.read(&h.sched.msgs); len(msgs) != 2 {
			t.Errorf("failures relayed: %v, want one per running task", msgs)
		}
		// A new executor brings the app back.
		h.nm.RegisterBackend(t.Context(), "app", "127.0.0.1:10")
		if !h.enqueue(t, "app", "r3", 1) {
			t.Error("refused after a new executor registered")
		}
	})
}

func TestFailedLaunchLosesTheExecutor(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, opts{slots: 2})
		h.execs.mu.Lock()
		h.execs.failLaunch = true
		h.execs.mu.Unlock()
		h.sched.script("r", "a")
		h.enqueue(t, "app", "r", 1)
		wantState(t, h, State{Slots: 2, Free: 2, Launches: 1})
		if msgs := h.sched.read(&h.sched.msgs); len(msgs) != 1 || !strings.HasPrefix(msgs[0], fmt.Sprintf("a:%d:", sparrowrpc.STATUS_TASK_FAILED)) {
			t.Errorf("relayed %v, want a failure of task a", msgs)
		}
	})
}

func TestSetWeightsAtRunTime(t *testing.T) {
	fair, _ := queue.NewFair(1, nil)
	tests := []struct {
		name    string
		q       queue.Discipline
		weights map[string]float64
		ok      bool
		alice   float64
	}{
		{"zero weight refused, nothing changed", fair, map[string]float64{"alice": 3, "bob": 0}, false, 1},
		{"valid", fair, map[string]float64{"alice": 3}, true, 3},
		{"fifo has no weights", queue.NewFIFO(), map[string]float64{"alice": 2}, false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			nm, err := newNodeMonitor(Config{Slots: 1, Queue: tt.q, Internal: "127.0.0.1:2", Log: zerolog.Nop()}, staticDir{}, newFakeScheds(), &fakeExecs{})
			if err != nil {
				t.Fatal(err)
			}
			defer nm.Close()
			if err := nm.SetWeights(tt.weights); (err == nil) != tt.ok {
				t.Fatalf("SetWeights(%v) = %v, want ok %v", tt.weights, err, tt.ok)
			}
			if w, ok := tt.q.(queue.Weights); ok && w.Weight("alice") != tt.alice {
				t.Errorf("alice's weight %v, want %v", w.Weight("alice"), tt.alice)
			}
		})
	}
}

// A flood of reservations, e.g. for made-up request ids, is refused once the
// queue bound is reached, so memory stays bounded; later reservations are
// accepted again once the queue drains.
func TestReservationFloodIsBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, opts{slots: 1, cfg: func(c *Config) { c.MaxQueued = 1000 }})
		open := h.gate() // nothing drains meanwhile
		accepted := 0
		for i := range 5000 {
			if ok, _ := h.nm.EnqueueTaskReservations(t.Context(), h.req("app", fmt.Sprintf("bogus-%d", i), 1)); ok {
				accepted++
			}
		}
		// One reservation went to the (blocked) slot, 1000 fill the queue.
		if accepted != 1001 {
			t.Fatalf("accepted %d of 5000, want the 1000 the bound allows and 1 in the slot", accepted)
		}
		synctest.Wait()
		wantState(t, h, State{Slots: 1, Fetching: 1, Queued: 1000})
		open() // every bogus id is answered with nothing
		synctest.Wait()
		wantState(t, h, State{Slots: 1, Free: 1})
		if !h.enqueue(t, "app", "real", 1) {
			t.Error("a real reservation was refused after the flood drained")
		}
	})
}

// Reservations from a scheduler gossip has declared gone are released
// without calling it, so a dead scheduler cannot hold slots for a getTask
// timeout each; they are fetched again once it is back.
func TestReservationsOfAGoneSchedulerAreReleased(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, opts{slots: 1})
		h.nm.SchedulerGone(schedSvc)
		h.enqueue(t, "app", "dead", 3)
		wantState(t, h, State{Slots: 1, Free: 1})
		if n := h.sched.askedFor("dead"); n != 0 {
			t.Fatalf("a gone scheduler was asked %d times", n)
		}
		h.nm.SchedulerBack(schedSvc)
		h.sched.script("alive", "t")
		h.enqueue(t, "app", "alive", 1)
		wantState(t, h, State{Slots: 1, Running: 1, Launches: 1})
	})
}

// taskDone (the executor's one call for a finished task) frees the slot,
// so the queued reservation runs next, and relays the message before it
// returns; a repeated taskDone frees nothing more. The finished report
// travels with the message in the scheduler's taskDone, or, for a
// scheduler without it, in the original two calls.
func TestTaskDoneFreesTheSlotThenRelays(t *testing.T) {
	for _, old := range []bool{false, true} {
		t.Run(fmt.Sprintf("old scheduler %v", old), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := newHarness(t, opts{slots: 1})
				h.sched.noTaskDone = old
				h.sched.script("r", "a", "b")
				h.enqueue(t, "app", "r", 2)
				a := &sparrowrpc.TFullTaskId{RequestId: "r", TaskId: "a", AppId: "app", SchedulerAddress: h.self}
				if err := h.nm.TaskDone(t.Context(), "app", a, 0, []byte("done")); err != nil {
					t.Fatalf("taskDone: %v", err)
				}
				if got := h.sched.read(&h.sched.msgs); !slices.Equal(got, []string{"a:0:done"}) {
					t.Errorf("relayed %v by the time taskDone returned, want [a:0:done]", got)
				}
				synctest.Wait()
				wantDone, wantFinished := []string{"a"}, []string(nil)
				if old {
					wantDone, wantFinished = nil, []string{"r/a"}
				}
				wantState(t, h, State{Slots: 1, Running: 1, Launches: 2})
				if err := h.nm.TaskDone(t.Context(), "app", a, 0, []byte("again")); err != nil {
					t.Fatalf("repeated taskDone: %v", err)
				}
				synctest.Wait()
				if got := h.sched.read(&h.sched.done); !slices.Equal(got, wantDone) {
					t.Errorf("reported by taskDone: %v, want %v", got, wantDone)
				}
				if got := h.sched.read(&h.sched.finished); !slices.Equal(got, wantFinished) {
					t.Errorf("reported by tasksFinished: %v, want %v", got, wantFinished)
				}
				if got := h.sched.read(&h.sched.msgs); !slices.Equal(got, []string{"a:0:done", "a:0:again"}) {
					t.Errorf("relayed %v, want [a:0:done a:0:again]", got)
				}
				wantState(t, h, State{Slots: 1, Running: 1, Launches: 2})
				if err := h.nm.TaskDone(t.Context(), "app", &sparrowrpc.TFullTaskId{TaskId: "x"}, 0, nil); err == nil {
					t.Error("taskDone without a scheduler address accepted")
				}
				if err := h.nm.SendFrontendMessage(t.Context(), "app", &sparrowrpc.TFullTaskId{TaskId: "x"}, 0, nil); err == nil {
					t.Error("sendFrontendMessage without a scheduler address accepted")
				}
			})
		})
	}
}

// A fetch whose answer was lost is asked again with the same fetch ID, and
// the task it handed out is launched, once.
func TestFetchAskedAgainLaunchesOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, opts{slots: 1})
		h.sched.script("r", "t0")
		h.sched.lostAnswers = 1
		h.nm.EnqueueTaskReservations(t.Context(), h.req("app", "r", 1))
		time.Sleep(time.Second) // past every pause before asking again
		synctest.Wait()
		if _, again, most := h.sched.fetches(); again != 1 || most != 2 {
			t.Fatalf("fetch IDs asked again: %d (most calls %d); want the one fetch asked twice", again, most)
		}
		if got := h.sched.askedFor("r"); got != 1 {
			t.Errorf("the scheduler handed out tasks %d times, want 1", got)
		}
		if got := h.execs.launches(); !slices.Equal(got, []string{"r/t0"}) {
			t.Errorf("launched %v, want r/t0 once", got)
		}
	})
}

// A scheduler that answers fetchTask UNKNOWN_METHOD (a version before it)
// is asked with getTask, from then on without trying fetchTask.
func TestFetchFallsBackToGetTask(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, opts{slots: 1})
		h.sched.noFetch = true
		h.sched.script("r", "t0", "t1")
		h.enqueue(t, "app", "r", 2)
		wantState(t, h, State{Slots: 1, Running: 1, Queued: 1, Launches: 1})
		if !h.nm.fetch.caps.Lacks(schedGT, methodFetchTask) {
			t.Error("the scheduler is not remembered as having no fetchTask")
		}
		h.finish("r", "t0")
		if got := h.sched.askedFor("r"); got != 2 {
			t.Fatalf("getTask asked %d times, want 2", got)
		}
		if calls, _, _ := h.sched.fetches(); calls != 0 {
			t.Fatalf("%d fetchTask calls reached the scheduler", calls)
		}
	})
}

// A fetch that may have handed out a task is asked about again only until
// gossip declares its scheduler gone, or for Config.FetchRetryFor; then
// its slot is freed and nothing launches.
func TestFetchInDoubtGivesUp(t *testing.T) {
	for _, gone := range []bool{true, false} {
		t.Run(fmt.Sprintf("scheduler gone %v", gone), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := newHarness(t, opts{slots: 1, cfg: func(c *Config) { c.FetchRetryFor = time.Minute }})
				h.sched.script("r", "t0")
				h.sched.inDoubt = true
				start := time.Now()
				h.enqueue(t, "app", "r", 1)
				wantState(t, h, State{Slots: 1, Fetching: 1})
				if gone {
					h.nm.SchedulerGone(schedSvc)
				}
				for h.nm.State().Fetching > 0 {
					time.Sleep(fetchRetryMax)
					synctest.Wait()
				}
				took := time.Since(start)
				if gone && took > 2*fetchRetryMax || !gone && (took < time.Minute-fetchRetryMax || took > time.Minute+fetchRetryMax) {
					t.Errorf("gave up after %v", took)
				}
				wantState(t, h, State{Slots: 1, Free: 1})
				if got := h.execs.launches(); len(got) != 0 {
					t.Fatalf("launched %v, want nothing", got)
				}
			})
		})
	}
}
