package scheduler

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sparrowfleet/sparrow/thrift/gen-go/sparrowrpc"
)

var t0 = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

func TestNodeLoadPositionsAndWait(t *testing.T) {
	const stale = 3 * time.Second
	ms := time.Millisecond
	for _, tc := range []struct {
		name      string
		l         NodeLoad
		now       time.Time
		limit     time.Duration
		share     float64
		positions float64
		wait      time.Duration
		known     bool
	}{
		{name: "no report", l: NodeLoad{Slots: 1, TaskTime: 100 * ms}, now: t0, limit: time.Second, share: 1},
		{name: "no task time yet", l: NodeLoad{Slots: 1, At: t0}, now: t0, limit: time.Second, share: 1},
		{name: "no slots", l: NodeLoad{TaskTime: 100 * ms, At: t0}, now: t0, limit: time.Second, share: 1},
		{name: "stale", l: NodeLoad{Slots: 1, TaskTime: 100 * ms, At: t0}, now: t0.Add(stale + ms), limit: time.Second, share: 1},
		{name: "just fresh", l: NodeLoad{Slots: 1, TaskTime: 100 * ms, At: t0}, now: t0.Add(stale),
			limit: time.Second, share: 1, positions: 11, known: true},
		// One slot, 100 ms tasks: positions 0..10 start within 1 s.
		{name: "idle one slot", l: NodeLoad{Slots: 1, TaskTime: 100 * ms, At: t0}, now: t0,
			limit: time.Second, share: 1, positions: 11, known: true},
		{name: "busy one slot", l: NodeLoad{Running: 1, Slots: 1, TaskTime: 100 * ms, At: t0}, now: t0,
			limit: time.Second, share: 1, positions: 10, wait: 100 * ms, known: true},
		{name: "queue of ten", l: NodeLoad{Queued: 10, Running: 1, Slots: 1, TaskTime: 100 * ms, At: t0}, now: t0,
			limit: time.Second, share: 1, positions: 0, wait: 1100 * ms, known: true},
		// d = 2: twenty queued reservations are ten tasks.
		{name: "probe ratio two", l: NodeLoad{Queued: 20, Slots: 1, TaskTime: 100 * ms, At: t0}, now: t0,
			limit: time.Second, share: 0.5, positions: 1, wait: time.Second, known: true},
		{name: "fractional backlog", l: NodeLoad{Queued: 21, Slots: 1, TaskTime: 100 * ms, At: t0}, now: t0,
			limit: time.Second, share: 0.5, positions: 0, wait: 1050 * ms, known: true},
		// Four slots drain four times as fast.
		{name: "four slots", l: NodeLoad{Queued: 12, Running: 4, Slots: 4, TaskTime: 100 * ms, At: t0}, now: t0,
			limit: time.Second, share: 1, positions: 28, wait: 325 * ms, known: true},
		{name: "free slots", l: NodeLoad{Running: 1, Slots: 4, TaskTime: 100 * ms, At: t0}, now: t0,
			limit: 0, share: 1, positions: 3, wait: 0, known: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n, ok := tc.l.Positions(tc.now, tc.limit, stale, tc.share)
			if ok != tc.known || n != tc.positions {
				t.Errorf("Positions = %v, %v; want %v, %v", n, ok, tc.positions, tc.known)
			}
			w, ok := tc.l.Wait(tc.now, stale, tc.share)
			if ok != tc.known || w != tc.wait {
				t.Errorf("Wait = %v, %v; want %v, %v", w, ok, tc.wait, tc.known)
			}
		})
	}
}

func TestSaturated(t *testing.T) {
	const stale = 3 * time.Second
	ms := time.Millisecond
	busy := NodeLoad{Queued: 30, Running: 1, Slots: 1, TaskTime: 100 * ms, At: t0} // 0 positions in 1 s
	short := NodeLoad{Queued: 8, Running: 1, Slots: 1, TaskTime: 100 * ms, At: t0} // 2 positions in 1 s
	unknown := NodeLoad{Queued: 30, Running: 1, Slots: 1}                          // never reported
	old := busy
	old.At = t0.Add(-stale - ms)
	for _, tc := range []struct {
		name  string
		loads []NodeLoad
		m     int
		want  bool
	}{
		{name: "no candidates", m: 1, want: true},
		{name: "all busy", loads: []NodeLoad{busy, busy}, m: 1, want: true},
		{name: "one short queue", loads: []NodeLoad{busy, short}, m: 1, want: false},
		{name: "m-th position over the limit", loads: []NodeLoad{busy, short}, m: 3, want: true},
		{name: "m positions from two nodes", loads: []NodeLoad{short, short}, m: 4, want: false},
		{name: "unknown node alone does not saturate", loads: []NodeLoad{unknown}, m: 1, want: false},
		{name: "unknown node among busy ones", loads: []NodeLoad{busy, unknown, busy}, m: 1, want: false},
		{name: "stale report is unknown, not empty", loads: []NodeLoad{busy, old}, m: 1, want: false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Saturated(slices.Values(tc.loads), tc.m, t0, time.Second, stale, 1)
			if got != tc.want {
				t.Errorf("Saturated = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestSaturatedStopsEarly: the scan stops at the first unknown load and
// once m positions are found, so a large fleet costs little per job.
func TestSaturatedStopsEarly(t *testing.T) {
	idle := NodeLoad{Slots: 1, TaskTime: 100 * time.Millisecond, At: t0}
	for _, tc := range []struct {
		name  string
		loads []NodeLoad
		seen  int
	}{
		{name: "enough positions", loads: []NodeLoad{idle, idle, idle}, seen: 1},
		{name: "unknown", loads: []NodeLoad{{}, idle, idle}, seen: 1},
	} {
		seen := 0
		loads := func(yield func(NodeLoad) bool) {
			for _, l := range tc.loads {
				seen++
				if !yield(l) {
					return
				}
			}
		}
		Saturated(loads, 1, t0, time.Second, time.Second, 1)
		if seen != tc.seen {
			t.Errorf("%s: looked at %d loads, want %d", tc.name, seen, tc.seen)
		}
	}
}

// TestAdmissionHoldsBeforePlacing: a job whose candidates' queues are
// longer than MaxQueueWait is held with no reservation sent; a report of
// drained queues admits it, and it is then placed as usual.
func TestAdmissionHoldsBeforePlacing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t, 2, Config{MaxHeldJobs: 4, MaxHold: 30 * time.Second, MaxQueueWait: time.Second})
		full := LoadReport{Queued: 40, Running: 1, Slots: 1, TaskTime: 100 * time.Millisecond}
		for _, nm := range c.nms {
			c.s.ObserveLoad(nm.addr, full, time.Now())
		}
		call := make(chan error, 1)
		go func() { call <- c.s.SubmitJob(context.Background(), job("held", 0, freeTasks(1)...)) }()
		c.hub.waitFor(t, 10*time.Second, "the job to be held", func() bool { return c.s.Stats().Hold.Held == 1 })
		if n := c.nms[0].attemptsFor("held") + c.nms[1].attemptsFor("held"); n != 0 {
			t.Fatalf("%d reservations offered for a job held by admission", n)
		}
		if st := c.s.Stats(); st.Hold.AdmissionHolds != 1 || st.ActiveRequests != 0 {
			t.Fatalf("stats %+v: want one admission hold and no active request", st.Hold)
		}
		for _, nm := range c.nms {
			c.s.ObserveLoad(nm.addr, LoadReport{Slots: 1, TaskTime: 100 * time.Millisecond}, time.Now())
		}
		select {
		case err := <-call:
			if err != nil {
				t.Fatalf("admitted job: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("the job was not admitted after the queues drained")
		}
		c.waitAccepted(t, "held", 2)
		if st := c.s.Stats().Hold; st.Held != 0 || st.Refused != 0 {
			t.Fatalf("hold stats %+v after admission", st)
		}
	})
}

// TestAdmissionRefusals: past MaxHold, and at once past MaxHeldJobs, a
// saturated job is refused with the saturation message and a retry hint,
// having placed nothing.
func TestAdmissionRefusals(t *testing.T) {
	for _, tc := range []struct {
		name    string
		maxHeld int
		want    string
	}{
		{name: "past max-hold", maxHeld: 4, want: "--max-hold"},
		{name: "past max-held-jobs", maxHeld: 0, want: "--max-held-jobs"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				c := newCluster(t, 2, Config{MaxHeldJobs: tc.maxHeld, MaxHold: 50 * time.Millisecond, MaxQueueWait: time.Second})
				for _, nm := range c.nms {
					c.s.ObserveLoad(nm.addr, LoadReport{Queued: 40, Slots: 1, TaskTime: 100 * time.Millisecond}, time.Now())
				}
				err := c.s.SubmitJob(context.Background(), job("refused", 0, freeTasks(2)...))
				var ire *sparrowrpc.IncompleteRequestException
				if !errors.As(err, &ire) {
					t.Fatalf("SubmitJob = %v, want an IncompleteRequestException", err)
				}
				for _, s := range []string{"fleet saturated", "--max-queue-wait", tc.want, "retry after"} {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("refusal %q does not say %q", err, s)
					}
				}
				st := c.s.Stats()
				if st.Hold.AdmissionHolds != 1 || st.Hold.AdmissionRefused != 1 || st.Hold.Refused != 1 || st.Hold.Held != 0 {
					t.Errorf("hold stats %+v", st.Hold)
				}
				if st.Reservations != 0 || st.ActiveRequests != 0 || len(c.nms[0].requests())+len(c.nms[1].requests()) != 0 {
					t.Errorf("a refused job placed reservations: stats %+v", st)
				}
			})
		})
	}
}

// TestAdmissionCountsOwnReservations: with no other scheduler, the
// scheduler's own queued reservations are the load; admitted jobs count
// at once, so a burst is held once the queues reach the limit, without
// waiting for a report.
func TestAdmissionCountsOwnReservations(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// One slot, 100 ms tasks, d = 2: each one-task job queues one
		// reservation on each node, half a task; after k jobs a node offers
		// floor(11 − k/2) positions within 1 s, none once k = 21.
		c := newCluster(t, 2, Config{MaxHeldJobs: 4, MaxHold: 20 * time.Millisecond, MaxQueueWait: time.Second})
		for _, nm := range c.nms {
			c.s.ObserveLoad(nm.addr, LoadReport{Slots: 1, TaskTime: 100 * time.Millisecond}, time.Now())
		}
		accepted := 0
		var err error
		for range 30 {
			if err = c.s.SubmitJob(context.Background(), job("", 0, freeTasks(1)...)); err != nil {
				break
			}
			accepted++
		}
		if err == nil || !strings.Contains(err.Error(), "--max-queue-wait") {
			t.Fatalf("after %d jobs: %v; want a refusal by expected wait", accepted, err)
		}
		if accepted != 21 {
			t.Fatalf("%d jobs admitted before saturation, want 21", accepted)
		}
	})
}

// TestAdmissionOffByDefault: without MaxQueueWait, reports of long queues
// change nothing.
func TestAdmissionOffByDefault(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t, 2, Config{MaxHeldJobs: 4, MaxHold: 20 * time.Millisecond})
		for _, nm := range c.nms {
			c.s.ObserveLoad(nm.addr, LoadReport{Queued: 1000, Slots: 1, TaskTime: time.Second}, time.Now())
		}
		if err := c.s.SubmitJob(context.Background(), job("free", 0, freeTasks(1)...)); err != nil {
			t.Fatalf("SubmitJob without --max-queue-wait: %v", err)
		}
		c.waitAccepted(t, "free", 2)
		if st := c.s.Stats().Hold; st.AdmissionHolds != 0 || st.Holds != 0 {
			t.Fatalf("hold stats %+v without --max-queue-wait", st)
		}
	})
}

// TestAdmissionInArrivalOrder: held jobs are admitted oldest first, and
// an admitted job's reservations count at once: with room for one job,
// the first held job is admitted and the second stays held.
func TestAdmissionInArrivalOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t, 2, Config{MaxHeldJobs: 4, MaxHold: 30 * time.Second, MaxQueueWait: time.Second})
		full := LoadReport{Queued: 40, Slots: 1, TaskTime: 100 * time.Millisecond}
		for _, nm := range c.nms {
			c.s.ObserveLoad(nm.addr, full, time.Now())
		}
		calls := map[string]chan error{}
		for i, id := range []string{"first", "second"} {
			calls[id] = make(chan error, 1)
			go func() { calls[id] <- c.s.SubmitJob(context.Background(), job(id, 0, freeTasks(1)...)) }()
			c.hub.waitFor(t, 10*time.Second, id+" to be held", func() bool { return c.s.Stats().Hold.Held == i+1 })
		}
		// d = 2, so a queued reservation is half a task: 20 queued leave one
		// position within 1 s on the first node, and the first job's own
		// reservation there takes it.
		c.s.ObserveLoad(c.nms[0].addr, LoadReport{Queued: 20, Slots: 1, TaskTime: 100 * time.Millisecond}, time.Now())
		select {
		case err := <-calls["first"]:
			if err != nil {
				t.Fatalf("first job: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("the first held job was not admitted when a position freed")
		}
		c.waitAccepted(t, "first", 2)
		if st := c.s.Stats(); st.Hold.Held != 1 || c.nms[0].attemptsFor("second")+c.nms[1].attemptsFor("second") != 0 {
			t.Fatalf("after one position freed: %d held, second job placed %d reservations; want 1 held and none",
				st.Hold.Held, c.nms[0].attemptsFor("second")+c.nms[1].attemptsFor("second"))
		}
		select {
		case err := <-calls["second"]:
			t.Fatalf("second job answered with no room: %v", err)
		default:
		}
	})
}
