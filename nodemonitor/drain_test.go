package nodemonitor

import (
	"slices"
	"testing"
	"testing/synctest"
	"time"
)

// startDrain runs Drain(timeout) and returns its result's channel.
func (h *harness) startDrain(timeout time.Duration) <-chan DrainResult {
	out := make(chan DrainResult, 1)
	go func() { out <- h.nm.Drain(timeout) }()
	synctest.Wait()
	return out
}

// A drain with queued and running work: the queued reservations are handed
// back at once (dropped, the node offering no app), new reservations are
// refused, running tasks finish, and the drain ends when the last does;
// nothing is launched twice and no task the scheduler handed out is left
// unrun.
func TestDrain(t *testing.T) {
	tests := []struct {
		name string
		run  func(t *testing.T, h *harness)
	}{
		{"queued and running", func(t *testing.T, h *harness) {
			h.sched.script("r", "a", "b", "c", "d")
			h.enqueue(t, "app", "r", 4)
			done := h.startDrain(time.Minute)
			wantState(t, h, State{Slots: 2, Running: 2, Launches: 2})
			if !h.nm.State().Draining || len(h.lastApps()) != 0 {
				t.Fatalf("state %+v, apps %v: want draining and no app offered", h.nm.State(), h.lastApps())
			}
			if h.enqueue(t, "app", "late", 1) {
				t.Error("a reservation was accepted while draining")
			}
			if rep := h.enqueueOffer(t, "late", 1, "x"); rep.Accepted || rep.Launched {
				t.Errorf("an offer while draining: %+v, want refused", rep)
			}
			h.finish("r", "a")
			select {
			case res := <-done:
				t.Fatalf("drain ended with a task running: %+v", res)
			default:
			}
			h.finish("r", "b")
			res := <-done
			if res != (DrainResult{Handed: 2}) {
				t.Errorf("drain %+v, want 2 handed back, none unfinished, no time waited past the last finish", res)
			}
			if got := h.execs.launches(); !slices.Equal(got, []string{"r/a", "r/b"}) {
				t.Errorf("launched %v, want r/a and r/b once each", got)
			}
			if got := h.sched.askedFor("r"); got != 2 {
				t.Errorf("asked for %d tasks, want 2: c and d stay with the scheduler", got)
			}
		}},
		{"a fetch in flight launches and is waited for", func(t *testing.T, h *harness) {
			open := h.gate()
			h.sched.script("r", "a", "b")
			h.enqueue(t, "app", "r", 2)
			done := h.startDrain(time.Minute)
			wantState(t, h, State{Slots: 2, Fetching: 2})
			open()
			synctest.Wait()
			wantState(t, h, State{Slots: 2, Running: 2, Launches: 2})
			h.finish("r", "a", "b")
			if res := <-done; res != (DrainResult{}) {
				t.Errorf("drain %+v, want nothing handed back or unfinished", res)
			}
			if got := h.execs.launches(); !slices.Equal(got, []string{"r/a", "r/b"}) {
				t.Errorf("launched %v, want r/a and r/b once each", got)
			}
		}},
		{"timeout with a task running", func(t *testing.T, h *harness) {
			h.sched.script("r", "a")
			h.enqueue(t, "app", "r", 1)
			start := time.Now()
			res := <-h.startDrain(30 * time.Second)
			if want := (DrainResult{Unfinished: 1, Waited: 30 * time.Second}); res != want || time.Since(start) != want.Waited {
				t.Errorf("drain %+v after %v, want %+v", res, time.Since(start), want)
			}
			wantState(t, h, State{Slots: 2, Free: 1, Running: 1, Launches: 1})
		}},
		{"an executor registering while draining offers nothing", func(t *testing.T, h *harness) {
			res := <-h.startDrain(time.Minute)
			if res != (DrainResult{}) {
				t.Errorf("idle drain %+v", res)
			}
			h.nm.RegisterBackend(t.Context(), "other", "127.0.0.1:11")
			if apps := h.lastApps(); len(apps) != 0 {
				t.Errorf("advertising %v while drained", apps)
			}
			if h.enqueue(t, "other", "r", 1) {
				t.Error("a reservation was accepted after the drain")
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
