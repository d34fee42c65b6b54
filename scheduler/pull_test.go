package scheduler

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sparrowfleet/sparrow/core/placement"
	"github.com/sparrowfleet/sparrow/core/shortjobs"
	"github.com/sparrowfleet/sparrow/internal/rpc"
	"github.com/sparrowfleet/sparrow/thrift/gen-go/sparrowrpc"
)

const otherApp = "other"

var pullCfg = &shortjobs.Config{Cutoff: 10, StarveLimit: 4}

// pullCluster is an awareCluster of n nodes answering pulls after
// PullAfter 1s; the nodes of also (indexes) host otherApp as well.
func pullCluster(t *testing.T, n int, also ...int) *cluster {
	t.Helper()
	c := awareClusterWith(t, n, Config{NoOffers: true, ShortJobs: pullCfg, PullAfter: time.Second})
	for _, i := range also {
		c.view.byApp[otherApp] = append(c.view.byApp[otherApp], c.nms[i].node(i))
	}
	return c
}

// sweepWork is PullSweep's advert work and whether the advert changed.
func sweepWork(s *Scheduler, now time.Time) (float64, bool) {
	adv, changed := s.PullSweep(now)
	return adv.Work, changed
}

// pull sends nm's pull to the scheduler.
func (c *cluster) pull(t *testing.T, nm *fakeNM) []*sparrowrpc.TTaskLaunchSpec {
	t.Helper()
	return c.getTask(t, shortjobs.PullRequestID(schedAddr), nm)
}

// A short job joins the backlog once it has waited PullAfter with tasks
// unlaunched; the advert is its least remaining work rounded up to a
// power of two, changes as tasks are handed out, and falls to none when
// the backlog empties. Long jobs never join.
func TestPullBacklogAdvert(t *testing.T) {
	type step struct {
		wait    time.Duration // fake time to let pass first
		handOut int           // tasks of the job then handed out by getTask
		advert  float64
		changed bool
	}
	tests := []struct {
		name  string
		sec   float64
		tasks int
		steps []step
	}{
		{"a short job joins after the wait and leaves when launched", 1, 5, []step{
			{wait: 500 * time.Millisecond, advert: 0, changed: false},
			{wait: 500 * time.Millisecond, advert: 8, changed: true},
			{advert: 8, changed: false},
			{handOut: 1, advert: 4, changed: true},
			{handOut: 1, advert: 4, changed: false},
			{handOut: 1, advert: 2, changed: true},
			{handOut: 2, advert: 0, changed: true},
		}},
		{"a short job launched before the wait never joins", 1, 2, []step{
			{handOut: 2},
			{wait: 2 * time.Second, advert: 0, changed: false},
		}},
		{"a long job never joins", 100, 3, []step{
			{wait: 5 * time.Second, advert: 0, changed: false},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				c := pullCluster(t, 8)
				if err := c.s.SubmitJob(context.Background(), withSeconds(job("j", 1, freeTasks(tt.tasks)...), tt.sec)); err != nil {
					t.Fatal(err)
				}
				c.waitAccepted(t, "j", tt.tasks)
				holders := c.holders("j")
				for i, st := range tt.steps {
					time.Sleep(st.wait)
					got := c.getTaskOnEach(t, "j", holders[:st.handOut])
					holders = holders[st.handOut:]
					if len(got) != st.handOut {
						t.Fatalf("step %d: handed out %v, want %d tasks", i, got, st.handOut)
					}
					w, changed := sweepWork(c.s, time.Now())
					if w != st.advert || changed != st.changed {
						t.Fatalf("step %d: advert %v changed %v, want %v %v", i, w, changed, st.advert, st.changed)
					}
				}
			})
		})
	}
}

// The advert names the apps with a backlogged job: an app joins when a
// job of it joins the backlog and leaves when its last backlogged job
// has every task handed out; the advert is said changed when its apps
// change, even if its work does not.
func TestPullAdvertApps(t *testing.T) {
	type submit struct {
		id, app string
		tasks   int // of 1 s each
	}
	type step struct {
		submit  []submit
		wait    time.Duration
		handOut string // a job each of whose reservations then gets a task
		work    float64
		apps    []string
		changed bool
	}
	tests := []struct {
		name  string
		steps []step
	}{
		{"a second app joins and drains first", []step{
			{submit: []submit{{"a", app, 1}}, wait: time.Second, work: 1, apps: []string{app}, changed: true},
			{submit: []submit{{"b", otherApp, 2}}, work: 1, apps: []string{app}},
			{wait: time.Second, work: 1, apps: []string{otherApp, app}, changed: true},
			{work: 1, apps: []string{otherApp, app}},
			{handOut: "b", work: 1, apps: []string{app}, changed: true},
			{handOut: "a", work: 0, changed: true},
			{wait: time.Second, work: 0},
		}},
		{"the app with the least work drains, the other stays", []step{
			{submit: []submit{{"a", app, 1}, {"b", otherApp, 4}}, wait: time.Second, work: 1, apps: []string{otherApp, app}, changed: true},
			{handOut: "a", work: 4, apps: []string{otherApp}, changed: true},
			{handOut: "b", work: 0, changed: true},
		}},
		{"jobs of one app come and go: the apps stay", []step{
			{submit: []submit{{"a", app, 2}}, wait: time.Second, work: 2, apps: []string{app}, changed: true},
			{submit: []submit{{"b", app, 1}}, wait: time.Second, work: 1, apps: []string{app}, changed: true},
			{handOut: "b", work: 2, apps: []string{app}, changed: true},
			{submit: []submit{{"c", app, 2}}, wait: time.Second, work: 2, apps: []string{app}},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				c := pullCluster(t, 4, 3)
				for i, st := range tt.steps {
					for _, j := range st.submit {
						r := withSeconds(job(j.id, 1, freeTasks(j.tasks)...), 1)
						r.App = j.app
						if err := c.s.SubmitJob(context.Background(), r); err != nil {
							t.Fatal(err)
						}
						c.waitAccepted(t, j.id, j.tasks)
					}
					time.Sleep(st.wait)
					if st.handOut != "" {
						holders := c.holders(st.handOut)
						if got := c.getTaskOnEach(t, st.handOut, holders); len(got) != len(holders) {
							t.Fatalf("step %d: handed out %v for %d reservations", i, got, len(holders))
						}
					}
					adv, changed := c.s.PullSweep(time.Now())
					if adv.Work != st.work || !slices.Equal(adv.Apps, st.apps) || changed != st.changed {
						t.Fatalf("step %d: advert %v for %v, changed %v; want %v for %v, changed %v",
							i, adv.Work, adv.Apps, changed, st.work, st.apps, st.changed)
					}
				}
			})
		})
	}
}

// Without pulls the scheduler keeps no backlog and answers a pull with
// nothing.
func TestPullOff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := awareCluster(t, 4, pullCfg)
		if err := c.s.SubmitJob(context.Background(), withSeconds(job("j", 1, freeTasks(4)...), 1)); err != nil {
			t.Fatal(err)
		}
		c.waitAccepted(t, "j", 4)
		time.Sleep(5 * time.Second)
		if w, changed := sweepWork(c.s, time.Now()); w != 0 || changed {
			t.Fatalf("advert %v changed %v without pulls", w, changed)
		}
		if got := c.pull(t, c.nms[0]); len(got) != 0 {
			t.Fatalf("pull without pulls got %v", got)
		}
	})
}

// A pull gets a task of the backlogged job with the least remaining work
// among the apps the pulling node hosts, named with its request id and
// app, tracked as running there (a lost node's pulled task is reported
// lost); with nothing the node may run backlogged, it gets nothing.
func TestPullAnswer(t *testing.T) {
	tests := []struct {
		name     string
		node     int // the pulling node; node 3 hosts otherApp too
		wantReq  string
		wantApp  string
		wantLeft int32
	}{
		{"a node of one app gets its app's job", 0, "big", app, 3},
		{"a node of two apps gets the job with less work", 3, "small", otherApp, 1},
		{"a node the view does not know gets nothing", -1, "", "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				c := pullCluster(t, 4, 3)
				fe := c.startFrontendRecorder(t)
				ctx := context.Background()
				if err := c.s.SubmitJob(ctx, withSeconds(job("big", 1, freeTasks(4)...), 1)); err != nil {
					t.Fatal(err)
				}
				small := withSeconds(job("small", 1, freeTasks(2)...), 1)
				small.App = otherApp
				if err := c.s.SubmitJob(ctx, small); err != nil {
					t.Fatal(err)
				}
				c.waitAccepted(t, "big", 4)
				c.waitAccepted(t, "small", 2)
				time.Sleep(time.Second)
				if w, _ := sweepWork(c.s, time.Now()); w != 2 {
					t.Fatalf("advert %v, want 2 (small's work)", w)
				}
				nm := startNM(t, c.hub, c.net, "stranger")
				if tt.node >= 0 {
					nm = c.nms[tt.node]
				}
				got := c.pull(t, nm)
				if tt.wantReq == "" {
					if len(got) != 0 {
						t.Fatalf("pull got %v, want nothing", got)
					}
					if st := c.s.Stats(); st.PullsAnswered != 1 || st.PulledTasks != 0 {
						t.Fatalf("stats %+v", st)
					}
					return
				}
				if len(got) != 1 {
					t.Fatalf("pull got %v, want one task", got)
				}
				s := got[0]
				if s.GetRequestId() != tt.wantReq || s.GetAppId() != tt.wantApp || s.GetRemainingTasks() != tt.wantLeft {
					t.Fatalf("pulled %s of %s/%s with %d left, want %s/%s with %d left",
						s.TaskId, s.GetRequestId(), s.GetAppId(), s.GetRemainingTasks(), tt.wantReq, tt.wantApp, tt.wantLeft)
				}
				if st := c.s.Stats(); st.PullsAnswered != 1 || st.PulledTasks != 1 || st.RunningTracked != 1 {
					t.Fatalf("stats %+v: want one pulled task tracked running", st)
				}
				if tt.wantApp != app {
					return
				}
				c.s.NodeLost(rpc.HostPortString(nm.hp))
				c.hub.waitUntil(t, "the lost report", func() bool { return fe.count() == 1 })
				if m := fe.msgs[0]; fe.stat[0] != sparrowrpc.STATUS_TASK_LOST || m.RequestId != tt.wantReq || m.TaskId != s.TaskId {
					t.Fatalf("message %+v status %d, want the pulled task reported lost", m, fe.stat[0])
				}
			})
		})
	}
}

// A pull and a reservation's getTask racing for a job's last task hand it
// out once: one gets it, the other nothing, whichever order they run in.
func TestPullRacesReservationForLastTask(t *testing.T) {
	for round := range 8 {
		t.Run(fmt.Sprint(round), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				c := pullCluster(t, 4)
				if err := c.s.SubmitJob(context.Background(), withSeconds(job("j", 1, freeTasks(1)...), 1)); err != nil {
					t.Fatal(err)
				}
				c.waitAccepted(t, "j", 1)
				holder := c.holders("j")[0]
				var puller *fakeNM
				for _, nm := range c.nms {
					if nm != holder {
						puller = nm
						break
					}
				}
				time.Sleep(time.Second)
				if w, _ := sweepWork(c.s, time.Now()); w != 1 {
					t.Fatalf("advert %v, want 1", w)
				}
				raceForLastTask(t, c, holder, puller, round%2 == 1)
			})
		})
	}
}

// pullJob is a job a pull test submits, with tasks of sec seconds.
type pullJob struct {
	id    string
	sec   float64
	rack  string // if set, the job constraint rack = rack
	tasks []*sparrowrpc.TTaskSpec
}

func (j pullJob) request() *sparrowrpc.TSchedulingRequest {
	r := withSeconds(job(j.id, 0, j.tasks...), j.sec)
	if j.rack != "" {
		r.Constraints = []*sparrowrpc.TConstraint{{Key: placement.RackAttr, Op: placement.OpEq, Values: []string{j.rack}}}
	}
	return r
}

func freeTask(id string) *sparrowrpc.TTaskSpec { return &sparrowrpc.TTaskSpec{TaskId: id} }

func onRacks(id string, racks ...string) *sparrowrpc.TTaskSpec {
	return &sparrowrpc.TTaskSpec{TaskId: id, Preference: &sparrowrpc.TPlacementPreference{Racks: racks}}
}

// Jobs with constraints or placement preferences join the backlog, and a
// pull gets only a task its node may run, as a reservation there would:
// on a node satisfying the job's constraints, a task whose preferences
// allow the node or one without preferences. A pull that finds none for
// its node gets nothing and leaves the jobs backlogged for other nodes;
// a node passes over the least-work job it may not run for the next.
// Nodes nm0 and nm2 are in rack r0, nm1 and nm3 in r1.
func TestPullConstrained(t *testing.T) {
	type step struct {
		wait time.Duration // fake time to let pass, then Relax, first
		node int           // the pulling node
		want string        // "job/task" handed out, or "" for nothing
	}
	tests := []struct {
		name  string
		jobs  []pullJob
		steps []step
		final float64 // the advert once the steps are done
	}{
		{"a job constraint admits only the nodes that satisfy it",
			[]pullJob{{id: "j", sec: 1, rack: "r0", tasks: freeTasks(2)}},
			[]step{{node: 1}, {node: 3}, {node: 0, want: "j/t0"}, {node: 2, want: "j/t1"}}, 0},
		{"a task preferring a node goes only to it",
			[]pullJob{{id: "j", sec: 1, tasks: []*sparrowrpc.TTaskSpec{onNodes("a", "nm2")}}},
			[]step{{node: 0}, {node: 1}, {node: 3}, {node: 2, want: "j/a"}}, 0},
		{"a task preferring a rack goes only to its nodes",
			[]pullJob{{id: "j", sec: 1, tasks: []*sparrowrpc.TTaskSpec{onRacks("a", "r1")}}},
			[]step{{node: 0}, {node: 2}, {node: 3, want: "j/a"}}, 0},
		{"a mixed job gives its free task anywhere and its preferred task only where preferred",
			[]pullJob{{id: "j", sec: 1, tasks: []*sparrowrpc.TTaskSpec{onNodes("a", "nm2"), freeTask("b")}}},
			[]step{{node: 1, want: "j/b"}, {node: 1}, {node: 0}, {node: 2, want: "j/a"}}, 0},
		{"a preferred node takes the preferred task first",
			[]pullJob{{id: "j", sec: 1, tasks: []*sparrowrpc.TTaskSpec{freeTask("b"), onNodes("a", "nm2")}}},
			[]step{{node: 2, want: "j/a"}, {node: 2, want: "j/b"}}, 0},
		{"a node passes over the least-work job it may not run, which stays backlogged",
			[]pullJob{
				{id: "small", sec: 1, tasks: []*sparrowrpc.TTaskSpec{onNodes("a", "nm2")}},
				{id: "big", sec: 1, tasks: freeTasks(3)},
			},
			[]step{{node: 1, want: "big/t0"}, {node: 3, want: "big/t1"}, {node: 2, want: "small/a"}, {node: 2, want: "big/t2"}}, 0},
		{"a constrained job with less work goes first where it may run",
			[]pullJob{
				{id: "small", sec: 1, rack: "r1", tasks: freeTasks(1)},
				{id: "big", sec: 1, tasks: freeTasks(2)},
			},
			[]step{{node: 3, want: "small/t0"}, {node: 3, want: "big/t0"}}, 1},
		{"a relaxable preference holds as a strict one until it widens",
			[]pullJob{{id: "j", sec: 1, tasks: []*sparrowrpc.TTaskSpec{relaxing("a", time.Minute, "nm2")}}},
			[]step{{node: 0}, {node: 1}, {node: 2, want: "j/a"}}, 0},
		{"a relaxable preference widened to the cluster admits any node, as its reservations do",
			[]pullJob{{id: "j", sec: 1, tasks: []*sparrowrpc.TTaskSpec{relaxing("a", time.Second, "nm2"), relaxing("b", time.Minute, "nm2")}}},
			[]step{{node: 0}, {wait: 2 * time.Second, node: 0, want: "j/a"}, {node: 0}, {node: 2, want: "j/b"}}, 0},
		{"a long job never answers a pull, whatever it allows",
			[]pullJob{{id: "long", sec: 100, tasks: freeTasks(2)}, {id: "j", sec: 1, tasks: []*sparrowrpc.TTaskSpec{onNodes("a", "nm2")}}},
			[]step{{node: 0}, {node: 2, want: "j/a"}, {node: 2}}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				c := pullCluster(t, 4, 3)
				for _, j := range tt.jobs {
					if err := c.s.SubmitJob(context.Background(), j.request()); err != nil {
						t.Fatalf("submit %s: %v", j.id, err)
					}
				}
				time.Sleep(time.Second)
				advert, _ := sweepWork(c.s, time.Now())
				if advert == 0 {
					t.Fatal("nothing backlogged")
				}
				pulled := 0
				for i, st := range tt.steps {
					if st.wait > 0 {
						time.Sleep(st.wait)
						c.s.Relax(time.Now())
					}
					got := c.pull(t, c.nms[st.node])
					desc := ""
					if len(got) == 1 {
						desc = got[0].GetRequestId() + "/" + got[0].TaskId
						pulled++
					}
					if desc != st.want {
						t.Fatalf("step %d: nm%d pulled %q, want %q", i, st.node, desc, st.want)
					}
					w, _ := sweepWork(c.s, time.Now())
					if desc == "" && w != advert {
						t.Fatalf("step %d: advert %v after an empty pull, was %v: the backlog changed", i, w, advert)
					}
					advert = w
				}
				if advert != tt.final {
					t.Fatalf("advert %v after the steps, want %v", advert, tt.final)
				}
				if st := c.s.Stats(); st.PullsAnswered != uint64(len(tt.steps)) || st.PulledTasks != uint64(pulled) {
					t.Fatalf("stats %+v: want %d pulls answered, %d with a task", st, len(tt.steps), pulled)
				}
			})
		})
	}
}

// A pull from a node that holds a reservation of the job it is answered
// with leaves that reservation standing: the node's getTask for the job
// still gets a task, without a sticky fetch.
func TestPullLeavesTheNodesReservation(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := pullCluster(t, 4)
		if err := c.s.SubmitJob(context.Background(), withSeconds(job("j", 1, freeTasks(2)...), 1)); err != nil {
			t.Fatal(err)
		}
		c.waitAccepted(t, "j", 2)
		holder := c.holders("j")[0]
		time.Sleep(time.Second)
		sweepWork(c.s, time.Now())
		if got := c.pull(t, holder); len(got) != 1 || got[0].TaskId != "t0" {
			t.Fatalf("pull got %v, want t0", got)
		}
		if got := c.getTask(t, "j", holder); len(got) != 1 || got[0].TaskId != "t1" {
			t.Fatalf("getTask after the pull got %v, want t1", got)
		}
		if st := c.s.Stats(); st.StickyFetches != 0 || st.TasksLaunched != 2 {
			t.Fatalf("stats %+v: want both tasks launched, none by a sticky fetch", st)
		}
	})
}

// A pull and a reservation's getTask racing for a job's last constrained
// task hand it out once, whichever order they run in; a pull from a node
// the task does not allow gets nothing either way.
func TestPullRacesReservationForLastConstrainedTask(t *testing.T) {
	for round := range 8 {
		t.Run(fmt.Sprint(round), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				c := pullCluster(t, 4)
				j := withSeconds(job("j", 2, onNodes("a", "nm0", "nm1", "nm2")), 1)
				if err := c.s.SubmitJob(context.Background(), j); err != nil {
					t.Fatal(err)
				}
				c.waitAccepted(t, "j", 2)
				holder := c.holders("j")[0]
				var puller *fakeNM
				for _, nm := range c.nms[:3] {
					if nm.acceptedFor("j") == 0 {
						puller = nm
					}
				}
				if puller == nil {
					t.Fatal("every preferred node holds a reservation")
				}
				time.Sleep(time.Second)
				if w, _ := sweepWork(c.s, time.Now()); w != 1 {
					t.Fatalf("advert %v, want 1", w)
				}
				if got := c.pull(t, c.nms[3]); len(got) != 0 {
					t.Fatalf("nm3, which the task does not allow, pulled %v", got)
				}
				raceForLastTask(t, c, holder, puller, round%2 == 1)
			})
		})
	}
}

// TestPullMatchesAScan drives a scheduler answering pulls with random
// submissions (short and long, of two apps, with job constraints, node
// and rack preferences, strict and relaxable), getTask calls, pulls,
// sweeps and waits, and checks it against an oracle that keeps the jobs
// in a plain list and scans it:
//   - after each sweep, the backlog holds exactly the short jobs with
//     unlaunched tasks submitted PullAfter or more before the sweep, each
//     with its remaining work, and the advert is the least of them
//     (rounded) with the apps of those jobs, said changed exactly when
//     either differs from the last sweep's;
//   - each pull gets the task Assign gives a reservation on its node of
//     the backlogged job with the least remaining work that has a task
//     the node may run (the node hosts the job's app and satisfies its
//     constraint, and a task's preferences allow it), or nothing if no
//     backlogged job has one;
//   - no task is handed out twice, and none to a node it does not allow.
//
// Nodes 3 and 4 host otherApp too; node i is nm<i>, in rack r<i%2>.
func TestPullMatchesAScan(t *testing.T) {
	type task struct {
		id       string
		nodes    []string
		racks    []string
		launched bool
	}
	type oJob struct {
		id, app string
		est     float64
		short   bool
		rack    string
		at      time.Time
		tasks   []*task
	}
	const nodes = 6
	hosts := func(app string, i int) bool { return app == "spark" || i == 3 || i == 4 }
	rackOf := func(i int) string { return fmt.Sprintf("r%d", i%2) }
	allows := func(tk *task, i int) bool {
		if len(tk.nodes) == 0 && len(tk.racks) == 0 {
			return true
		}
		return slices.Contains(tk.nodes, fmt.Sprintf("nm%d", i)) || slices.Contains(tk.racks, rackOf(i))
	}
	unlaunched := func(j *oJob) int {
		n := 0
		for _, tk := range j.tasks {
			if !tk.launched {
				n++
			}
		}
		return n
	}
	// next is the task Assign gives a reservation on node i: the first
	// unlaunched task with preferences allowing i, else the first
	// unlaunched task without any.
	next := func(j *oJob, i int) *task {
		if !hosts(j.app, i) || (j.rack != "" && rackOf(i) != j.rack) {
			return nil
		}
		for _, tk := range j.tasks {
			if !tk.launched && (len(tk.nodes) > 0 || len(tk.racks) > 0) && allows(tk, i) {
				return tk
			}
		}
		for _, tk := range j.tasks {
			if !tk.launched && len(tk.nodes) == 0 && len(tk.racks) == 0 {
				return tk
			}
		}
		return nil
	}
	for seed := range uint64(16) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				rng := rand.New(rand.NewPCG(seed, 3))
				c := pullCluster(t, nodes, 3, 4)
				ctx := context.Background()
				var jobs []*oJob
				byID := map[string]*oJob{}
				var swept time.Time // the last sweep
				var last PullAdvert // the advert it returned
				inBacklog := func(j *oJob) bool {
					return j.short && !swept.IsZero() && !swept.Before(j.at.Add(time.Second)) && unlaunched(j) > 0
				}
				handed := func(j *oJob, spec *sparrowrpc.TTaskLaunchSpec, i int, how string) {
					for _, tk := range j.tasks {
						if tk.id == spec.TaskId {
							if tk.launched {
								t.Fatalf("%s: task %s/%s handed out twice", how, j.id, tk.id)
							}
							if !allows(tk, i) || !hosts(j.app, i) || (j.rack != "" && rackOf(i) != j.rack) {
								t.Fatalf("%s: task %s/%s handed to nm%d, which it does not allow", how, j.id, tk.id, i)
							}
							tk.launched = true
							return
						}
					}
					t.Fatalf("%s: unknown task %s of %s", how, spec.TaskId, j.id)
				}
				for op := range 150 {
					switch k := rng.IntN(20); {
					case k < 6: // submit
						n := len(jobs)
						j := &oJob{id: fmt.Sprintf("j%d", n), app: "spark", short: rng.IntN(10) < 7, at: time.Now()}
						if rng.IntN(10) < 3 {
							j.app = otherApp
						}
						j.est = 1 + float64(n)/1000
						if !j.short {
							j.est += 100
						}
						var eligible []int
						if rng.IntN(4) == 0 {
							j.rack = rackOf(rng.IntN(2))
						}
						for i := range nodes {
							if hosts(j.app, i) && (j.rack == "" || rackOf(i) == j.rack) {
								eligible = append(eligible, i)
							}
						}
						req := withSeconds(job(j.id, 0), j.est)
						req.App = j.app
						if j.rack != "" {
							req.Constraints = []*sparrowrpc.TConstraint{{Key: placement.RackAttr, Op: placement.OpEq, Values: []string{j.rack}}}
						}
						for ti := range 1 + rng.IntN(4) {
							tk := &task{id: fmt.Sprintf("t%d", ti)}
							spec := &sparrowrpc.TTaskSpec{TaskId: tk.id}
							switch rng.IntN(6) {
							case 0:
								tk.nodes = []string{fmt.Sprintf("nm%d", eligible[rng.IntN(len(eligible))])}
							case 1:
								tk.nodes = []string{fmt.Sprintf("nm%d", eligible[rng.IntN(len(eligible))]), fmt.Sprintf("nm%d", eligible[rng.IntN(len(eligible))])}
							case 2:
								tk.racks = []string{rackOf(eligible[rng.IntN(len(eligible))])}
							}
							if len(tk.nodes)+len(tk.racks) > 0 {
								spec.Preference = &sparrowrpc.TPlacementPreference{Nodes: tk.nodes, Racks: tk.racks}
								if rng.IntN(2) == 0 {
									spec.Preference.DelayThreshold = int32(time.Hour / time.Millisecond) // relaxable, never due here
								}
							}
							req.Tasks = append(req.Tasks, spec)
							j.tasks = append(j.tasks, tk)
						}
						if err := c.s.SubmitJob(ctx, req); err != nil {
							t.Fatalf("op %d: submit %s: %v", op, j.id, err)
						}
						jobs = append(jobs, j)
						byID[j.id] = j
					case k < 9: // wait
						time.Sleep(time.Duration(50+rng.IntN(700)) * time.Millisecond)
					case k < 12: // a getTask from a node that may hold a reservation of the job
						var live []*oJob
						for _, j := range jobs {
							if unlaunched(j) > 0 {
								live = append(live, j)
							}
						}
						if len(live) == 0 {
							continue
						}
						j := live[rng.IntN(len(live))]
						i := rng.IntN(nodes)
						if !hosts(j.app, i) || (j.rack != "" && rackOf(i) != j.rack) {
							continue // no reservation of j goes there
						}
						want := next(j, i)
						got := c.getTask(t, j.id, c.nms[i])
						if len(got) == 1 {
							if want == nil || got[0].TaskId != want.id {
								t.Fatalf("op %d: getTask(%s) from nm%d got %s, want %v", op, j.id, i, got[0].TaskId, want)
							}
							handed(j, got[0], i, "getTask")
						}
					case k < 16: // a pull
						i := rng.IntN(nodes)
						var best *oJob
						var bestTask *task
						for _, j := range jobs {
							if !inBacklog(j) {
								continue
							}
							if tk := next(j, i); tk != nil && (best == nil || float64(unlaunched(j))*j.est < float64(unlaunched(best))*best.est) {
								best, bestTask = j, tk
							}
						}
						got := c.pull(t, c.nms[i])
						if best == nil {
							if len(got) != 0 {
								t.Fatalf("op %d: nm%d pulled %s/%s, want nothing", op, i, got[0].GetRequestId(), got[0].TaskId)
							}
							continue
						}
						if len(got) != 1 || got[0].GetRequestId() != best.id || got[0].TaskId != bestTask.id {
							desc := "nothing"
							if len(got) == 1 {
								desc = got[0].GetRequestId() + "/" + got[0].TaskId
							}
							t.Fatalf("op %d: nm%d pulled %s, want %s/%s", op, i, desc, best.id, bestTask.id)
						}
						handed(best, got[0], i, "pull")
					default: // a sweep
						swept = time.Now()
						adv, changed := c.s.PullSweep(swept)
						want := map[string]float64{}
						var wantApps []string
						least, ok := 0.0, false
						for _, j := range jobs {
							if inBacklog(j) {
								work := float64(unlaunched(j)) * j.est
								want[j.id] = work
								if !ok || work < least {
									least, ok = work, true
								}
								if !slices.Contains(wantApps, j.app) {
									wantApps = append(wantApps, j.app)
								}
							}
						}
						slices.Sort(wantApps)
						if aw := shortjobs.AdvertWork(least, ok); adv.Work != aw || !slices.Equal(adv.Apps, wantApps) {
							t.Fatalf("op %d: advert %v for apps %v, want %v for %v", op, adv.Work, adv.Apps, aw, wantApps)
						}
						if wantChanged := adv.Work != last.Work || !slices.Equal(adv.Apps, last.Apps); changed != wantChanged {
							t.Fatalf("op %d: advert %+v after %+v: changed %v, want %v", op, adv, last, changed, wantChanged)
						}
						last = adv
						got := map[string]float64{}
						c.s.mu.Lock()
						for id, r := range c.s.pull.in {
							if c.s.book.live(r) && r.Unlaunched() > 0 {
								got[id] = pullWork(r)
								if bl := c.s.pull.apps[r.app]; bl == nil || !bl.Has(id) {
									t.Errorf("op %d: %s is backlogged but not in its app's backlog", op, id)
								}
							}
						}
						c.s.mu.Unlock()
						if !maps.Equal(got, want) {
							t.Fatalf("op %d: backlog %v, want %v", op, got, want)
						}
					}
				}
			})
		})
	}
}

// A backlogged job that ended with tasks unlaunched (given up) is dropped
// lazily; if a job of another app reuses its id meanwhile, a pull from a
// node of the first app still gets nothing of it.
func TestPullIDReusedByAnotherApp(t *testing.T) {
	nodeA := placement.Node{Addr: "127.0.0.1:30001", Host: "127.0.0.1", Name: "a0"}
	nodeB := placement.Node{Addr: "127.0.0.1:30002", Host: "127.0.0.1", Name: "b0"}
	view := &fakeView{byApp: map[string][]placement.Node{"a": {nodeA}, "b": {nodeB}}}
	net := newMemNet(rpc.Config{})
	s, err := newWith(Config{Address: schedAddr, Seed: 1, ReservationTimeout: -1, ShortJobs: pullCfg, PullAfter: time.Second}, view, net, net)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	t0 := time.Now()
	install := func(app string, at time.Time) *request {
		r := &request{
			Request: placement.NewRequest("x", []placement.Task{{ID: "t0"}}), app: app, ratio: 1,
			specs: freeTasks(1), user: &sparrowrpc.TUserGroupInfo{}, submitted: at,
			short: shortJob{class: shortjobs.Short, est: 1, work: 1},
		}
		s.mu.Lock()
		s.book.add(r)
		s.pullSubmittedLocked(r)
		s.mu.Unlock()
		return r
	}
	first := install("a", t0)
	if w, _ := sweepWork(s, t0.Add(time.Second)); w != 1 {
		t.Fatalf("advert %v, want 1", w)
	}
	s.mu.Lock()
	s.book.remove(first) // given up, tasks unlaunched
	s.mu.Unlock()
	install("b", t0.Add(time.Second))
	if w, _ := sweepWork(s, t0.Add(2*time.Second)); w != 1 {
		t.Fatalf("advert %v, want 1", w)
	}
	if got := s.answerPull(nodeA.Addr, 0); len(got) != 0 {
		t.Fatalf("a node of app a pulled %s of app %s", got[0].TaskId, got[0].GetAppId())
	}
	got := s.answerPull(nodeB.Addr, 0)
	if len(got) != 1 || got[0].GetAppId() != "b" || got[0].GetRequestId() != "x" {
		t.Fatalf("a node of app b pulled %v, want x's task", got)
	}
	if w, _ := sweepWork(s, t0.Add(3*time.Second)); w != 0 {
		t.Fatalf("advert %v after the last task, want 0", w)
	}
}

// Jobs that end with tasks unlaunched (given up) while backlogged, behind
// others, are dropped once the book has doubled since its last tidy, so
// that they are not kept for the scheduler's life.
func TestPullSweepTidiesEndedJobs(t *testing.T) {
	view := &fakeView{byApp: map[string][]placement.Node{}}
	net := newMemNet(rpc.Config{})
	s, err := newWith(Config{Address: schedAddr, Seed: 1, ReservationTimeout: -1, ShortJobs: pullCfg, PullAfter: time.Second}, view, net, net)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	t0 := time.Now()
	n := 0
	install := func(k int, at time.Time) []*request {
		var out []*request
		for range k {
			// Work grows with n: the jobs ended below are never at the
			// front of the backlog, where a sweep would drop them anyway.
			r := &request{
				Request: placement.NewRequest(fmt.Sprint("r", n), []placement.Task{{ID: "t0"}}), app: app, ratio: 1, submitted: at,
				short: shortJob{class: shortjobs.Short, est: 1 + float64(n)/1e4},
			}
			n++
			s.mu.Lock()
			s.book.add(r)
			s.pullSubmittedLocked(r)
			s.mu.Unlock()
			out = append(out, r)
		}
		return out
	}
	held := func() int {
		s.mu.Lock()
		defer s.mu.Unlock()
		return len(s.pull.in)
	}
	first := install(minPullTidy, t0)
	sweepWork(s, t0.Add(time.Second))
	if got := held(); got != minPullTidy {
		t.Fatalf("%d jobs held, want %d", got, minPullTidy)
	}
	s.mu.Lock()
	for _, r := range first[1:] {
		s.book.remove(r) // ended, tasks unlaunched
	}
	s.mu.Unlock()
	// Until the book doubles, the ended jobs behind the front stay.
	install(minPullTidy-1, t0.Add(time.Second))
	sweepWork(s, t0.Add(2*time.Second))
	if got := held(); got != 2*minPullTidy-1 {
		t.Fatalf("%d jobs held, want %d", got, 2*minPullTidy-1)
	}
	install(1, t0.Add(time.Second))
	w, _ := sweepWork(s, t0.Add(2*time.Second))
	if got := held(); got != minPullTidy+1 {
		t.Fatalf("%d jobs held after the tidy, want the %d live ones", got, minPullTidy+1)
	}
	if w != 1 {
		t.Fatalf("advert %v, want 1 (r0's work)", w)
	}
}

// raceForLastTask runs job "j"'s getTask from holder, which holds its
// reservation, and a pull from puller at once (the pull started first
// when pullFirst), and checks that its one task is handed out once and
// that the backlog advert then clears.
func raceForLastTask(t *testing.T, c *cluster, holder, puller *fakeNM, pullFirst bool) {
	t.Helper()
	var wg sync.WaitGroup
	var byRes, byPull []*sparrowrpc.TTaskLaunchSpec
	first, second := func() { byRes = c.getTask(t, "j", holder) }, func() { byPull = c.pull(t, puller) }
	if pullFirst {
		first, second = second, first
	}
	wg.Go(first)
	wg.Go(second)
	wg.Wait()
	if len(byRes)+len(byPull) != 1 {
		t.Fatalf("reservation got %v, pull got %v: want the one task handed out once", byRes, byPull)
	}
	if st := c.s.Stats(); st.TasksLaunched != 1 || st.ActiveRequests != 0 {
		t.Fatalf("stats %+v", st)
	}
	if w, changed := sweepWork(c.s, time.Now()); w != 0 || !changed {
		t.Fatalf("advert %v changed %v after the last task, want 0 changed", w, changed)
	}
}
