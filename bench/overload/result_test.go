package overload

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/sparrowfleet/sparrow/bench/driver"
	"github.com/sparrowfleet/sparrow/bench/procs"
	"github.com/sparrowfleet/sparrow/internal/plot"
	"github.com/sparrowfleet/sparrow/internal/stats"
)

// TestSummarize builds a point from a synthetic timeline: a scheduler
// whose RSS grows 12 MiB over the window, two node monitors that stay
// flat, and a driver.
func TestSummarize(t *testing.T) {
	ps := []Process{{procs.Scheduler, "sched0"}, {procs.NodeMonitor, "nm0"}, {procs.NodeMonitor, "nm1"}, {procs.Frontend, "driver"}}
	sample := func(t, completed, accepted float64, sched int64, cpu float64) Sample {
		return Sample{T: t, Completed: completed, Accepted: accepted, View: 2, Running: t / 10, Queued: 390, Refusals: t, Holds: 2 * t,
			HoldCount: 10, HoldSeconds: 25,
			RSS:        []int64{sched * mib, 20 * mib, 21 * mib, 100 * mib},
			Peak:       []int64{sched * mib, 22 * mib, 21 * mib, 100 * mib},
			CPU:        []float64{cpu, cpu / 2, cpu / 2, cpu},
			Heap:       []int64{sched * mib / 2, 10 * mib, 10 * mib, unknown},
			Goroutines: []int64{int64(t) + 10, 20, 20, unknown},
			Conns:      []int64{int64(t), 3, 4, unknown}}
	}
	p := Point{Multiple: 2, CapacityTasksPerS: 32, Processes: ps, Samples: []Sample{
		sample(0, 0, 0, 30, 0),
		sample(10, 310, 320, 40, 1),
		sample(60, 1860, 1870, 52, 6),
	}}
	sum := driver.Summary{TasksSubmitted: 3840, AttemptTasks: 4000, TasksCompleted: 2000, ElapsedS: 65,
		JobsSubmitted: 384, JobsCompleted: 200, SubmitErrors: 16, ResponseMs: stats.Summary{P50: 900, P99: 4000},
		StartedAt: "2026-01-01T00:00:00Z", LastArrivalAt: "2026-01-01T00:01:00Z"}
	summarize(&p, 10, 60, sum, map[string]GossipEvents{"sched0": {}, "nm0": {}, "nm1": {}})

	approx := func(name string, got, want float64) {
		t.Helper()
		if math.Abs(got-want) > 1e-9 {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	approx("goodput", p.GoodputTasksPerS, 31)
	approx("goodput %", p.GoodputPct, 31.0/32*100)
	approx("arrived", p.ArrivedTasksPerS, 64)
	approx("attempts per task", p.AttemptsPerTask, 4000.0/3840)
	approx("attempts per completed", p.AttemptsPerCompleted, 2)
	approx("accepted per completed", p.AcceptedPerCompleted, 1)
	approx("driver tasks/s", p.DriverTasksPerS, 2000.0/65)
	approx("mean hold", p.MeanHoldS, 2.5)
	approx("busy slots", p.BusySlots, 3.5) // the samples at 10 and 60 s
	approx("queued", p.QueuedReservations, 390)
	if p.Refusals != 60 || p.Holds != 120 || p.SubmitErrors != 16 || p.ResponseP99Ms != 4000 {
		t.Errorf("refusals %d holds %d submit errors %d p99 %v", p.Refusals, p.Holds, p.SubmitErrors, p.ResponseP99Ms)
	}
	want := map[procs.Role]RoleMemory{
		procs.Scheduler: {Role: procs.Scheduler, Processes: 1, PeakRSSMiB: 52, StartRSSMiB: 40, EndRSSMiB: 52, GrowthMiB: 12, MaxRiseMiB: 12,
			HeapStartMiB: 20, HeapEndMiB: 26, GoroutinesStart: 20, GoroutinesEnd: 70, ConnsStart: 10, ConnsEnd: 60, CPUMsPerS: 100},
		procs.NodeMonitor: {Role: procs.NodeMonitor, Processes: 2, PeakRSSMiB: 22, StartRSSMiB: 21, EndRSSMiB: 21,
			HeapStartMiB: 10, HeapEndMiB: 10, GoroutinesStart: 20, GoroutinesEnd: 20, ConnsStart: 4, ConnsEnd: 4, CPUMsPerS: 100},
		procs.Frontend: {Role: procs.Frontend, Processes: 1, PeakRSSMiB: 100, StartRSSMiB: 100, EndRSSMiB: 100, CPUMsPerS: 100},
	}
	if len(p.Roles) != len(want) {
		t.Fatalf("roles %+v, want %d (no executor sampled)", p.Roles, len(want))
	}
	for _, r := range p.Roles {
		if r != want[r.Role] {
			t.Errorf("role %+v, want %+v", r, want[r.Role])
		}
	}
	if p.Gossip.MinView != 2 || len(p.Gossip.DeclaredDead) != 0 {
		t.Errorf("gossip %+v", p.Gossip)
	}
}

func TestJudge(t *testing.T) {
	point := func(m, goodput, attempts, growth float64, dead ...string) Point {
		if dead == nil {
			dead = []string{}
		}
		return Point{Multiple: m, GoodputPct: goodput, AttemptsPerTask: attempts,
			Roles: []RoleMemory{
				{Role: procs.Scheduler, GrowthMiB: growth},
				{Role: procs.NodeMonitor, GrowthMiB: 1},
				{Role: procs.Frontend, GrowthMiB: 500}, // the load generator is not judged
			},
			Gossip: Gossip{DeclaredDead: dead}}
	}
	cases := []struct {
		name   string
		points []Point
		met    [4]bool // goodput, attempts, RSS, dead
	}{
		{"all met; under capacity goodput is not judged",
			[]Point{point(0.5, 50, 1, 2), point(2, 99, 1, 2), point(1000, 96, 1.1, 9.5)}, [4]bool{true, true, true, true}},
		{"goodput missed at one overload", []Point{point(2, 99, 1, 2), point(10, 94.9, 1, 2)}, [4]bool{false, true, true, true}},
		{"attempts above 1.1", []Point{point(2, 99, 1.11, 2)}, [4]bool{true, false, true, true}},
		{"10 MB is 9.54 MiB", []Point{point(2, 99, 1, 9.6)}, [4]bool{true, true, false, true}},
		{"a member declared dead", []Point{point(2, 99, 1, 1, "nm1")}, [4]bool{true, true, true, false}},
		{"no overload point measured", []Point{point(0.5, 50, 1, 1)}, [4]bool{false, true, true, true}},
	}
	for _, c := range cases {
		vs := Judge(c.points)
		if len(vs) != 4 {
			t.Fatalf("%s: %d verdicts", c.name, len(vs))
		}
		for i, v := range vs {
			if v.Met != c.met[i] {
				t.Errorf("%s: %q met=%v (%s), want %v", c.name, v.Goal, v.Met, v.Measured, c.met[i])
			}
		}
	}
	vs := Judge([]Point{point(1000, 99, 1, 3, "nm1", "nm2")})
	if !strings.Contains(vs[3].Measured, "nm1, nm2") || !strings.Contains(vs[2].Measured, "3.0 MiB (scheduler)") {
		t.Errorf("measured: %+v", vs)
	}
}

func TestFormatMultiple(t *testing.T) {
	for m, want := range map[float64]string{0.5: "0.5x", 1: "1x", 10: "10x", 1000: "1000x"} {
		if got := FormatMultiple(m); got != want {
			t.Errorf("%v: %q, want %q", m, got, want)
		}
	}
}

func TestReport(t *testing.T) {
	pts := []Point{
		{Multiple: 0.5, OfferedTasksPerS: 16, GoodputTasksPerS: 16, GoodputPct: 50, AttemptsPerTask: 1, JobsSubmitted: 96, JobsCompleted: 96,
			Roles:  []RoleMemory{{Role: procs.Scheduler, Processes: 1, PeakRSSMiB: 30}, {Role: procs.Frontend, Processes: 1, PeakRSSMiB: 40}},
			Gossip: Gossip{DeclaredDead: []string{}}},
		{Multiple: 1000, OfferedTasksPerS: 32000, GoodputTasksPerS: 31, GoodputPct: 96.9, AttemptsPerTask: 1.1, SubmitErrors: 9000,
			Roles:  []RoleMemory{{Role: procs.Scheduler, Processes: 1, PeakRSSMiB: 47, GrowthMiB: 5.3}, {Role: procs.Frontend, Processes: 1, PeakRSSMiB: 450}},
			Gossip: Gossip{DeclaredDead: []string{}}},
	}
	var b bytes.Buffer
	if err := WriteTable(&b, pts); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"1000x", "96.9%", "9000", "47.0", "goodput ≥ 95% of capacity at every overload: met (1000x: 96.9%)"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, b.String())
		}
	}
	g := GoodputChart(pts, "test")
	if len(g.Series) != 2 || len(g.Series[0].Points) != 2 || g.Series[0].Points[1] != (plot.Point{X: 1000, Y: 96.9}) {
		t.Errorf("goodput chart series %+v", g.Series)
	}
	r := RSSChart(pts, "test")
	if len(r.Series) != 4 { // scheduler and frontend, peak and growth each
		t.Errorf("RSS chart has %d series, want 4", len(r.Series))
	}
	var svg bytes.Buffer
	if err := g.Write(&svg, "svg"); err != nil || !bytes.Contains(svg.Bytes(), []byte("<svg")) {
		t.Errorf("goodput chart: %v", err)
	}
	svg.Reset()
	if err := r.Write(&svg, "svg"); err != nil || !bytes.Contains(svg.Bytes(), []byte("<svg")) {
		t.Errorf("RSS chart: %v", err)
	}
}
