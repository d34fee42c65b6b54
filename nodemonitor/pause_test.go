package nodemonitor

import (
	"slices"
	"testing"
	"testing/synctest"
	"time"
)

// A paused node takes no new work and hands its queued reservations back,
// while running tasks finish and are reported; resuming offers its apps
// again. A drain overrides a pause.
func TestSetPaused(t *testing.T) {
	tests := []struct {
		name string
		run  func(t *testing.T, h *harness)
	}{
		{"queued handed back, running finish, resume takes work", func(t *testing.T, h *harness) {
			h.sched.script("r", "a", "b", "c", "d")
			h.enqueue(t, "app", "r", 4)
			h.nm.SetPaused(true)
			synctest.Wait()
			wantState(t, h, State{Slots: 2, Running: 2, Launches: 2, Paused: true})
			if apps := h.lastApps(); len(apps) != 0 {
				t.Fatalf("advertising %v while paused", apps)
			}
			if h.enqueue(t, "app", "late", 1) {
				t.Error("a reservation was accepted while paused")
			}
			if rep := h.enqueueOffer(t, "late", 1, "x"); rep.Accepted || rep.Launched {
				t.Errorf("an offer while paused: %+v, want refused", rep)
			}
			h.finish("r", "a", "b")
			wantState(t, h, State{Slots: 2, Free: 2, Launches: 2, Paused: true})
			if got := h.sched.read(&h.sched.finished); !slices.Equal(got, []string{"r/a", "r/b"}) {
				t.Errorf("reported finished %v, want r/a and r/b", got)
			}
			if got := h.sched.askedFor("r"); got != 2 {
				t.Errorf("asked for %d tasks, want 2: c and d stay with the scheduler", got)
			}
			h.nm.SetPaused(false)
			synctest.Wait()
			if apps := h.lastApps(); !slices.Equal(apps, []string{"app"}) {
				t.Fatalf("advertising %v after resuming, want [app]", apps)
			}
			if !h.enqueue(t, "app", "r", 2) {
				t.Fatal("a reservation was refused after resuming")
			}
			wantState(t, h, State{Slots: 2, Running: 2, Launches: 4})
			if got := h.execs.launches(); !slices.Equal(got, []string{"r/a", "r/b", "r/c", "r/d"}) {
				t.Errorf("launched %v, want each task once", got)
			}
		}},
		{"an executor registering while paused is offered on resume", func(t *testing.T, h *harness) {
			h.nm.SetPaused(true)
			h.nm.RegisterBackend(t.Context(), "other", "127.0.0.1:11")
			if apps := h.lastApps(); len(apps) != 0 {
				t.Fatalf("advertising %v while paused", apps)
			}
			h.nm.SetPaused(false)
			if apps := h.lastApps(); !slices.Equal(apps, []string{"app", "other"}) {
				t.Errorf("advertising %v after resuming, want [app other]", apps)
			}
		}},
		{"repeated calls change nothing", func(t *testing.T, h *harness) {
			before := len(h.apps)
			h.nm.SetPaused(false)
			h.nm.SetPaused(true)
			h.nm.SetPaused(true)
			h.nm.SetPaused(false)
			h.nm.SetPaused(false)
			if got := len(h.apps) - before; got != 2 {
				t.Errorf("%d app adverts for one pause and one resume, want 2", got)
			}
		}},
		{"a drain while paused ends it, and the node never resumes", func(t *testing.T, h *harness) {
			h.sched.script("r", "a")
			h.enqueue(t, "app", "r", 1)
			h.nm.SetPaused(true)
			done := h.startDrain(time.Minute)
			h.nm.SetPaused(false)
			if apps := h.lastApps(); len(apps) != 0 {
				t.Errorf("advertising %v while draining", apps)
			}
			if h.enqueue(t, "app", "late", 1) {
				t.Error("a reservation was accepted while draining")
			}
			h.finish("r", "a")
			if res := <-done; res != (DrainResult{}) {
				t.Errorf("drain %+v, want nothing handed back or unfinished", res)
			}
		}},
		{"a pause while draining does nothing", func(t *testing.T, h *harness) {
			<-h.startDrain(time.Minute)
			h.nm.SetPaused(true)
			if st := h.nm.State(); st.Paused || !st.Draining {
				t.Errorf("state %+v, want draining and not paused", st)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				tt.run(t, newHarness(t, opts{slots: 2}))
			})
		})
	}
}

// A paused node pulls nothing, whatever schedulers advertise and however
// long it waits; resumed, it pulls at once for the backlog still
// advertised.
func TestSetPausedStopsPulls(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := newPullHarness(t, 1)
		a.nm.SetPaused(true)
		a.heard(4)
		time.Sleep(10 * pullRetry)
		synctest.Wait()
		if n := a.pulls(); n != 0 {
			t.Fatalf("%d pulls while paused, want none", n)
		}
		a.sched.script("P", "t1")
		a.nm.SetPaused(false)
		synctest.Wait()
		if n := a.pulls(); n != 1 {
			t.Fatalf("%d pulls after resuming, want 1", n)
		}
		if got := a.execs.launches(); !slices.Equal(got, []string{"P/t1"}) {
			t.Errorf("launched %v, want the pulled P/t1", got)
		}
		a.finish("P", "t1")
		a.heard(0)
	})
}

// Pausing with a pull queued drops it with the other queued reservations.
func TestSetPausedDropsQueuedPull(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := newPullHarness(t, 1)
		a.sched.script("r", "x")
		a.enqueue(t, "app", "r", 1) // the one slot runs r/x
		a.heard(4)                  // a pull waits in the queue
		if st := a.nm.State(); st.Queued != 1 {
			t.Fatalf("state %+v, want the pull queued", st)
		}
		a.nm.SetPaused(true)
		if st := a.nm.State(); st.Queued != 0 {
			t.Fatalf("state %+v, want nothing queued while paused", st)
		}
		a.finish("r", "x")
		time.Sleep(10 * pullRetry)
		synctest.Wait()
		if n := a.pulls(); n != 0 {
			t.Errorf("%d pulls while paused, want none", n)
		}
		a.heard(0)
	})
}
