package scheduler

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sparrowfleet/sparrow/core/shortjobs"
	"github.com/sparrowfleet/sparrow/thrift/gen-go/sparrowrpc"
)

// Every call site places through the whole pipeline: under the
// long-task-aware policy a long job's reservations, whichever decision
// places them (submission, re-placement after failed enqueues, a held
// call's round, the reservation-timeout sweep, steering of stranded
// requests, locality relaxation),
// never go to the short-only share while general node monitors can take
// them. Each case also checks that its site did place reservations, so
// that it cannot pass by placing none.
func TestEverySitePlacesThroughThePipeline(t *testing.T) {
	policy := &shortjobs.Config{Cutoff: 10, ShortShare: 0.3, StarveLimit: 4}
	shortOnly := shortOnlyOf(pipelineNodes(), policy.ShortShare)
	general := except(10, shortOnly...)
	long := func(id string, tasks ...*sparrowrpc.TTaskSpec) *sparrowrpc.TSchedulingRequest {
		return withSeconds(job(id, 2, tasks...), 100)
	}
	tests := []struct {
		name string
		cfg  Config
		// run places job "l" through the site and checks the site did.
		run func(t *testing.T, c *cluster)
	}{
		{"submission", Config{}, func(t *testing.T, c *cluster) {
			if err := c.s.SubmitJob(context.Background(), long("l", freeTasks(2)...)); err != nil {
				t.Fatal(err)
			}
			c.waitAccepted(t, "l", 4)
		}},
		{"re-placement after failed enqueues", Config{}, func(t *testing.T, c *cluster) {
			// One general node monitor is up: of four reservations on
			// distinct nodes at least three fail, and their tasks are
			// placed again.
			for _, i := range general[1:] {
				c.nms[i].stop()
			}
			if err := c.s.SubmitJob(context.Background(), long("l", freeTasks(2)...)); err != nil {
				t.Fatal(err)
			}
			c.hub.waitUntil(t, "the tasks re-placed on the node monitor that is up", func() bool {
				return c.s.Stats().Reprobes > 0 && c.nms[general[0]].acceptedFor("l") >= 2
			})
		}},
		{"a held call's rounds", Config{MaxHeldJobs: 4, MaxHold: time.Minute}, func(t *testing.T, c *cluster) {
			// Every general node monitor refuses as full at first: the
			// call is held and its rounds place the refused reservations
			// again, on general node monitors alone.
			for _, i := range general {
				c.nms[i].refuse.Store(true)
			}
			call := submitAsync(c, long("l", freeTasks(2)...))
			c.hub.waitUntil(t, "the call to be held and re-placed twice", func() bool {
				st := c.s.Stats()
				return st.Hold.Held == 1 && st.Hold.Rounds >= 2
			})
			for _, i := range general {
				c.nms[i].refuse.Store(false)
			}
			if err := waitAnswer(t, call); err != nil {
				t.Fatalf("held call: %v", err)
			}
		}},
		{"the reservation-timeout sweep", Config{ReservationTimeout: time.Second}, func(t *testing.T, c *cluster) {
			if err := c.s.SubmitJob(context.Background(), long("l", freeTasks(1)...)); err != nil {
				t.Fatal(err)
			}
			c.waitAccepted(t, "l", 2)
			c.s.Sweep(time.Now().Add(time.Hour))
			c.waitAccepted(t, "l", 4)
		}},
		{"steering of stranded requests", Config{SteerAfter: time.Second, ReservationTimeout: -1}, func(t *testing.T, c *cluster) {
			// Every node monitor serves the user (a short job's tasks,
			// one on each), so only the class and the holders decide
			// where the stranded long job's extra reservations go.
			if err := c.s.SubmitJob(context.Background(), withSeconds(job("warm", 1, freeTasks(10)...), 1)); err != nil {
				t.Fatal(err)
			}
			c.waitAccepted(t, "warm", 10)
			for _, nm := range c.nms {
				if got := len(c.getTask(t, "warm", nm)); got != 1 {
					t.Fatalf("%d tasks handed to %s, want 1", got, nm.name)
				}
			}
			if err := c.s.SubmitJob(context.Background(), withSeconds(job("l", 1, freeTasks(3)...), 100)); err != nil {
				t.Fatal(err)
			}
			c.waitAccepted(t, "l", 3)
			c.s.Sweep(time.Now().Add(1100 * time.Millisecond))
			c.waitAccepted(t, "l", 6)
			if got := c.s.Stats().Steered; got != 3 {
				t.Fatalf("steered %d reservations, want 3", got)
			}
		}},
		{"locality relaxation", Config{ReservationTimeout: -1}, func(t *testing.T, c *cluster) {
			t0 := time.Now()
			clk := &clock{t: t0}
			c.s.now = clk.now
			const delay = 100 * time.Millisecond
			var tasks []*sparrowrpc.TTaskSpec
			for k, i := range general[:3] {
				tasks = append(tasks, relaxing(string(rune('a'+k)), delay, c.nms[i].name))
			}
			if err := c.s.SubmitJob(context.Background(), long("l", tasks...)); err != nil {
				t.Fatal(err)
			}
			c.waitAccepted(t, "l", 6)
			clk.set(t0.Add(2 * delay))
			c.s.Relax(t0.Add(2 * delay))
			c.waitAccepted(t, "l", 12)
			if st := c.s.Stats().Locality; st.WidenedClusterByDelay != 3 {
				t.Fatalf("locality stats %+v, want 3 tasks widened to the cluster", st)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				cfg := tt.cfg
				cfg.NoOffers, cfg.ShortJobs = true, policy
				c := awareClusterWith(t, 10, cfg)
				tt.run(t, c)
				synctest.Wait()
				for _, i := range shortOnly {
					if n := c.nms[i].attemptsFor("l"); n > 0 {
						t.Errorf("%d reservations of the long job sent to short-only node monitor nm%d", n, i)
					}
				}
			})
		})
	}
}
