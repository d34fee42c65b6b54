package scheduler

import (
	"context"
	"maps"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sparrowfleet/sparrow/core/shortjobs"
	"github.com/sparrowfleet/sparrow/thrift/gen-go/sparrowrpc"
)

// workSeen returns, for each node monitor, the remaining work of req in
// the updates it received after its first skip calls (skip[addr]), and
// sets skip to the calls seen.
func (c *cluster) workSeen(req string, skip map[string]int) map[string][]float64 {
	out := map[string][]float64{}
	for _, nm := range c.nms {
		calls := nm.workCalls()
		for _, call := range calls[skip[nm.addr]:] {
			for _, u := range call {
				if u.RequestId == req {
					out[nm.addr] = append(out[nm.addr], u.RemainingWork)
				}
			}
		}
		skip[nm.addr] = len(calls)
	}
	return out
}

// TestShortJobsWorkRefresh: under WorkRefresh, each time a job's
// unlaunched tasks enter another shortjobs.WorkStep the scheduler sends
// its remaining work to every node monitor still holding one of its
// reservations but the one that got the task; nothing when the count
// stays in its step, or the job has no estimate, or the rule is off. A
// node monitor that answers UNKNOWN_METHOD is not asked again.
func TestShortJobsWorkRefresh(t *testing.T) {
	const est = 2.0
	for _, tt := range []struct {
		name    string
		refresh bool
		seconds float64 // the job's stated estimate; 0: none
		lacking bool    // one holder lacks updateRemainingWork
	}{
		{"refresh", true, est, false},
		{"rule off", false, est, false},
		{"an older node monitor", true, est, true},
		{"no estimate", true, 0, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				cfg := &shortjobs.Config{Cutoff: 10, StarveLimit: 4, WorkRefresh: tt.refresh, Unestimated: shortjobs.UnestimatedByHistory}
				// Two reservations on each of four node monitors: the one
				// that gets a task still holds one.
				c := awareCluster(t, 4, cfg)
				req := job("j", 2, freeTasks(4)...)
				if tt.seconds > 0 {
					req = withSeconds(req, tt.seconds)
				}
				if err := c.s.SubmitJob(context.Background(), req); err != nil {
					t.Fatal(err)
				}
				c.waitAccepted(t, "j", 8)
				holding := map[string]int{}
				var order []*fakeNM
				for _, nm := range c.holders("j") {
					if holding[nm.addr] == 0 {
						order = append(order, nm)
					}
					holding[nm.addr]++
				}
				var old *fakeNM
				if tt.lacking {
					old, order = order[len(order)-1], order[:len(order)-1]
					c.net.lack(old.addr, methodUpdateRemainingWork)
				}
				skip := map[string]int{}
				wantSent, wantFailed := 0, 0
				for k := range 4 {
					nm := order[k%len(order)]
					if got := c.getTask(t, "j", nm); len(got) != 1 {
						t.Fatalf("getTask %d from %s got %v", k, nm.name, got)
					}
					holding[nm.addr]--
					time.Sleep(workRefreshWindow) // the updates' window closes
					synctest.Wait()
					left := 3 - k
					want := map[string][]float64{}
					if tt.refresh && tt.seconds > 0 && left > 0 && shortjobs.WorkStep(left) != shortjobs.WorkStep(left+1) {
						for addr, n := range holding {
							if n <= 0 || addr == nm.addr {
								continue
							}
							if old != nil && addr == old.addr {
								if k == 1 {
									wantFailed++ // asked once, then never again
								}
								continue
							}
							want[addr] = []float64{tt.seconds * float64(left)}
							wantSent++
						}
					}
					if got := c.workSeen("j", skip); !maps.EqualFunc(got, want, slices.Equal) {
						t.Fatalf("after task %d (%d left): updates %v, want %v", k+1, left, got, want)
					}
				}
				st := c.s.Stats()
				if int(st.WorkUpdatesSent) != wantSent || int(st.WorkUpdatesFailed) != wantFailed {
					t.Fatalf("stats: %d sent, %d failed; want %d, %d", st.WorkUpdatesSent, st.WorkUpdatesFailed, wantSent, wantFailed)
				}
				if tt.refresh && tt.seconds > 0 && wantSent == 0 {
					t.Fatal("the case sent no update: it tests nothing")
				}
			})
		})
	}
}

// TestShortJobsOverrunSendsWork: a job taken long by its overrun has its
// new remaining work (OverrunEstimate per unlaunched task) sent to every
// node monitor holding its reservations, under WorkRefresh only.
func TestShortJobsOverrunSendsWork(t *testing.T) {
	const cutoff = 10
	for _, refresh := range []bool{true, false} {
		t.Run(map[bool]string{true: "refresh", false: "rule off"}[refresh], func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				cfg := &shortjobs.Config{Cutoff: cutoff, StarveLimit: 4, Overrun: true, WorkRefresh: refresh}
				c := awareCluster(t, 8, cfg)
				if err := c.s.SubmitJob(context.Background(), job("u", 2, freeTasks(4)...)); err != nil {
					t.Fatal(err)
				}
				c.waitAccepted(t, "u", 8)
				hs := c.holders("u")
				if len(c.getTask(t, "u", hs[0])) != 1 {
					t.Fatal("first getTask got no task")
				}
				time.Sleep(workRefreshWindow)
				synctest.Wait()
				skip := map[string]int{}
				c.workSeen("u", skip)
				c.s.OverrunSweep(time.Now().Add(cutoff * time.Second))
				synctest.Wait()
				if got := c.workSeen("u", maps.Clone(skip)); len(got) > 0 {
					t.Fatalf("updates %v sent before their window closed", got)
				}
				time.Sleep(workRefreshWindow)
				synctest.Wait()
				if c.s.Stats().OverrunLong != 1 {
					t.Fatal("the job was not taken long")
				}
				want := map[string][]float64{}
				if refresh {
					for _, nm := range hs[1:] {
						want[nm.addr] = []float64{shortjobs.OverrunEstimate(cutoff) * 3}
					}
				}
				if got := c.workSeen("u", skip); !maps.EqualFunc(got, want, slices.Equal) {
					t.Fatalf("updates %v, want %v", got, want)
				}
			})
		})
	}
}

// TestLatestPerRequest: a batch keeps each request's last update, in the
// order of those last updates.
func TestLatestPerRequest(t *testing.T) {
	u := func(id string, w float64) *sparrowrpc.TRemainingWork {
		return &sparrowrpc.TRemainingWork{RequestId: id, RemainingWork: w}
	}
	for _, tt := range []struct {
		in, want []*sparrowrpc.TRemainingWork
	}{
		{nil, nil},
		{[]*sparrowrpc.TRemainingWork{u("a", 1)}, []*sparrowrpc.TRemainingWork{u("a", 1)}},
		{[]*sparrowrpc.TRemainingWork{u("a", 1), u("b", 2)}, []*sparrowrpc.TRemainingWork{u("a", 1), u("b", 2)}},
		{[]*sparrowrpc.TRemainingWork{u("a", 4), u("b", 2), u("a", 2), u("c", 1), u("b", 1)}, []*sparrowrpc.TRemainingWork{u("a", 2), u("c", 1), u("b", 1)}},
	} {
		got := latestPerRequest(slices.Clone(tt.in))
		if !slices.EqualFunc(got, tt.want, func(a, b *sparrowrpc.TRemainingWork) bool { return *a == *b }) {
			t.Errorf("latestPerRequest(%v) = %v, want %v", tt.in, got, tt.want)
		}
	}
}
