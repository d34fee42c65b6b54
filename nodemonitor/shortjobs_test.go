package nodemonitor

import (
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/apache/thrift/lib/go/thrift"

	"github.com/sparrowfleet/sparrow/core/shortjobs"
	sparrowrpc "github.com/sparrowfleet/sparrow/thrift/gen-go/sparrowrpc"
)

// awareHarness is a harness whose node monitor runs the long-task-aware
// policy and records its long-work adverts.
type awareHarness struct {
	*harness
	mu      sync.Mutex
	adverts [][2]byte
}

// record is the harness's OnLongWork: it keeps every advert gossiped.
func (a *awareHarness) record(advert [2]byte) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.adverts = append(a.adverts, advert)
}

func newAwareHarness(t *testing.T, slots int) *awareHarness {
	return newAwareHarnessWith(t, slots, shortjobs.Config{Cutoff: 10, StarveLimit: 4})
}

// newAwareHarnessWith is newAwareHarness with the policy's settings cfg.
func newAwareHarnessWith(t *testing.T, slots int, cfg shortjobs.Config) *awareHarness {
	a := &awareHarness{}
	a.harness = newHarness(t, opts{slots: slots, cfg: func(c *Config) {
		c.ShortJobs = &cfg
		c.OnLongWork = a.record
	}})
	a.sched.estimate = map[string]float64{}
	return a
}

// gossiped returns the first byte (the long-work count) of each advert
// gossiped, in order.
func (a *awareHarness) gossiped() []byte { return a.advertBytes(0) }

// gossipedLevels returns the second byte (the long-work level) of each
// advert gossiped, in order.
func (a *awareHarness) gossipedLevels() []byte { return a.advertBytes(1) }

// advertBytes returns byte i of each advert gossiped, in order.
func (a *awareHarness) advertBytes(i int) []byte {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make([]byte, len(a.adverts))
	for k, ad := range a.adverts {
		out[k] = ad[i]
	}
	return out
}

// job scripts request's tasks, answered with the policy's fields for est
// seconds each, and queues n reservations of it of class c (-1: sent as
// a scheduler without the policy sends them).
func (a *awareHarness) job(t *testing.T, request string, c int, est float64, n int, tasks ...string) {
	t.Helper()
	a.sched.mu.Lock()
	a.sched.estimate[request] = est
	a.sched.mu.Unlock()
	a.sched.script(request, tasks...)
	req := a.req("app", request, n)
	if c >= 0 {
		req.JobClass = thrift.Int32Ptr(int32(c))
		req.TaskSeconds = thrift.Float64Ptr(est)
		req.RemainingWork = thrift.Float64Ptr(est * float64(len(tasks)))
	}
	if ok, err := a.nm.EnqueueTaskReservations(t.Context(), req); !ok || err != nil {
		t.Fatalf("enqueue %s: %v %v", request, ok, err)
	}
	synctest.Wait()
}

// offer queues n short reservations of request, est seconds a task, with
// its task offered (launched at once on a free slot), whose launch spec
// says the job has remaining tasks left; tasks are scripted for its
// getTask calls.
func (a *awareHarness) offer(t *testing.T, request string, est float64, n int, offered string, remaining int, tasks ...string) {
	t.Helper()
	a.sched.mu.Lock()
	a.sched.estimate[request] = est
	a.sched.mu.Unlock()
	a.sched.script(request, tasks...)
	req := a.req("app", request, n)
	req.JobClass = thrift.Int32Ptr(0)
	req.TaskSeconds = thrift.Float64Ptr(est)
	req.RemainingWork = thrift.Float64Ptr(est * float64(1+len(tasks)))
	spec := &sparrowrpc.TTaskLaunchSpec{TaskId: offered, Message: []byte{}}
	if remaining >= 0 {
		spec.RemainingTasks = thrift.Int32Ptr(int32(remaining))
		spec.TaskSeconds = thrift.Float64Ptr(est)
	}
	rep, err := a.nm.EnqueueTaskReservationsWithOffer(t.Context(), req, spec, nil)
	if err != nil || !rep.GetLaunched() {
		t.Fatalf("offer %s: %+v %v", request, rep, err)
	}
	synctest.Wait()
}

// The policy's node-monitor side: which task a freed slot runs next, and
// what the node gossips about its long work.
func TestShortJobsNodeMonitor(t *testing.T) {
	tests := []struct {
		name string
		run  func(t *testing.T, a *awareHarness)
		// launches is the order in which tasks launched; adverts the
		// long-work adverts gossiped, in order.
		launches []string
		adverts  []byte
	}{
		{"a long task is advertised while it runs", func(t *testing.T, a *awareHarness) {
			a.job(t, "L", 1, 100, 1, "t1")
			time.Sleep(time.Second)
			a.finish("L", "t1")
		}, []string{"L/t1"}, []byte{1, 0}},
		{"a short task is not advertised", func(t *testing.T, a *awareHarness) {
			a.job(t, "S", 0, 1, 1, "t1")
			a.finish("S", "t1")
		}, []string{"S/t1"}, nil},
		{"a job without a class or history is long", func(t *testing.T, a *awareHarness) {
			a.job(t, "P", -1, 1, 1, "t1")
			a.finish("P", "t1")
		}, []string{"P/t1"}, []byte{1, 0}},
		{"history classes the app's next job without a class", func(t *testing.T, a *awareHarness) {
			a.job(t, "S", 0, 1, 1, "t1")
			time.Sleep(2 * time.Second) // the app's tasks take 2 s, under the 10 s cutoff
			a.finish("S", "t1")
			a.job(t, "P", -1, 0, 1, "t1")
			a.finish("P", "t1")
		}, []string{"S/t1", "P/t1"}, nil},
		{"the least remaining work is served first", func(t *testing.T, a *awareHarness) {
			a.job(t, "first", 0, 1, 1, "t1")
			a.job(t, "big", 0, 5, 1, "t1")
			a.job(t, "small", 0, 1, 1, "t1")
			a.finish("first", "t1")
			a.finish("small", "t1")
			a.finish("big", "t1")
		}, []string{"first/t1", "small/t1", "big/t1"}, nil},
		{"a freed slot asks its job for another task first", func(t *testing.T, a *awareHarness) {
			a.job(t, "J", 0, 5, 1, "t1", "t2")
			a.job(t, "K", 0, 1, 1, "t1")
			a.finish("J", "t1") // sticky: J/t2 before K, whose work is less
			a.finish("J", "t2") // J had no task left: K
			a.finish("K", "t1")
		}, []string{"J/t1", "J/t2", "K/t1"}, nil},
		{"a slot freed by an offered task asks its job for another first", func(t *testing.T, a *awareHarness) {
			a.offer(t, "J", 5, 1, "t1", 1, "t2")
			a.job(t, "K", 0, 1, 1, "t1")
			a.finish("J", "t1") // sticky: J/t2 before K
			a.finish("J", "t2")
			a.finish("K", "t1")
		}, []string{"J/t1", "J/t2", "K/t1"}, nil},
		{"an offered task without the job's remaining tasks asks nothing", func(t *testing.T, a *awareHarness) {
			a.offer(t, "J", 5, 1, "t1", -1)
			a.job(t, "K", 0, 1, 1, "t1")
			a.finish("J", "t1")
			a.finish("K", "t1")
		}, []string{"J/t1", "K/t1"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				a := newAwareHarness(t, 1)
				tt.run(t, a)
				launched := a.execs.launchOrder()
				if !slices.Equal(launched, tt.launches) {
					t.Fatalf("launched %v, want %v", launched, tt.launches)
				}
				if got := a.gossiped(); !slices.Equal(got, tt.adverts) {
					t.Fatalf("adverts %v, want %v", got, tt.adverts)
				}
				// Nothing left behind: every slot free, nothing queued,
				// nothing long.
				wantState(t, a.harness, State{Slots: 1, Free: 1, Launches: uint64(len(tt.launches))})
			})
		})
	}
}

// Under Config.ClassFirst (the daemon's --short-class-first) a short job
// is served before a long one with less remaining work; without it the
// least remaining work goes first, whatever the class.
func TestShortJobsClassFirst(t *testing.T) {
	for _, tt := range []struct {
		classFirst bool
		launches   []string
	}{
		{true, []string{"first/t1", "wide/t1", "wide/t2", "long/t1"}},
		{false, []string{"first/t1", "long/t1", "wide/t1", "wide/t2"}},
	} {
		synctest.Test(t, func(t *testing.T) {
			a := newAwareHarnessWith(t, 1, shortjobs.Config{Cutoff: 10, StarveLimit: 4, ClassFirst: tt.classFirst})
			a.job(t, "first", 0, 1, 1, "t1")
			a.job(t, "long", 1, 11, 1, "t1")      // 11 s of work left
			a.job(t, "wide", 0, 9, 1, "t1", "t2") // 18 s of work left
			for _, x := range tt.launches {
				a.finish(x[:len(x)-3], x[len(x)-2:])
			}
			if got := a.execs.launchOrder(); !slices.Equal(got, tt.launches) {
				t.Fatalf("class first %v: launched %v, want %v", tt.classFirst, got, tt.launches)
			}
			wantState(t, a.harness, State{Slots: 1, Free: 1, Launches: uint64(len(tt.launches))})
		})
	}
}

// Under any interleaving of jobs of both classes, with and without the
// policy's fields, no task launches twice, every task launches, and the
// advert returns to zero when the node is idle.
func TestShortJobsNoTaskTwice(t *testing.T) {
	for seed := range 20 {
		synctest.Test(t, func(t *testing.T) {
			a := newAwareHarness(t, 2)
			var want []string
			for j := range 6 {
				id := string(rune('A' + j))
				n := 1 + (seed+j)%3
				var tasks []string
				for k := range n {
					task := id + "/" + string(rune('0'+k))
					tasks = append(tasks, task[2:])
					want = append(want, task)
				}
				class := (seed*7 + j) % 3
				a.job(t, id, class-1, float64(1+(seed+j*5)%20), 1+(seed+j)%2, tasks...)
			}
			// Finish whatever runs until nothing does.
			for range 100 {
				running := a.execs.launchOrder()
				for _, x := range running {
					a.finish(x[:1], x[2:])
				}
				if a.nm.State().Running == 0 {
					break
				}
			}
			got := a.execs.launches()
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Fatalf("seed %d: launched %v, want each of %v once", seed, got, want)
			}
			if ad := a.gossiped(); len(ad) > 0 && ad[len(ad)-1] != 0 {
				t.Fatalf("seed %d: last advert %v with nothing running", seed, ad)
			}
			if st := a.nm.State(); st.Running != 0 || st.Fetching != 0 || st.Queued != 0 {
				t.Fatalf("seed %d: left %+v", seed, st)
			}
		})
	}
}

// Under Config.Overrun, a short job's task that has run for the cutoff
// counts as long work from then until it ends; a task that ends first,
// and any task with the switch off, is never advertised for it.
func TestShortJobsOverrun(t *testing.T) {
	tests := []struct {
		name    string
		overrun bool
		run     func(t *testing.T, a *awareHarness)
		// adverts are the long-work counts gossiped, in order, after
		// each step of run that checks them.
		adverts []byte
	}{
		{"a short task past the cutoff is long until it ends", true, func(t *testing.T, a *awareHarness) {
			a.job(t, "S", 0, 1, 1, "t1")
			waitFor(t, 9*time.Second)
			if got := a.gossiped(); len(got) != 0 {
				t.Fatalf("adverts %v before the cutoff, want none", got)
			}
			waitFor(t, 2*time.Second)
			if got := a.gossiped(); !slices.Equal(got, []byte{1}) {
				t.Fatalf("adverts %v after the cutoff, want [1]", got)
			}
			a.finish("S", "t1")
		}, []byte{1, 0}},
		{"a short task ending before the cutoff is not advertised", true, func(t *testing.T, a *awareHarness) {
			a.job(t, "S", 0, 1, 1, "t1")
			waitFor(t, 5*time.Second)
			a.finish("S", "t1")
			waitFor(t, 20*time.Second)
		}, nil},
		{"a long task is counted once", true, func(t *testing.T, a *awareHarness) {
			a.job(t, "L", 1, 100, 1, "t1")
			waitFor(t, 20*time.Second)
			a.finish("L", "t1")
		}, []byte{1, 0}},
		{"off: a short task past the cutoff stays short", false, func(t *testing.T, a *awareHarness) {
			a.job(t, "S", 0, 1, 1, "t1")
			waitFor(t, 20*time.Second)
			a.finish("S", "t1")
		}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				a := newAwareHarnessWith(t, 1, shortjobs.Config{Cutoff: 10, StarveLimit: 4, Overrun: tt.overrun})
				tt.run(t, a)
				if got := a.gossiped(); !slices.Equal(got, tt.adverts) {
					t.Fatalf("adverts %v, want %v", got, tt.adverts)
				}
				wantState(t, a.harness, State{Slots: 1, Free: 1, Launches: 1})
			})
		})
	}
}

// waitFor lets d of the bubble's time pass and its goroutines settle.
func waitFor(t *testing.T, d time.Duration) {
	t.Helper()
	time.Sleep(d)
	synctest.Wait()
}

// TestShortJobsRemainingWorkUpdate: a scheduler's update of a job's
// remaining work (updateRemainingWork) reorders its reservations queued
// here; updates for requests with nothing queued here, and every update
// without the policy, change nothing and are not counted.
func TestShortJobsRemainingWorkUpdate(t *testing.T) {
	for _, tt := range []struct {
		name     string
		updates  []*sparrowrpc.TRemainingWork
		launches []string
		applied  uint64
	}{
		{"none", nil, []string{"first/t1", "small/t1", "big/t1"}, 0},
		{"the big job's work shrinks below the small one's", []*sparrowrpc.TRemainingWork{{RequestId: "big", RemainingWork: 0.5}},
			[]string{"first/t1", "big/t1", "small/t1"}, 1},
		{"the latest update counts", []*sparrowrpc.TRemainingWork{{RequestId: "big", RemainingWork: 0.5}, {RequestId: "big", RemainingWork: 9}},
			[]string{"first/t1", "small/t1", "big/t1"}, 2},
		{"requests not queued here are ignored", []*sparrowrpc.TRemainingWork{{RequestId: "gone", RemainingWork: 0.1}, {RequestId: "first", RemainingWork: 0.1}, nil, {RemainingWork: 1}},
			[]string{"first/t1", "small/t1", "big/t1"}, 0},
		{"negative work is ignored", []*sparrowrpc.TRemainingWork{{RequestId: "big", RemainingWork: -1}},
			[]string{"first/t1", "small/t1", "big/t1"}, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				a := newAwareHarness(t, 1)
				a.job(t, "first", 0, 1, 1, "t1") // takes the slot
				a.job(t, "big", 0, 5, 1, "t1")
				a.job(t, "small", 0, 1, 1, "t1")
				if err := a.nm.UpdateRemainingWork(t.Context(), tt.updates); err != nil {
					t.Fatal(err)
				}
				a.finish("first", "t1")
				a.finish(tt.launches[1][:len(tt.launches[1])-3], "t1")
				a.finish(tt.launches[2][:len(tt.launches[2])-3], "t1")
				if got := a.execs.launchOrder(); !slices.Equal(got, tt.launches) {
					t.Fatalf("launched %v, want %v", got, tt.launches)
				}
				wantState(t, a.harness, State{Slots: 1, Free: 1, Launches: 3, WorkUpdates: tt.applied})
			})
		})
	}
	t.Run("without the policy", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			h := newHarness(t, opts{slots: 1})
			h.sched.script("j", "t1")
			if ok, err := h.nm.EnqueueTaskReservations(t.Context(), h.req("app", "j", 1)); !ok || err != nil {
				t.Fatalf("enqueue: %v %v", ok, err)
			}
			synctest.Wait()
			if err := h.nm.UpdateRemainingWork(t.Context(), []*sparrowrpc.TRemainingWork{{RequestId: "j", RemainingWork: 1}}); err != nil {
				t.Fatal(err)
			}
			h.finish("j", "t1")
			wantState(t, h, State{Slots: 1, Free: 1, Launches: 1})
		})
	})
}
