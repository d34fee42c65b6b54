package scheduler

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/apache/thrift/lib/go/thrift"

	"github.com/sparrowfleet/sparrow/core/shortjobs"
	"github.com/sparrowfleet/sparrow/thrift/gen-go/sparrowrpc"
)

// busyView is a fakeView whose node monitors advertise long work as told.
type busyView struct {
	*fakeView
	mu   sync.Mutex
	busy map[string]bool
}

func (v *busyView) LongWork(addr string) bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.busy[addr]
}

// awareCluster is a cluster whose scheduler runs the long-task-aware
// policy with cfg (nil: off) over a busyView where the nodes of busy
// (indexes) advertise long work.
func awareCluster(t *testing.T, n int, cfg *shortjobs.Config, busy ...int) *cluster {
	t.Helper()
	return awareClusterWith(t, n, Config{NoOffers: true, ShortJobs: cfg}, busy...)
}

// awareClusterWith is awareCluster with the scheduler's config sc (its
// address and seed set here).
func awareClusterWith(t *testing.T, n int, sc Config, busy ...int) *cluster {
	t.Helper()
	c := newCluster(t, n, Config{NoOffers: true})
	v := &busyView{fakeView: c.view, busy: map[string]bool{}}
	for _, i := range busy {
		v.busy[c.nms[i].addr] = true
	}
	sc.Address, sc.Seed = schedAddr, 1
	s, err := newWith(sc, v, c.net, c.net)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	c.s = s
	return c
}

func withSeconds(r *sparrowrpc.TSchedulingRequest, sec float64) *sparrowrpc.TSchedulingRequest {
	r.TaskSeconds = thrift.Float64Ptr(sec)
	return r
}

// reservedOn returns the indexes of the nodes holding reservations for
// req, and the enqueue requests sent for it.
func (c *cluster) reservedOn(req string) (nodes map[int]int, msgs []*sparrowrpc.TEnqueueTaskReservationsRequest) {
	nodes = map[int]int{}
	for i, nm := range c.nms {
		if k := nm.acceptedFor(req); k > 0 {
			nodes[i] = k
		}
		nm.mu.Lock()
		for _, m := range nm.msgs {
			if m.RequestId == req {
				msgs = append(msgs, m)
			}
		}
		nm.mu.Unlock()
	}
	return nodes, msgs
}

// Where the scheduler places a job's reservations under the policy, and
// what it tells the node monitors of the job.
func TestShortJobsPlacement(t *testing.T) {
	cfg := &shortjobs.Config{Cutoff: 10, ShortShare: 0.3, StarveLimit: 4}
	byHistory := &shortjobs.Config{Cutoff: 10, ShortShare: 0.3, StarveLimit: 4, Unestimated: shortjobs.UnestimatedByHistory}
	var shortOnly []int
	hashes := make([]uint64, 10)
	for i := range hashes {
		hashes[i] = shortjobs.NodeHash(fmt.Sprintf("nm%d", i))
	}
	part := shortjobs.NewPartition(slices.Clone(hashes), cfg.ShortShare)
	for i, h := range hashes {
		if part.ShortOnly(h) {
			shortOnly = append(shortOnly, i)
		}
	}
	if len(shortOnly) != 3 {
		t.Fatalf("short-only nodes %v, want 3 of 10 at share 0.3", shortOnly)
	}
	tests := []struct {
		name  string
		cfg   *shortjobs.Config
		busy  []int
		job   *sparrowrpc.TSchedulingRequest
		tasks int
		// avoid are nodes that must get no reservation; spread the least
		// number of nodes that must get some.
		avoid     []int
		spread    int
		wantClass *int32
		wantWork  float64
	}{
		{"a short job avoids nodes with long work", cfg, []int{0, 1, 2, 3, 4},
			withSeconds(job("s", 2, freeTasks(2)...), 1), 4, []int{0, 1, 2, 3, 4}, 1, thrift.Int32Ptr(0), 2},
		{"a short job goes anywhere when too few nodes are free", cfg, []int{0, 1, 2, 3, 4, 5, 6, 7, 8},
			withSeconds(job("s", 2, freeTasks(3)...), 1), 6, nil, 2, thrift.Int32Ptr(0), 3},
		{"a long job avoids the short-only nodes", cfg, nil,
			withSeconds(job("l", 2, freeTasks(4)...), 100), 8, shortOnly, 1, thrift.Int32Ptr(1), 400},
		{"a job without an estimate is short, its work counted in tasks", cfg, []int{0, 1, 2, 3, 4},
			job("u", 2, freeTasks(2)...), 4, []int{0, 1, 2, 3, 4}, 1, thrift.Int32Ptr(0), 2 * cfg.Cutoff / 2},
		{"by history, a job without an estimate or history is long", byHistory, nil,
			job("u", 2, freeTasks(4)...), 8, shortOnly, 1, thrift.Int32Ptr(1), 0},
		{"policy off: plain Sparrow, no fields", nil, []int{0, 1, 2, 3, 4, 5, 6, 7, 8},
			withSeconds(job("p", 2, freeTasks(4)...), 1), 8, nil, 1, nil, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				c := awareCluster(t, 10, tt.cfg, tt.busy...)
				if err := c.s.SubmitJob(context.Background(), tt.job); err != nil {
					t.Fatal(err)
				}
				id := tt.job.GetRequestId()
				c.waitAccepted(t, id, tt.tasks)
				nodes, msgs := c.reservedOn(id)
				for _, i := range tt.avoid {
					if nodes[i] > 0 {
						t.Fatalf("reservations on nodes %v, want none on %v", nodes, tt.avoid)
					}
				}
				if len(nodes) < tt.spread {
					t.Fatalf("reservations on nodes %v, want at least %d nodes", nodes, tt.spread)
				}
				for _, m := range msgs {
					if (m.JobClass == nil) != (tt.wantClass == nil) || (m.JobClass != nil && *m.JobClass != *tt.wantClass) {
						t.Fatalf("reservation class %v, want %v", m.JobClass, tt.wantClass)
					}
					if m.GetRemainingWork() != tt.wantWork {
						t.Fatalf("remaining work %v, want %v", m.GetRemainingWork(), tt.wantWork)
					}
				}
			})
		})
	}
}

// A node monitor's freed slot asks its job for another task (a sticky
// fetch) on a reservation the scheduler never placed there: under the
// policy it gets one, each task still launching once; without, nothing.
func TestShortJobsStickyFetch(t *testing.T) {
	for _, on := range []bool{true, false} {
		t.Run(fmt.Sprintf("policy=%v", on), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var cfg *shortjobs.Config
				if on {
					cfg = &shortjobs.Config{Cutoff: 10, StarveLimit: 4}
				}
				c := awareCluster(t, 4, cfg)
				if err := c.s.SubmitJob(context.Background(), withSeconds(job("j", 1, freeTasks(3)...), 1)); err != nil {
					t.Fatal(err)
				}
				c.waitAccepted(t, "j", 3)
				holders := c.holders("j")
				var nm *fakeNM
				var rest []*fakeNM
				for _, h := range holders {
					if nm == nil && h.acceptedFor("j") == 1 {
						nm = h
					} else {
						rest = append(rest, h)
					}
				}
				if nm == nil {
					t.Fatalf("no node holds exactly one reservation of j")
				}
				first := c.getTask(t, "j", nm)
				if len(first) != 1 {
					t.Fatalf("first getTask: %v", first)
				}
				if on && first[0].GetRemainingTasks() != 2 {
					t.Fatalf("remaining %d, want 2", first[0].GetRemainingTasks())
				}
				got := []string{first[0].TaskId}
				// The same node asks again after its task ended, holding
				// no other reservation of j.
				again := c.getTask(t, "j", nm)
				if on != (len(again) == 1) {
					t.Fatalf("policy %v: sticky getTask got %v", on, again)
				}
				for _, s := range again {
					got = append(got, s.TaskId)
				}
				got = append(got, c.getTaskOnEach(t, "j", rest)...)
				if !distinct(got) {
					t.Fatalf("tasks %v handed out twice", got)
				}
				if len(got) != 3 {
					t.Fatalf("tasks handed out %v, want all 3", got)
				}
			})
		})
	}
}

// An offered task carries, under the policy, the tasks its job had
// neither launched nor offered, so that the node monitor that launched it
// asks the job for another when it ends; that sticky getTask and the
// others hand out every task once.
func TestShortJobsOfferCarriesRemainingTasks(t *testing.T) {
	for _, on := range []bool{true, false} {
		t.Run(fmt.Sprintf("policy=%v", on), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var cfg *shortjobs.Config
				if on {
					cfg = &shortjobs.Config{Cutoff: 10, StarveLimit: 4}
				}
				c := awareClusterWith(t, 2, Config{ShortJobs: cfg})
				for _, nm := range c.nms {
					nm.takeOffers.Store(true)
				}
				const tasks = 5
				if err := c.s.SubmitJob(context.Background(), withSeconds(job("j", 1, freeTasks(tasks)...), 1)); err != nil {
					t.Fatal(err)
				}
				c.hub.waitUntil(t, "the offers answered", func() bool { return c.s.Stats().OffersTaken == 2 })
				var got []string
				for _, nm := range c.nms {
					nm.mu.Lock()
					specs := slices.Clone(nm.offerSpecs)
					got = append(got, nm.took["j"]...)
					nm.mu.Unlock()
					if len(specs) != 1 {
						t.Fatalf("%s got %d offers, want 1", nm.name, len(specs))
					}
					sp := specs[0]
					if on && (sp.GetRemainingTasks() != tasks-2 || sp.GetTaskSeconds() != 1) {
						t.Fatalf("offer to %s: remaining %d, %v s per task; want %d, 1", nm.name, sp.GetRemainingTasks(), sp.GetTaskSeconds(), tasks-2)
					}
					if !on && (sp.RemainingTasks != nil || sp.TaskSeconds != nil) {
						t.Fatalf("offer to %s carries the policy's fields with the policy off: %+v", nm.name, sp)
					}
				}
				// Each node monitor's offered task ends and it asks again,
				// then its queued reservations ask until the job is out.
				for range tasks {
					for _, nm := range c.nms {
						for _, sp := range c.getTask(t, "j", nm) {
							got = append(got, sp.TaskId)
						}
					}
				}
				if !distinct(got) || len(got) != tasks {
					t.Fatalf("tasks handed out %v, want all %d once each", got, tasks)
				}
			})
		})
	}
}

// Under UnestimatedByHistory, the scheduler's history of an app's task
// durations classes the app's next job that states no estimate.
func TestShortJobsHistory(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := awareCluster(t, 4, &shortjobs.Config{Cutoff: 10, StarveLimit: 4, Unestimated: shortjobs.UnestimatedByHistory})
		if err := c.s.SubmitJob(context.Background(), job("a", 1, freeTasks(1)...)); err != nil {
			t.Fatal(err)
		}
		c.waitAccepted(t, "a", 1)
		nm := c.holders("a")[0]
		spec := c.getTask(t, "a", nm)
		time.Sleep(2 * time.Second)
		if err := c.s.TasksFinished(context.Background(), nm.hp, []*sparrowrpc.TFullTaskId{{TaskId: spec[0].TaskId, RequestId: "a", AppId: app}}); err != nil {
			t.Fatal(err)
		}
		if err := c.s.SubmitJob(context.Background(), job("b", 1, freeTasks(1)...)); err != nil {
			t.Fatal(err)
		}
		c.waitAccepted(t, "b", 1)
		_, msgs := c.reservedOn("b")
		if len(msgs) != 1 || msgs[0].GetJobClass() != 0 || msgs[0].GetTaskSeconds() != 2 {
			t.Fatalf("second job's reservation %+v, want short with 2 s per task", msgs)
		}
	})
}

// TestShortPolicy: the policy classes a job by its own estimate, else by
// its count of tasks (short, half the cutoff per task) or, under
// UnestimatedByHistory, by its app's history of task durations learnt
// from hand-out to finish; it adds its fields to reservations and getTask
// answers. Off (nil), it classes nothing and adds nothing.
func TestShortPolicy(t *testing.T) {
	t0 := time.Unix(1000, 0)
	on := &shortjobs.Config{Cutoff: 10, StarveLimit: 4}
	byHistory := &shortjobs.Config{Cutoff: 10, StarveLimit: 4, Unestimated: shortjobs.UnestimatedByHistory}
	tests := []struct {
		name    string
		cfg     *shortjobs.Config
		ran     []time.Duration // durations of the app's tasks finished before
		own     float64         // the job's own seconds per task
		tasks   int
		want    shortJob
		wantMsg bool // the reservation and the answer carry the policy's fields
	}{
		{name: "off", cfg: nil, own: 2, tasks: 3},
		{name: "its own estimate under the cutoff: short", cfg: on, own: 2, tasks: 3,
			want: shortJob{class: shortjobs.Short, est: 2, work: 6}, wantMsg: true},
		{name: "its own estimate past the cutoff: long", cfg: on, own: 20, tasks: 2,
			want: shortJob{class: shortjobs.Long, est: 20, work: 40}, wantMsg: true},
		{name: "no estimate: short, by its tasks", cfg: on, tasks: 2,
			want: shortJob{class: shortjobs.Short, est: 5, work: 10, guessed: true}, wantMsg: true},
		{name: "no estimate: short whatever the app's history", cfg: on, ran: []time.Duration{40 * time.Second}, tasks: 2,
			want: shortJob{class: shortjobs.Short, est: 5, work: 10, guessed: true}, wantMsg: true},
		{name: "by history, no estimate and no history: long", cfg: byHistory, tasks: 2,
			want: shortJob{class: shortjobs.Long}, wantMsg: true},
		{name: "by history, the app's history", cfg: byHistory, ran: []time.Duration{4 * time.Second}, tasks: 2,
			want: shortJob{class: shortjobs.Short, est: 4, work: 8, guessed: true}, wantMsg: true},
		{name: "by history, the app's long history", cfg: byHistory, ran: []time.Duration{40 * time.Second}, tasks: 2,
			want: shortJob{class: shortjobs.Long, est: 40, work: 80}, wantMsg: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := newShortPolicy(tt.cfg)
			if err != nil {
				t.Fatal(err)
			}
			for i, d := range tt.ran {
				task := runningTask{app: app, request: "before", task: fmt.Sprint(i)}
				p.answer(&sparrowrpc.TTaskLaunchSpec{}, shortJob{}, 0, task, t0)
				p.finished(task, t0.Add(d))
			}
			j := p.classify(tt.own, app, tt.tasks)
			if j != tt.want {
				t.Fatalf("classified %+v, want %+v", j, tt.want)
			}
			msg := &sparrowrpc.TEnqueueTaskReservationsRequest{}
			p.reservation(msg, j)
			spec := &sparrowrpc.TTaskLaunchSpec{}
			p.answer(spec, j, tt.tasks-1, runningTask{app: app, request: "r", task: "0"}, t0)
			if !tt.wantMsg {
				if msg.JobClass != nil || msg.TaskSeconds != nil || spec.RemainingTasks != nil || spec.TaskSeconds != nil {
					t.Fatalf("policy off added fields: %+v, %+v", msg, spec)
				}
				return
			}
			if msg.GetJobClass() != int32(tt.want.class) || msg.GetTaskSeconds() != tt.want.est || msg.GetRemainingWork() != tt.want.work {
				t.Fatalf("reservation %+v, want class %v, %v s per task, %v s of work", msg, tt.want.class, tt.want.est, tt.want.work)
			}
			if spec.GetRemainingTasks() != int32(tt.tasks-1) || spec.GetTaskSeconds() != tt.want.est {
				t.Fatalf("answer %+v, want %d remaining, %v s per task", spec, tt.tasks-1, tt.want.est)
			}
		})
	}
}

// Under the policy, the reservation timeout's extra reservations for a
// long job go where its first ones may: never to the short-only share.
// A long job already holding reservations on every node open to it gets
// no more, rather than spilling onto the short-only nodes.
func TestShortJobsSweepKeepsLongJobsOffShortOnlyNodes(t *testing.T) {
	cfg := &shortjobs.Config{Cutoff: 10, ShortShare: 0.3, StarveLimit: 4}
	part := shortjobs.NewPartition(func() []uint64 {
		h := make([]uint64, 10)
		for i := range h {
			h[i] = shortjobs.NodeHash(fmt.Sprintf("nm%d", i))
		}
		return h
	}(), cfg.ShortShare)
	for _, tt := range []struct {
		name      string
		tasks     int
		reprobes  uint64 // rounds the sweep places
		wantAfter int    // reservations held after the sweep
	}{
		{"room on the general nodes: extras go there", 1, 1, 4},
		{"every general node holds one: no extras", 4, 0, 8},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				c := awareClusterWith(t, 10, Config{NoOffers: true, ShortJobs: cfg, ReservationTimeout: time.Second})
				if err := c.s.SubmitJob(context.Background(), withSeconds(job("l", 2, freeTasks(tt.tasks)...), 100)); err != nil {
					t.Fatal(err)
				}
				c.waitAccepted(t, "l", 2*tt.tasks)
				c.s.Sweep(time.Now().Add(time.Hour))
				c.waitAccepted(t, "l", tt.wantAfter)
				synctest.Wait()
				if got := c.s.Stats().Reprobes; got != tt.reprobes {
					t.Errorf("%d rounds of extra reservations, want %d", got, tt.reprobes)
				}
				nodes, _ := c.reservedOn("l")
				for i := range nodes {
					if part.ShortOnly(shortjobs.NodeHash(fmt.Sprintf("nm%d", i))) {
						t.Errorf("long job's reservations on nodes %v, one of them short-only (nm%d)", nodes, i)
					}
				}
				if got := c.accepted("l"); got != tt.wantAfter {
					t.Errorf("%d reservations after the sweep, want %d", got, tt.wantAfter)
				}
			})
		})
	}
}
