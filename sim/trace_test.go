package sim

import (
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"testing"
	"time"

	"github.com/sparrowfleet/sparrow/core/shortjobs"
	"github.com/sparrowfleet/sparrow/internal/jobtrace"
)

// synthJobs returns n jobs of a heavy-tailed workload: mostly short jobs
// of a few short tasks, some long jobs of many long tasks.
func synthJobs(seed uint64, n int) []jobtrace.Job {
	rng := rand.New(rand.NewPCG(seed, 3))
	var jobs []jobtrace.Job
	t := 0.0
	for i := range n {
		t += rng.ExpFloat64() * 2
		m, mean := 1+rng.IntN(6), 1+rng.Float64()*5
		if rng.IntN(10) == 0 {
			m, mean = 5+rng.IntN(20), 100+rng.Float64()*200
		}
		d := make([]float64, m)
		for k := range d {
			d[k] = mean * (0.5 + rng.Float64())
		}
		jobs = append(jobs, jobtrace.Job{Line: i + 1, Submit: t, Durations: d})
	}
	return jobs
}

func sliceSource(jobs []jobtrace.Job) func() (jobtrace.Job, error) {
	i := 0
	return func() (jobtrace.Job, error) {
		if i == len(jobs) {
			return jobtrace.Job{}, io.EOF
		}
		i++
		return jobs[i-1], nil
	}
}

func testTraceConfig(p TracePolicy, nodes, slots int, seed uint64) TraceConfig {
	return TraceConfig{
		Policy: p, Nodes: nodes, Slots: slots, RTT: 1, ProbeRatio: 2, TimeScale: 1, GapScale: 1,
		Aware:       shortjobs.Config{Cutoff: 50, ShortShare: 0.1, StarveLimit: 3},
		GossipDelay: 500, Seed: seed,
	}
}

// TestTraceProperties replays heavy-tailed workloads on small clusters and
// checks, after every event, that no node has a free slot while a
// reservation is queued there, and at the end that every task started
// exactly once, every job was measured and every node is idle with no
// long work advertised.
func TestTraceProperties(t *testing.T) {
	type variant struct {
		p    TracePolicy
		pull bool
		// informed turns on every long-job placement switch
		// (LongSteer, ClassFirst, WorkRefresh, Overrun, ShortStickyOnly).
		informed bool
	}
	for _, v := range []variant{{TraceSparrow, false, false}, {TraceAware, false, false}, {TraceAware, true, false}, {TraceAware, false, true}, {TraceAware, true, true}} {
		p := v.p
		for _, c := range []struct{ nodes, slots int }{{6, 1}, {10, 2}, {30, 1}} {
			for seed := range uint64(4) {
				t.Run(fmt.Sprintf("%s/pull=%v/informed=%v/%dx%d/seed%d", p, v.pull, v.informed, c.nodes, c.slots, seed), func(t *testing.T) {
					jobs := synthJobs(seed, 150)
					tasks := 0
					for _, j := range jobs {
						tasks += len(j.Durations)
					}
					cfg := testTraceConfig(p, c.nodes, c.slots, seed)
					cfg.Pull, cfg.PullAfter = v.pull, 20
					if v.informed {
						cfg.Aware.LongSteer, cfg.Aware.ClassFirst, cfg.Aware.WorkRefresh, cfg.Aware.Overrun = true, true, true, true
						cfg.Aware.ShortStickyOnly = seed%2 == 0
						cfg.AdaptiveShare = seed%2 == 1
						cfg.Estimates = TraceEstimates(seed % uint64(numEstimates))
						if v.pull {
							cfg.Aware.Unestimated = shortjobs.UnestimatedByHistory
						}
					}
					s, err := newTraceSim(cfg, sliceSource(jobs), jobtrace.NewRecorder(50))
					if err != nil {
						t.Fatal(err)
					}
					started := map[[2]int32]int{}
					s.hooks.onStart = func(_, jseq, task int32) { started[[2]int32{jseq, task}]++ }
					s.hooks.afterEvent = func(s *traceSim) {
						for i := range s.mon {
							if c := &s.mon[i].core; c.Free() > 0 && c.Queued() > 0 {
								t.Fatalf("t=%v: node %d has %d free slots and %d queued reservations", s.now, i, c.Free(), c.Queued())
							}
						}
					}
					res, err := s.run()
					if err != nil {
						t.Fatal(err)
					}
					if len(started) != tasks {
						t.Fatalf("%d distinct tasks started, want %d", len(started), tasks)
					}
					for k, n := range started {
						if n != 1 {
							t.Fatalf("task %v started %d times", k, n)
						}
					}
					if got := res.Short.N + res.Long.N; got != len(jobs) || res.Jobs != len(jobs) {
						t.Fatalf("%d jobs measured, %d read, want %d", got, res.Jobs, len(jobs))
					}
					for i := range s.mon {
						m := &s.mon[i]
						long := 0
						if m.pol != nil {
							long = m.pol.LongWork()
						}
						if m.core.Running()+m.core.Fetching()+m.core.Queued() != 0 || long != 0 {
							t.Fatalf("node %d ends with %d running, %d fetching, %d queued, long work %d",
								i, m.core.Running(), m.core.Fetching(), m.core.Queued(), long)
						}
						if s.view != nil && (s.view[i] || s.level[i] != 0) {
							t.Fatalf("node %d still advertised as holding long work (level %d)", i, s.level[i])
						}
					}
					// Without estimates, under UnestimatedByTasks every job
					// is short and no node advertises long work.
					allShort := cfg.Estimates == EstimateNone && cfg.Aware.Unestimated == shortjobs.UnestimatedByTasks
					if p == TraceAware && (res.StickyFetches == 0 || res.AdvertChanges == 0 && !allShort) {
						t.Fatalf("aware run without sticky fetches (%d) or adverts (%d)", res.StickyFetches, res.AdvertChanges)
					}
					if v.pull && (res.PulledTasks == 0 || res.BacklogAdverts == 0) {
						t.Fatalf("run with pulls pulled %d tasks after %d backlog adverts", res.PulledTasks, res.BacklogAdverts)
					}
					if v.informed && res.WorkUpdates == 0 {
						t.Fatal("informed run sent no work updates")
					}
					if !v.pull && res.PullFetches != 0 {
						t.Fatalf("run without pulls made %d pull fetches", res.PullFetches)
					}
				})
			}
		}
	}
}

// TestTraceIdeal checks the no-queueing reference: each job's response is
// its longest task plus 1.5 RTT.
func TestTraceIdeal(t *testing.T) {
	jobs := synthJobs(1, 50)
	rec := jobtrace.NewRecorder(50)
	cfg := testTraceConfig(TraceIdeal, 1, 1, 1)
	cfg.RTT = 2
	if _, err := RunTrace(cfg, sliceSource(jobs), rec); err != nil {
		t.Fatal(err)
	}
	want := jobtrace.NewRecorder(50)
	for i, j := range jobs {
		want.Job(i, j.Mean(), 0, j.Longest()+0.003)
	}
	for _, c := range []jobtrace.Class{jobtrace.Short, jobtrace.Long} {
		a, b := rec.Responses(c), want.Responses(c)
		if len(a) != len(b) || len(a) == 0 {
			t.Fatalf("%v: %d jobs, want %d", c, len(a), len(b))
		}
		for i := range a {
			if math.Abs(a[i]-b[i]) > 1e-9 {
				t.Fatalf("%v job %d: response %v, want %v", c, i, a[i], b[i])
			}
		}
	}
}

// TestTraceDeterministic runs the Google slice twice per policy.
func TestTraceDeterministic(t *testing.T) {
	run := func(p TracePolicy) TraceResult {
		f, err := os.Open("../internal/jobtrace/testdata/goog_slice.tr")
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		r := jobtrace.NewReader(f, "goog_slice.tr")
		cfg := testTraceConfig(p, 300, 1, 7)
		cfg.Aware.Cutoff = jobtrace.CutoffGoogle
		res, err := RunTrace(cfg, r.Next, jobtrace.NewRecorder(jobtrace.CutoffGoogle))
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	for _, p := range []TracePolicy{TraceSparrow, TraceAware} {
		a, b := run(p), run(p)
		if a != b {
			t.Fatalf("%s: two runs differ:\n%+v\n%+v", p, a, b)
		}
		if a.Jobs != 200 || a.Tasks != 23229 {
			t.Fatalf("%s: %d jobs, %d tasks", p, a.Jobs, a.Tasks)
		}
	}
}

func TestTraceConfigValidate(t *testing.T) {
	bad := []func(c *TraceConfig){
		func(c *TraceConfig) { c.Nodes = 0 },
		func(c *TraceConfig) { c.TimeScale = 0 },
		func(c *TraceConfig) { c.GapScale = math.Inf(1) },
		func(c *TraceConfig) { c.ProbeRatio = 0.5 },
		func(c *TraceConfig) { c.GossipDelay = -1 },
		func(c *TraceConfig) { c.Pull, c.PullAfter = true, -1 },
		func(c *TraceConfig) { c.Pull, c.PullAfter = true, math.NaN() },
		func(c *TraceConfig) { c.Aware.Cutoff = 0 },
		func(c *TraceConfig) { c.AdaptiveShare, c.ShareHold = true, -time.Second },
		func(c *TraceConfig) { c.Policy = numTracePolicies },
	}
	for i, f := range bad {
		c := testTraceConfig(TraceAware, 10, 1, 1)
		f(&c)
		if c.Validate() == nil {
			t.Errorf("case %d accepted", i)
		}
	}
	if _, err := ParseTracePolicies("sparrow,bogus"); err == nil {
		t.Error("bogus policy accepted")
	}
	if ps, err := ParseTracePolicies("all"); err != nil || len(ps) != 4 {
		t.Errorf("all: %v %v", ps, err)
	}
}

// TestTraceCentral checks the central reference against the ideal and
// against a one-slot cluster worked out by hand.
func TestTraceCentral(t *testing.T) {
	run := func(p TracePolicy, nodes int, jobs []jobtrace.Job) *jobtrace.Recorder {
		t.Helper()
		rec := jobtrace.NewRecorder(50)
		cfg := testTraceConfig(p, nodes, 1, 1)
		cfg.RTT = 2
		if _, err := RunTrace(cfg, sliceSource(jobs), rec); err != nil {
			t.Fatal(err)
		}
		return rec
	}
	t.Run("a cluster too large to queue is the ideal", func(t *testing.T) {
		jobs := synthJobs(3, 80)
		central, ideal := run(TraceCentral, 5000, jobs), run(TraceIdeal, 1, jobs)
		for _, c := range []jobtrace.Class{jobtrace.Short, jobtrace.Long} {
			a, b := central.Responses(c), ideal.Responses(c)
			if len(a) != len(b) || len(a) == 0 {
				t.Fatalf("%v: %d jobs, want %d", c, len(a), len(b))
			}
			for i := range a {
				if math.Abs(a[i]-b[i]) > 1e-9 {
					t.Fatalf("%v job %d: response %v, ideal %v", c, i, a[i], b[i])
				}
			}
		}
	})
	t.Run("one slot serves the least remaining work first", func(t *testing.T) {
		// At 0: A (two tasks of 10 s); at 1: B (one task of 3 s). The slot
		// runs A's first task 0.003–10.003 (A had 20 s left, alone), then B
		// (3 s left, less than A's 10), then A's second task.
		jobs := []jobtrace.Job{
			{Line: 1, Submit: 0, Durations: []float64{10, 10}},
			{Line: 2, Submit: 1, Durations: []float64{3}},
		}
		got := run(TraceCentral, 1, jobs).Responses(jobtrace.Short)
		want := []float64{10.003 + 3 - 1, 10.003 + 3 + 10}
		if len(got) != 2 || math.Abs(got[0]-want[0]) > 1e-9 || math.Abs(got[1]-want[1]) > 1e-9 {
			t.Fatalf("responses %v, want %v", got, want)
		}
	})
}

// TestTraceLongSteer checks that long jobs placed with information probe
// only general nodes advertising the least long work: one-task long jobs
// arriving after the adverts of the earlier ones have spread never probe
// a node already holding long work while an idle general node is left.
func TestTraceLongSteer(t *testing.T) {
	var jobs []jobtrace.Job
	for i := range 8 {
		jobs = append(jobs, jobtrace.Job{Submit: float64(10 * i), Durations: []float64{1000}})
	}
	cfg := testTraceConfig(TraceAware, 20, 1, 1)
	cfg.Aware.LongSteer = true
	s, err := newTraceSim(cfg, sliceSource(jobs), jobtrace.NewRecorder(50))
	if err != nil {
		t.Fatal(err)
	}
	nodes := map[int32]bool{}
	s.hooks.onStart = func(n, _, _ int32) {
		if nodes[n] {
			t.Errorf("a long task started on node %d, which already ran one", n)
		}
		nodes[n] = true
	}
	res, err := s.run()
	if err != nil {
		t.Fatal(err)
	}
	if res.SteeredLong != int64(len(jobs)-1) {
		t.Fatalf("%d long jobs steered, want every one after the first (%d)", res.SteeredLong, len(jobs)-1)
	}
	// Every job's one task started at once: none queued behind another.
	if res.Long.N != len(jobs) || res.Long.P99 > 1000+1 {
		t.Fatalf("long jobs %d, p99 %v s: some queued", res.Long.N, res.Long.P99)
	}
}

func TestParseTraceEstimates(t *testing.T) {
	for _, tc := range []struct {
		name string
		want TraceEstimates
		ok   bool
	}{{"exact", EstimateExact, true}, {"noisy", EstimateNoisy, true}, {"none", EstimateNone, true}, {"oracle", 0, false}, {"", 0, false}} {
		got, err := ParseTraceEstimates(tc.name)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("ParseTraceEstimates(%q) = %v, %v; want %v, ok %v", tc.name, got, err, tc.want, tc.ok)
		}
		if tc.ok && got.String() != tc.name {
			t.Errorf("%v.String() = %q", got, got.String())
		}
	}
}

// TestTraceOverrun: under Aware.Overrun, a short job's task that runs past
// the cutoff makes its node advertise long work from the cutoff on (as
// the schedulers hear it a gossip delay later) until it ends; without
// it, a node running only short jobs' tasks never does.
func TestTraceOverrun(t *testing.T) {
	// One short job (mean 20.8 s, cutoff 50 s) whose last task runs 100 s.
	jobs := []jobtrace.Job{{Line: 1, Submit: 0, Durations: []float64{1, 1, 1, 1, 100}}}
	for _, overrun := range []bool{false, true} {
		t.Run(fmt.Sprintf("overrun=%v", overrun), func(t *testing.T) {
			cfg := testTraceConfig(TraceAware, 1, 1, 1)
			cfg.Aware.ShortShare = 0
			cfg.Aware.Overrun = overrun
			s, err := newTraceSim(cfg, sliceSource(jobs), jobtrace.NewRecorder(50))
			if err != nil {
				t.Fatal(err)
			}
			var busyFrom, busyTo float64 = -1, -1
			var longStart float64 = -1
			s.hooks.onStart = func(_, _, task int32) {
				if task == 4 {
					longStart = s.now + s.half
				}
			}
			s.hooks.afterEvent = func(s *traceSim) {
				switch {
				case s.view[0] && busyFrom < 0:
					busyFrom = s.now
				case !s.view[0] && busyFrom >= 0 && busyTo < 0:
					busyTo = s.now
				}
			}
			res, err := s.run()
			if err != nil {
				t.Fatal(err)
			}
			if res.Short.N != 1 || longStart < 0 {
				t.Fatalf("%d short jobs, long task started at %v", res.Short.N, longStart)
			}
			if !overrun {
				if busyFrom >= 0 {
					t.Fatalf("node advertised long work at %v ms without overrun", busyFrom)
				}
				return
			}
			wantFrom := longStart + 50_000 + cfg.GossipDelay
			wantTo := longStart + 100_000 + cfg.GossipDelay
			if math.Abs(busyFrom-wantFrom) > 1 || math.Abs(busyTo-wantTo) > 1 {
				t.Fatalf("long work heard from %v to %v ms, want %v to %v", busyFrom, busyTo, wantFrom, wantTo)
			}
		})
	}
}

// TestTraceOverrunTakesUnestimatedJobLong: under Aware.Overrun, once a
// task of a job that stated no estimate has run for the cutoff, its
// scheduler takes the job as long. A short job queued behind it then goes
// first (its remaining work, refreshed on the nodes holding it, is a long
// job's), short-only nodes get none of its tasks, and it leaves the pull
// backlog. Without Overrun, none of these happens.
func TestTraceOverrunTakesUnestimatedJobLong(t *testing.T) {
	t.Run("queue order", func(t *testing.T) {
		// One node of two slots. X's one task holds a slot until 70 s; A's
		// first task runs on the other past the cutoff (50 s) at 51 s; B,
		// smaller than A by tasks, arrives at 60 s. X's end frees a slot
		// with both A's and B's reservations queued.
		jobs := []jobtrace.Job{
			{Line: 1, Submit: 0, Durations: []float64{70}},
			{Line: 2, Submit: 1, Durations: []float64{100, 1, 1}},
			{Line: 3, Submit: 60, Durations: []float64{1, 1, 1}},
		}
		for _, overrun := range []bool{false, true} {
			t.Run(fmt.Sprintf("overrun=%v", overrun), func(t *testing.T) {
				cfg := testTraceConfig(TraceAware, 1, 2, 1)
				cfg.Aware.ShortShare = 0
				cfg.Aware.Overrun, cfg.Aware.WorkRefresh = overrun, true
				cfg.Estimates = EstimateNone
				s, err := newTraceSim(cfg, sliceSource(jobs), jobtrace.NewRecorder(50))
				if err != nil {
					t.Fatal(err)
				}
				first := int32(-1)
				s.hooks.onStart = func(_, jseq, _ int32) {
					if first < 0 && s.now >= 70_000 {
						first = jseq
					}
				}
				if _, err := s.run(); err != nil {
					t.Fatal(err)
				}
				want := map[bool]int32{false: 1, true: 2}[overrun]
				if first != want {
					t.Fatalf("the slot X freed ran job %d, want %d", first, want)
				}
			})
		}
	})
	t.Run("short-only nodes and backlog", func(t *testing.T) {
		// Four one-slot nodes, one of them short-only; one job of eight
		// 100-s tasks that states no estimate. Its first four tasks start
		// at once, one per node, and run past the cutoff (50 s).
		jobs := []jobtrace.Job{{Line: 1, Submit: 0, Durations: []float64{100, 100, 100, 100, 100, 100, 100, 100}}}
		for _, overrun := range []bool{false, true} {
			t.Run(fmt.Sprintf("overrun=%v", overrun), func(t *testing.T) {
				cfg := testTraceConfig(TraceAware, 4, 1, 1)
				cfg.Aware.ShortShare = 0.25
				cfg.Aware.Overrun = overrun
				cfg.Estimates = EstimateNone
				cfg.Pull, cfg.PullAfter = true, 1000
				s, err := newTraceSim(cfg, sliceSource(jobs), jobtrace.NewRecorder(50))
				if err != nil {
					t.Fatal(err)
				}
				shortOnlyLate := 0
				s.hooks.onStart = func(n, _, _ int32) {
					if s.shortOnly[n] && s.now > 50_000 {
						shortOnlyLate++
					}
				}
				inBacklogLate := false
				s.hooks.afterEvent = func(s *traceSim) {
					if s.now > 50_000+1 && s.backlog.Has("0") {
						inBacklogLate = true
					}
				}
				res, err := s.run()
				if err != nil {
					t.Fatal(err)
				}
				if res.Long.N != 1 {
					t.Fatalf("%d long jobs measured, want 1", res.Long.N)
				}
				if overrun && (res.OverrunLong != 1 || res.OverrunDeclined == 0) {
					t.Fatalf("%d jobs taken long, %d fetches declined; want 1 and some", res.OverrunLong, res.OverrunDeclined)
				}
				if overrun && (shortOnlyLate != 0 || inBacklogLate) {
					t.Fatalf("after the overrun: %d tasks started on the short-only node, in the backlog %v", shortOnlyLate, inBacklogLate)
				}
				if !overrun && (shortOnlyLate == 0 || !inBacklogLate) {
					t.Fatalf("without overrun: %d tasks started on the short-only node after 50 s, in the backlog %v; the test shows nothing", shortOnlyLate, inBacklogLate)
				}
			})
		}
	})
}

// TestTraceShareHold replays long work, a burst of short work that raises
// the adaptive share to 50%, then hours of sparse short jobs: with a hold
// of a minute the share falls back to its floor by the end, and with a
// hold longer than the run it stays at its peak.
func TestTraceShareHold(t *testing.T) {
	var jobs []jobtrace.Job
	for i := range 10 { // half the nodes run a long task for the whole run
		jobs = append(jobs, jobtrace.Job{Submit: float64(i), Durations: []float64{100000}})
	}
	for i := range 60 { // 6,000 slot-seconds of short work in a minute
		d := make([]float64, 10)
		for k := range d {
			d[k] = 10
		}
		jobs = append(jobs, jobtrace.Job{Submit: float64(100 + i), Durations: d})
	}
	for k := range 10 { // then a one-second job every 40 minutes
		jobs = append(jobs, jobtrace.Job{Submit: float64(1000 + 2400*k), Durations: []float64{1}})
	}
	tests := []struct {
		name string
		hold time.Duration
		want float64 // the share at the end
	}{
		{"a minute", time.Minute, 0.1},
		{"longer than the run", 100 * time.Hour, 0.5},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testTraceConfig(TraceAware, 20, 1, 1)
			cfg.AdaptiveShare, cfg.ShareHold = true, tc.hold
			for i := range jobs {
				jobs[i].Line = i + 1
			}
			s, err := newTraceSim(cfg, sliceSource(jobs), jobtrace.NewRecorder(50))
			if err != nil {
				t.Fatal(err)
			}
			res, err := s.run()
			if err != nil {
				t.Fatal(err)
			}
			if res.ShareMax != 0.5 {
				t.Errorf("largest share %v, want 0.5", res.ShareMax)
			}
			if got := s.share.Share(); got != tc.want {
				t.Errorf("share at the end %v, want %v (%d changes)", got, tc.want, res.ShareChanges)
			}
		})
	}
}
