package nodemonitor

import (
	"testing"
	"time"
)

// fetchCallsSeen is how many fetchTask calls the fake scheduler has had.
func (f *fakeScheduler) fetchCallsSeen() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, c := range f.fetchCalls {
		n += c
	}
	return n
}

// waitFake waits, with a deadline, for cond on the fake scheduler.
func waitFake(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond) // polling interval of a condition wait
	}
}

// TestFetchAskedAgainLaunchesOnce: a fetch whose answer comes later than
// the node monitor waits is asked again with the same fetch ID, and the
// task it handed out is launched, once.
func TestFetchAskedAgainLaunchesOnce(t *testing.T) {
	h := newHarnessWith(t, harnessOpts{slots: 1, getTaskTimeout: 200 * time.Millisecond})
	h.sched.mu.Lock()
	h.sched.tasks["r"] = []string{"t0"}
	h.sched.slowAnswers = 1
	h.sched.mu.Unlock()
	h.enqueue(t, "app", "r", 1)
	waitState(t, h.nm, "the task launched", func(s State) bool { return s.Launches == 1 })
	if ids, most := h.sched.fetchesAskedAgain(); ids != 1 || most < 2 {
		t.Fatalf("fetch IDs asked again: %d (most calls %d); want the one fetch asked again", ids, most)
	}
	if got := h.sched.askedFor("r"); got != 1 {
		t.Errorf("the scheduler handed out tasks %d times, want 1", got)
	}
	// The node monitor counts a launch before the executor's launchTask
	// call arrives: wait for that call, then check it came once.
	waitFake(t, "the executor's launch", func() bool { return h.back.count() >= 1 })
	if got := h.back.count(); got != 1 {
		t.Errorf("%d launches at the executor, want 1", got)
	}
}

// TestFetchFallsBackToGetTask: a scheduler that answers fetchTask
// UNKNOWN_METHOD (a version before it) is asked with getTask.
func TestFetchFallsBackToGetTask(t *testing.T) {
	h := newHarnessWith(t, harnessOpts{slots: 1, noFetch: true})
	h.sched.mu.Lock()
	h.sched.tasks["r"] = []string{"t0", "t1"}
	h.sched.mu.Unlock()
	h.enqueue(t, "app", "r", 2)
	waitState(t, h.nm, "a launch", func(s State) bool { return s.Launches == 1 })
	if got := h.sched.askedFor("r"); got != 1 {
		t.Fatalf("getTask asked %d times, want 1", got)
	}
	if n := h.sched.fetchCallsSeen(); n != 0 {
		t.Fatalf("%d fetchTask calls reached the handler", n)
	}
	if !h.nm.noFetch(h.nm.getTaskAddr(h.self.Host + ":1")) {
		t.Error("the scheduler is not remembered as having no fetchTask")
	}
}

// TestFetchInDoubtGivesUp: a fetch that may have handed out a task is
// asked about again only until gossip declares its scheduler gone, or
// for Config.FetchRetryFor; then its slot is freed and nothing launches.
func TestFetchInDoubtGivesUp(t *testing.T) {
	for _, gone := range []bool{true, false} {
		name := map[bool]string{true: "scheduler gone", false: "retry time up"}[gone]
		t.Run(name, func(t *testing.T) {
			retryFor := time.Minute
			if !gone {
				retryFor = 600 * time.Millisecond
			}
			h := newHarnessWith(t, harnessOpts{slots: 1, getTaskTimeout: 100 * time.Millisecond, fetchRetryFor: retryFor})
			h.sched.mu.Lock()
			h.sched.tasks["r"] = []string{"t0"}
			h.sched.holdAll = true
			h.sched.mu.Unlock()
			h.enqueue(t, "app", "r", 1)
			waitFake(t, "the fetch asked again", func() bool { return h.sched.fetchCallsSeen() >= 2 })
			if gone {
				h.nm.SchedulerGone(h.self.Host + ":1")
			}
			waitState(t, h.nm, "the slot freed", func(s State) bool { return s.Free == 1 && s.Fetching == 0 })
			if st := h.nm.State(); st.Launches != 0 || h.back.count() != 0 {
				t.Fatalf("state %+v, %d executor launches: want nothing launched", st, h.back.count())
			}
		})
	}
}
