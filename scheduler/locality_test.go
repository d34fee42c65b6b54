package scheduler

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sparrowfleet/sparrow/core/locality"
	"github.com/sparrowfleet/sparrow/internal/pricegossip"
	"github.com/sparrowfleet/sparrow/thrift/gen-go/sparrowrpc"
)

// relaxing returns a task preferring nodes that opts into relaxation after
// delay.
func relaxing(id string, delay time.Duration, nodes ...string) *sparrowrpc.TTaskSpec {
	spec := onNodes(id, nodes...)
	spec.Preference.DelayThreshold = int32(delay / time.Millisecond)
	return spec
}

// clock is a settable time for the scheduler under test.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) set(t time.Time) {
	c.mu.Lock()
	c.t = t
	c.mu.Unlock()
}

// newClockedCluster is newCluster with the scheduler on a clock at t0.
// Nodes nm0, nm2, nm4 are rack r0; nm1, nm3, nm5 rack r1.
func newClockedCluster(t *testing.T, n int) (*cluster, *clock, time.Time) {
	t.Helper()
	c := newCluster(t, n, Config{ReservationTimeout: -1})
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clk := &clock{t: t0}
	c.s.now = clk.now
	return c, clk, t0
}

// reserved returns the names of the nodes holding reservations for req
// and the total.
func (c *cluster) reserved(req string) (map[string]int, int) {
	out, total := map[string]int{}, 0
	for _, nm := range c.nms {
		if k := nm.acceptedFor(req); k > 0 {
			out[nm.name] = k
			total += k
		}
	}
	return out, total
}

// expensiveNM0 prices nm0 far above everything else: ψ = 10, ξ = 40 per
// GB, so with the default 128 MiB input the rack costs 0 + 1 and the
// cluster 0 + 5 against nm0's 1000.
func expensiveNM0(version uint64) locality.Prices {
	return locality.Prices{
		Version: version,
		Node:    map[string]int64{"nm0": 1000, "nm1": 0, "nm2": 0, "nm3": 0, "nm4": 0, "nm5": 0},
		Rack:    map[string]int64{"r0": 0, "r1": 0},
		Cluster: 0, RackPerGB: 10, CorePerGB: 40,
	}
}

// (a) A task with delayThreshold 0 keeps strict preferences: however long
// it waits and whatever the prices say, it is reserved only on its
// preferred node.
func TestStrictPreferencesNeverRelax(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, clk, t0 := newClockedCluster(t, 6)
		c.s.SetPrices(expensiveNM0(1), t0)
		if err := c.s.SubmitJob(context.Background(), job("strict", 2, onNodes("t0", "nm0"))); err != nil {
			t.Fatal(err)
		}
		c.waitAccepted(t, "strict", 2)
		for _, d := range []time.Duration{time.Second, time.Hour} {
			clk.set(t0.Add(d))
			c.s.Relax(t0.Add(d))
		}
		if _, ok := c.s.NextRelax(); ok {
			t.Fatal("a strict request is queued for relaxation")
		}
		if got, total := c.reserved("strict"); total != 2 || got["nm0"] != 2 {
			t.Fatalf("reservations %v, want both on nm0", got)
		}
		if specs := c.getTask(t, "strict", c.nms[0]); len(specs) != 1 {
			t.Fatal("nm0 did not get its task")
		}
		st := c.s.Stats().Locality
		if st.WidenedRackByDelay+st.WidenedRackByPrices+st.WidenedClusterByDelay+st.WidenedClusterByPrices != 0 {
			t.Fatalf("strict task widened: %+v", st)
		}
		if st.LaunchedNode != 1 || st.LaunchedRack+st.LaunchedCluster != 0 {
			t.Fatalf("launch locality %+v, want one node-local launch", st)
		}
	})
}

// (b) Without prices, a relaxable task widens to its preferred node's
// rack after its delay and to the cluster after twice the delay, each
// time with ceil(d) reservations on nodes that held none; the first asker
// gets it, the others get nothing.
func TestDelayWidensRackThenCluster(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, clk, t0 := newClockedCluster(t, 6)
		const delay = 100 * time.Millisecond
		if err := c.s.SubmitJob(context.Background(), job("late", 2, relaxing("t0", delay, "nm0"))); err != nil {
			t.Fatal(err)
		}
		c.waitAccepted(t, "late", 2)
		if at, ok := c.s.NextRelax(); !ok || !at.Equal(t0.Add(delay)) {
			t.Fatalf("NextRelax = %v, %v; want %v", at, ok, t0.Add(delay))
		}

		c.s.Relax(t0.Add(delay - time.Millisecond))
		if _, total := c.reserved("late"); total != 2 {
			t.Fatalf("%d reservations before the delay, want 2", total)
		}

		clk.set(t0.Add(delay))
		c.s.Relax(t0.Add(delay))
		c.waitAccepted(t, "late", 4)
		got, _ := c.reserved("late")
		if got["nm0"] != 2 || got["nm2"] != 1 || got["nm4"] != 1 {
			t.Fatalf("reservations %v after the delay, want nm0:2 and one each on its rack-mates nm2, nm4", got)
		}
		if at, ok := c.s.NextRelax(); !ok || !at.Equal(t0.Add(2*delay)) {
			t.Fatalf("NextRelax = %v, %v; want %v", at, ok, t0.Add(2*delay))
		}

		clk.set(t0.Add(2 * delay))
		c.s.Relax(t0.Add(2 * delay))
		c.waitAccepted(t, "late", 6)
		got, _ = c.reserved("late")
		for _, name := range []string{"nm1", "nm3", "nm5"} {
			if got[name] > 1 {
				t.Fatalf("reservations %v: %s got more than one", got, name)
			}
		}
		if got["nm1"]+got["nm3"]+got["nm5"] != 2 {
			t.Fatalf("reservations %v after twice the delay, want 2 more in rack r1", got)
		}
		if _, ok := c.s.NextRelax(); ok {
			t.Fatal("a task at cluster level is still queued for relaxation")
		}

		// A node in rack r1 asks first and runs it; nm0 and nm2 then get nothing.
		var asker *fakeNM
		for _, i := range []int{1, 3, 5} {
			if got[c.nms[i].name] > 0 {
				asker = c.nms[i]
				break
			}
		}
		if specs := c.getTask(t, "late", asker); len(specs) != 1 {
			t.Fatalf("%s got no task", asker.name)
		}
		for _, nm := range []*fakeNM{c.nms[0], c.nms[2]} {
			if specs := c.getTask(t, "late", nm); len(specs) != 0 {
				t.Fatalf("%s also got the task", nm.name)
			}
		}
		st := c.s.Stats().Locality
		want := LocalityStats{WidenedRackByDelay: 1, WidenedClusterByDelay: 1, LaunchedCluster: 1}
		if st != want {
			t.Fatalf("locality stats %+v, want %+v", st, want)
		}
	})
}

// (c) With fresh prices saying the preferred node is dear, a relaxable
// task widens at submission, to the cheapest level, without waiting.
func TestPricesWidenAtSubmission(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, _, t0 := newClockedCluster(t, 6)
		if !c.s.SetPrices(expensiveNM0(1), t0) {
			t.Fatal("first prices refused")
		}
		if err := c.s.SubmitJob(context.Background(), job("guided", 2, relaxing("t0", time.Hour, "nm0"))); err != nil {
			t.Fatal(err)
		}
		c.waitAccepted(t, "guided", 4)
		got, _ := c.reserved("guided")
		if got["nm0"] != 2 || got["nm2"] != 1 || got["nm4"] != 1 {
			t.Fatalf("reservations %v, want nm0:2 and one each on nm2, nm4 (rack 1 beats cluster 5 and node 1000)", got)
		}
		if specs := c.getTask(t, "guided", c.nms[4]); len(specs) != 1 {
			t.Fatal("nm4 got no task")
		}
		st := c.s.Stats().Locality
		if st.WidenedRackByPrices != 1 || st.LaunchedRack != 1 || st.WidenedRackByDelay != 0 || !st.PricesFresh || st.PricesVersion != 1 {
			t.Fatalf("locality stats %+v, want one rack widening by prices and one rack-local launch", st)
		}
	})
}

// Prices that arrive after submission re-price pending tasks at once;
// prices that say the preferred node is cheap leave the task alone.
func TestNewPricesReprice(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, _, t0 := newClockedCluster(t, 6)
		cheap := expensiveNM0(1)
		cheap.Node["nm0"] = 0
		c.s.SetPrices(cheap, t0)
		if err := c.s.SubmitJob(context.Background(), job("wait", 2, relaxing("t0", time.Hour, "nm0"))); err != nil {
			t.Fatal(err)
		}
		c.waitAccepted(t, "wait", 2)
		if got, total := c.reserved("wait"); total != 2 {
			t.Fatalf("reservations %v while nm0 is cheapest, want only nm0's", got)
		}
		if !c.s.SetPrices(expensiveNM0(2), t0.Add(time.Second)) {
			t.Fatal("newer prices refused")
		}
		if at, ok := c.s.NextRelax(); !ok || !at.Equal(t0) {
			t.Fatalf("NextRelax = %v, %v after new prices; want now (%v)", at, ok, t0)
		}
		c.s.Relax(t0.Add(time.Second))
		c.waitAccepted(t, "wait", 4)
		if st := c.s.Stats().Locality; st.WidenedRackByPrices != 1 {
			t.Fatalf("locality stats %+v, want one rack widening by prices", st)
		}
	})
}

// While fresh prices keep a task local, its delay does not widen it; once
// they go stale the delay applies, every step already passed at once.
func TestFreshPricesOverrideTheDelay(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, clk, t0 := newClockedCluster(t, 6)
		cheap := expensiveNM0(1)
		cheap.Node["nm0"] = 0
		c.s.SetPrices(cheap, t0)
		const delay = 100 * time.Millisecond
		if err := c.s.SubmitJob(context.Background(), job("held", 2, relaxing("t0", delay, "nm0"))); err != nil {
			t.Fatal(err)
		}
		c.waitAccepted(t, "held", 2)
		clk.set(t0.Add(5 * delay / 2))
		c.s.Relax(t0.Add(5 * delay / 2))
		if got, total := c.reserved("held"); total != 2 {
			t.Fatalf("reservations %v past twice the delay under prices that keep nm0, want only nm0's", got)
		}
		stale := t0.Add(DefaultLocalityStale + time.Nanosecond)
		if at, ok := c.s.NextRelax(); !ok || !at.Equal(stale) {
			t.Fatalf("NextRelax = %v, %v; want the moment the prices go stale, %v", at, ok, stale)
		}
		clk.set(stale)
		c.s.Relax(stale)
		c.waitAccepted(t, "held", 4)
		got, _ := c.reserved("held")
		if got["nm1"]+got["nm3"]+got["nm5"]+got["nm2"]+got["nm4"] != 2 {
			t.Fatalf("reservations %v, want 2 beyond nm0", got)
		}
		if st := c.s.Stats().Locality; st.WidenedClusterByDelay != 1 || st.WidenedRackByDelay != 0 || st.WidenedRackByPrices+st.WidenedClusterByPrices != 0 {
			t.Fatalf("locality stats %+v, want one widening straight to the cluster by delay", st)
		}
	})
}

// Stale prices do not guide placement: the task waits for its delay.
func TestStalePricesFallBackToDelay(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, clk, t0 := newClockedCluster(t, 6)
		c.s.SetPrices(expensiveNM0(1), t0.Add(-DefaultLocalityStale-time.Millisecond))
		const delay = 50 * time.Millisecond
		if err := c.s.SubmitJob(context.Background(), job("stale", 2, relaxing("t0", delay, "nm0"))); err != nil {
			t.Fatal(err)
		}
		c.waitAccepted(t, "stale", 2)
		if got, total := c.reserved("stale"); total != 2 {
			t.Fatalf("reservations %v at submission under stale prices, want only nm0's", got)
		}
		if st := c.s.Stats().Locality; st.PricesFresh {
			t.Fatal("stale prices reported fresh")
		}
		clk.set(t0.Add(delay))
		c.s.Relax(t0.Add(delay))
		c.waitAccepted(t, "stale", 4)
		if st := c.s.Stats().Locality; st.WidenedRackByDelay != 1 || st.WidenedRackByPrices != 0 {
			t.Fatalf("locality stats %+v, want one rack widening by delay", st)
		}
	})
}

func TestSetPricesVersions(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, _, t0 := newClockedCluster(t, 1)
		steps := []struct {
			version uint64
			at      time.Duration
			want    bool
		}{
			{5, 0, true},
			{4, time.Second, false},                          // older, while 5 is fresh
			{5, 2 * time.Second, false},                      // the same: renews its age
			{6, 3 * time.Second, true},                       // newer
			{1, 3*time.Second + DefaultLocalityStale, false}, // 6 renewed at 3 s is still fresh
			{1, 4*time.Second + DefaultLocalityStale, true},  // 6 is stale: a restarted coordinator
		}
		for i, st := range steps {
			if got := c.s.SetPrices(locality.Prices{Version: st.version}, t0.Add(st.at)); got != st.want {
				t.Fatalf("step %d: SetPrices(v%d at %v) = %v, want %v", i, st.version, st.at, got, st.want)
			}
		}
		if st := c.s.Stats().Locality; st.PricesVersion != 1 || st.PricesAccepted != 3 {
			t.Fatalf("stats %+v, want version 1 after 3 accepted", st)
		}
	})
}

// A task whose preferred and widened reservations ask at the same time is
// launched exactly once.
func TestWidenedTaskLaunchesExactlyOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		for round := 0; round < 20; round++ {
			c, clk, t0 := newClockedCluster(t, 6)
			const delay = 10 * time.Millisecond
			if err := c.s.SubmitJob(context.Background(), job("race", 1, relaxing("t0", delay, "nm0"))); err != nil {
				t.Fatal(err)
			}
			c.waitAccepted(t, "race", 1)
			clk.set(t0.Add(2 * delay))
			c.s.Relax(t0.Add(2 * delay)) // straight to the cluster: one more reservation
			c.waitAccepted(t, "race", 2)
			got, _ := c.reserved("race")
			var askers []*fakeNM
			for _, nm := range c.nms {
				if got[nm.name] > 0 {
					askers = append(askers, nm)
				}
			}
			var wg sync.WaitGroup
			counts := make([]int, len(askers))
			for i, nm := range askers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					specs, err := c.s.GetTask(context.Background(), "race", nm.hp)
					if err != nil {
						t.Error(err)
					}
					counts[i] = len(specs)
				}()
			}
			wg.Wait()
			if n := counts[0] + counts[1]; n != 1 {
				t.Fatalf("round %d: %v asked, %v tasks each: launched %d times", round, got, counts, n)
			}
			if st := c.s.Stats(); st.TasksLaunched != 1 || st.ActiveRequests != 0 {
				t.Fatalf("round %d: stats %+v", round, st)
			}
		}
	})
}

// Widened reservations that node monitors refuse go through the usual
// failure path: the task is not lost, and later widening avoids them.
func TestRefusedWidenedReservationsKeepTheTask(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, clk, t0 := newClockedCluster(t, 6)
		c.nms[2].refuse.Store(true)
		c.nms[4].refuse.Store(true)
		const delay = 10 * time.Millisecond
		if err := c.s.SubmitJob(context.Background(), job("refused", 2, relaxing("t0", delay, "nm0"))); err != nil {
			t.Fatal(err)
		}
		c.waitAccepted(t, "refused", 2)
		clk.set(t0.Add(delay))
		c.s.Relax(t0.Add(delay))
		c.hub.waitUntil(t, "both rack-mates to refuse", func() bool {
			return c.s.Stats().EnqueueFailures == 2 && c.nms[2].attemptsFor("refused")+c.nms[4].attemptsFor("refused") == 2
		})
		if st := c.s.Stats(); st.ActiveRequests != 1 {
			t.Fatalf("request dropped after a refused widened reservation: %+v", st)
		}
		clk.set(t0.Add(2 * delay))
		c.s.Relax(t0.Add(2 * delay))
		c.hub.waitUntil(t, "two reservations in rack r1", func() bool {
			got, _ := c.reserved("refused")
			return got["nm1"]+got["nm3"]+got["nm5"] == 2
		})
		if st := c.s.Stats(); st.EnqueueFailures != 2 {
			t.Fatalf("stats %+v: the cluster widening retried a node that had refused", st)
		}
		if specs := c.getTask(t, "refused", c.nms[0]); len(specs) != 1 {
			t.Fatal("the preferred node lost its task")
		}
	})
}

// Prices reach the scheduler as gossip messages in pricegossip's format;
// other messages and malformed prices are ignored.
func TestGossipedPricesAreInstalled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, _, _ := newClockedCluster(t, 1)
		c.s.onGossip([]byte("not prices"))
		b, err := pricegossip.Encode(expensiveNM0(7))
		if err != nil {
			t.Fatal(err)
		}
		c.s.onGossip(b[:len(b)-1]) // truncated
		if st := c.s.Stats().Locality; st.PricesAccepted != 0 {
			t.Fatalf("stats %+v after non-price and malformed messages, want none accepted", st)
		}
		c.s.onGossip(b)
		if st := c.s.Stats().Locality; st.PricesAccepted != 1 || st.PricesVersion != 7 || !st.PricesFresh {
			t.Fatalf("stats %+v, want version 7 installed and fresh", st)
		}
	})
}
