package nodemonitor

import (
	"errors"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sparrowfleet/sparrow/core/shortjobs"
)

const pullRetry = time.Second

// newPullHarness is an awareHarness whose node monitor runs pulls,
// retrying a pull that got nothing after pullRetry; pulls are answered
// with the scripted tasks of request "P" (1 s each).
func newPullHarness(t *testing.T, slots int) *awareHarness {
	a := &awareHarness{}
	a.harness = newHarness(t, opts{slots: slots, cfg: func(c *Config) {
		c.ShortJobs = &shortjobs.Config{Cutoff: 10, StarveLimit: 4}
		c.PullRetry = pullRetry
		c.OnLongWork = a.record
	}})
	a.sched.estimate = map[string]float64{"P": 1}
	a.sched.pullFrom = "P"
	return a
}

// heard passes the scheduler's backlog advert w, naming no app (any
// app), and waits.
func (a *awareHarness) heard(w float64) { a.heardFor(w) }

// heardFor passes the scheduler's backlog advert w for apps and waits.
func (a *awareHarness) heardFor(w float64, apps ...string) {
	a.nm.PullHeard(schedSvc, w, apps)
	synctest.Wait()
}

// pulls is how many pulls the scheduler was asked.
func (a *awareHarness) pulls() int { return a.sched.askedFor(shortjobs.PullRequestID(schedSvc)) }

// What a node monitor does with a scheduler's backlog advert: a pull
// queued by the advert's remaining work, launched under the answer's own
// request id, queued again after a task and retried after nothing.
func TestPullNodeMonitor(t *testing.T) {
	tests := []struct {
		name     string
		run      func(t *testing.T, a *awareHarness)
		launches []string
		pulls    int // pulls asked
		queued   int // reservations queued at the end
	}{
		{"an advert on an idle node pulls a task, launched under its request", func(t *testing.T, a *awareHarness) {
			a.sched.script("P", "t1")
			a.heard(4)
			a.finish("P", "t1") // P had nothing left: the pull, queued again, gets nothing
			a.heard(0)          // the backlog empties: nothing more is asked
			time.Sleep(10 * pullRetry)
			synctest.Wait()
		}, []string{"P/t1"}, 2, 0},
		{"a pulled task's end asks its job for another first", func(t *testing.T, a *awareHarness) {
			a.sched.script("P", "t1", "t2")
			a.heard(4)
			a.finish("P", "t1") // sticky: P/t2 from P's request, not a pull
			a.heard(0)
			a.finish("P", "t2")
		}, []string{"P/t1", "P/t2"}, 1, 0},
		{"a pull that got nothing is retried after the delay", func(t *testing.T, a *awareHarness) {
			a.heard(4)
			if n := a.pulls(); n != 1 {
				t.Fatalf("%d pulls, want 1", n)
			}
			time.Sleep(pullRetry / 2)
			synctest.Wait()
			if n := a.pulls(); n != 1 {
				t.Fatalf("%d pulls before the retry delay, want 1", n)
			}
			a.sched.script("P", "t1")
			time.Sleep(pullRetry / 2)
			synctest.Wait()
			a.finish("P", "t1")
			a.heard(0)
		}, []string{"P/t1"}, 3, 0},
		{"a job with less work left is served before the pull", func(t *testing.T, a *awareHarness) {
			a.sched.script("P", "t1")
			a.job(t, "L", 1, 100, 1, "t1")
			a.job(t, "S", 0, 1, 1, "t1") // work 1
			a.heard(8)                   // the pull waits with work 8
			a.finish("L", "t1")
			a.finish("S", "t1")
			a.finish("P", "t1")
			a.heard(0)
		}, []string{"L/t1", "S/t1", "P/t1"}, 2, 0},
		{"a long task's end serves a shorter backlog before its job's next task", func(t *testing.T, a *awareHarness) {
			a.sched.script("P", "t1")
			a.job(t, "L", 1, 100, 1, "t1", "t2")
			a.heard(4)
			a.finish("L", "t1") // L has 100 s left: the pull first
			a.heard(0)
			a.finish("P", "t1")
		}, []string{"L/t1", "P/t1"}, 1, 0},
		{"a scheduler that left takes its queued pull with it", func(t *testing.T, a *awareHarness) {
			a.job(t, "L", 1, 100, 1, "t1")
			a.heard(4)
			if q := a.nm.State().Queued; q != 1 {
				t.Fatalf("%d queued, want the pull", q)
			}
			a.nm.PullGone(schedSvc)
			a.finish("L", "t1")
		}, []string{"L/t1"}, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				a := newPullHarness(t, 1)
				tt.run(t, a)
				launched := a.execs.launchOrder()
				if !slices.Equal(launched, tt.launches) {
					t.Fatalf("launched %v, want %v", launched, tt.launches)
				}
				if n := a.pulls(); n != tt.pulls {
					t.Fatalf("%d pulls, want %d", n, tt.pulls)
				}
				st := a.nm.State()
				if st.Queued != tt.queued || st.Running != 0 || st.Fetching != 0 {
					t.Fatalf("state %+v, want %d queued and nothing running", st, tt.queued)
				}
				if st.PullTasks+st.PullsEmpty != uint64(tt.pulls) || st.PullTasks > uint64(len(tt.launches)) {
					t.Fatalf("pull counts %d with a task, %d empty; want %d in all", st.PullTasks, st.PullsEmpty, tt.pulls)
				}
				a.sched.mu.Lock()
				finished := slices.Clone(a.sched.finished)
				a.sched.mu.Unlock()
				for _, f := range finished {
					if _, pull := shortjobs.PullScheduler(f[:len(f)-len("/t1")]); pull {
						t.Fatalf("finished report %q names the pull, not the task's request", f)
					}
				}
				if ad := a.gossiped(); len(ad) > 0 && ad[len(ad)-1] != 0 {
					t.Fatalf("long-work adverts %v end with long work", ad)
				}
			})
		})
	}
}

// A pulled task is never counted long work: the pull's fetch and its
// task are short.
func TestPullIsShort(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := newPullHarness(t, 2)
		a.sched.script("P", "t1")
		a.heard(4)
		if ad := a.gossiped(); len(ad) != 0 {
			t.Fatalf("long-work adverts %v while a pulled task runs", ad)
		}
		a.heard(0)
		a.finish("P", "t1")
	})
}

// Addresses of a second executor, for the app "other".
const otherBackend = "127.0.0.1:10"

// A scheduler's advert names the apps of its backlog: a node monitor
// hosting none of them neither queues a pull for it nor asks it, one
// hosting one of them pulls, and an executor registering or leaving
// re-reads the adverts heard, so that a node gaining a backlogged app
// pulls at once and one losing its last cancels its pull.
func TestPullAdvertApps(t *testing.T) {
	tests := []struct {
		name     string
		run      func(t *testing.T, a *awareHarness)
		launches []string
		pulls    int // pulls asked
	}{
		{"a node hosting none of the apps asks nothing", func(t *testing.T, a *awareHarness) {
			a.sched.script("P", "t1")
			a.heardFor(4, "other", "zeta")
			if q := a.nm.State().Queued; q != 0 {
				t.Fatalf("%d queued, want no pull", q)
			}
			time.Sleep(10 * pullRetry)
			synctest.Wait()
			a.heardFor(2, "other") // a new advert, still not for this node
			time.Sleep(10 * pullRetry)
			synctest.Wait()
		}, nil, 0},
		{"a node hosting one of the apps pulls", func(t *testing.T, a *awareHarness) {
			a.sched.script("P", "t1")
			a.heardFor(4, "app", "other")
			a.finish("P", "t1")
			a.heardFor(0)
		}, []string{"P/t1"}, 2},
		{"an executor of a backlogged app registering starts pulls", func(t *testing.T, a *awareHarness) {
			a.sched.script("P", "t1")
			a.heardFor(4, "other")
			time.Sleep(10 * pullRetry)
			synctest.Wait()
			if n := a.pulls(); n != 0 {
				t.Fatalf("%d pulls before the executor registered, want 0", n)
			}
			if ok, err := a.nm.RegisterBackend(t.Context(), "other", otherBackend); !ok || err != nil {
				t.Fatalf("register: %v %v", ok, err)
			}
			synctest.Wait()
			a.finish("P", "t1")
			a.heardFor(0)
		}, []string{"P/t1"}, 2},
		{"an executor of another app registering changes nothing", func(t *testing.T, a *awareHarness) {
			a.heardFor(4, "zeta")
			if ok, err := a.nm.RegisterBackend(t.Context(), "other", otherBackend); !ok || err != nil {
				t.Fatalf("register: %v %v", ok, err)
			}
			time.Sleep(10 * pullRetry)
			synctest.Wait()
		}, nil, 0},
		{"an advert no longer naming the node's apps cancels its queued pull", func(t *testing.T, a *awareHarness) {
			a.sched.script("P", "t1")
			a.job(t, "L", 1, 100, 1, "t1") // the slot runs L: the pull waits
			a.heardFor(4, "app")
			if q := a.nm.State().Queued; q != 1 {
				t.Fatalf("%d queued, want the pull", q)
			}
			a.heardFor(4, "other")
			if q := a.nm.State().Queued; q != 0 {
				t.Fatalf("%d queued, want the pull cancelled", q)
			}
			a.finish("L", "t1")
			time.Sleep(10 * pullRetry)
			synctest.Wait()
		}, []string{"L/t1"}, 0},
		{"the executor of the only backlogged app leaving cancels the pull", func(t *testing.T, a *awareHarness) {
			a.sched.script("P", "t1")
			if ok, err := a.nm.RegisterBackend(t.Context(), "other", otherBackend); !ok || err != nil {
				t.Fatalf("register: %v %v", ok, err)
			}
			a.job(t, "L", 1, 100, 1, "t1")
			a.heardFor(4, "other")
			if q := a.nm.State().Queued; q != 1 {
				t.Fatalf("%d queued, want the pull", q)
			}
			a.nm.executorLost("other", otherBackend, nil, errors.New("gone"))
			synctest.Wait()
			a.finish("L", "t1")
			time.Sleep(10 * pullRetry)
			synctest.Wait()
		}, []string{"L/t1"}, 0},
		{"the executor its pull was queued under leaving, another named stays: pulled after the delay", func(t *testing.T, a *awareHarness) {
			a.sched.script("P", "t1")
			for app, addr := range map[string]string{"other": otherBackend, "zeta": "127.0.0.1:11"} {
				if ok, err := a.nm.RegisterBackend(t.Context(), app, addr); !ok || err != nil {
					t.Fatalf("register: %v %v", ok, err)
				}
			}
			a.job(t, "L", 1, 100, 1, "t1")
			a.heardFor(4, "other", "zeta") // queued under "other"
			a.nm.executorLost("other", otherBackend, nil, errors.New("gone"))
			synctest.Wait()
			a.finish("L", "t1") // L's slot frees before the retry: nothing to serve
			if n := a.pulls(); n != 0 {
				t.Fatalf("%d pulls before the retry delay, want 0", n)
			}
			time.Sleep(pullRetry)
			synctest.Wait()
			a.finish("P", "t1")
			a.heardFor(0)
		}, []string{"L/t1", "P/t1"}, 2},
		{"a node with no executor pulls once one registers", func(t *testing.T, a *awareHarness) {
			a.sched.script("P", "t1")
			a.nm.executorLost("app", backend, nil, errors.New("gone"))
			a.heardFor(4) // any app, but none here
			time.Sleep(10 * pullRetry)
			synctest.Wait()
			if n := a.pulls(); n != 0 {
				t.Fatalf("%d pulls with no executor, want 0", n)
			}
			if ok, err := a.nm.RegisterBackend(t.Context(), "app", backend); !ok || err != nil {
				t.Fatalf("register: %v %v", ok, err)
			}
			synctest.Wait()
			a.finish("P", "t1")
			a.heardFor(0)
		}, []string{"P/t1"}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				a := newPullHarness(t, 1)
				tt.run(t, a)
				if launched := a.execs.launchOrder(); !slices.Equal(launched, tt.launches) {
					t.Fatalf("launched %v, want %v", launched, tt.launches)
				}
				if n := a.pulls(); n != tt.pulls {
					t.Fatalf("%d pulls, want %d", n, tt.pulls)
				}
				st := a.nm.State()
				if st.Queued != 0 || st.Running != 0 || st.Fetching != 0 {
					t.Fatalf("state %+v, want nothing queued or running", st)
				}
				if st.PullTasks+st.PullsEmpty != uint64(tt.pulls) {
					t.Fatalf("pull counts %d with a task, %d empty; want %d in all", st.PullTasks, st.PullsEmpty, tt.pulls)
				}
			})
		})
	}
}
