package scheduler

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

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
					w, changed := c.s.PullSweep(time.Now())
					if w != st.advert || changed != st.changed {
						t.Fatalf("step %d: advert %v changed %v, want %v %v", i, w, changed, st.advert, st.changed)
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
		if w, changed := c.s.PullSweep(time.Now()); w != 0 || changed {
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
				if w, _ := c.s.PullSweep(time.Now()); w != 2 {
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
				if w, _ := c.s.PullSweep(time.Now()); w != 1 {
					t.Fatalf("advert %v, want 1", w)
				}
				var wg sync.WaitGroup
				var byRes, byPull []*sparrowrpc.TTaskLaunchSpec
				first, second := func() { byRes = c.getTask(t, "j", holder) }, func() { byPull = c.pull(t, puller) }
				if round%2 == 1 {
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
				if w, changed := c.s.PullSweep(time.Now()); w != 0 || !changed {
					t.Fatalf("advert %v changed %v after the last task, want 0 changed", w, changed)
				}
			})
		})
	}
}
