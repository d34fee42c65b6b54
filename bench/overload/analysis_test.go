package overload

import (
	"math"
	"reflect"
	"testing"
)

func completedOf(s Sample) float64 { return s.Completed }

func TestWindowRate(t *testing.T) {
	at := func(t, v float64) Sample { return Sample{T: t, Completed: v} }
	cases := []struct {
		name     string
		samples  []Sample
		from, to float64
		want     float64
		ok       bool
	}{
		{"steady", []Sample{at(0, 0), at(10, 100), at(20, 300), at(30, 500)}, 10, 30, 20, true},
		{"window edges between samples take the samples inside",
			[]Sample{at(0, 0), at(9.9, 90), at(10.1, 100), at(20, 200), at(30.2, 400)}, 10, 30, (200.0 - 100) / (20 - 10.1), true},
		{"unknown samples are skipped",
			[]Sample{at(10, 100), at(20, unknown), at(30, 300), at(40, unknown)}, 10, 40, 10, true},
		{"one known sample spans no time", []Sample{at(10, 100), at(20, unknown)}, 10, 30, 0, false},
		{"nothing in the window", []Sample{at(0, 0), at(5, 50)}, 10, 30, 0, false},
		{"no samples", nil, 0, 10, 0, false},
	}
	for _, c := range cases {
		got, ok := WindowRate(c.samples, c.from, c.to, completedOf)
		if ok != c.ok || math.Abs(got-c.want) > 1e-9 {
			t.Errorf("%s: got %v, %v; want %v, %v", c.name, got, ok, c.want, c.ok)
		}
	}
}

func TestWindowDelta(t *testing.T) {
	s := []Sample{{T: 0, Accepted: 5}, {T: 10, Accepted: 50}, {T: 20, Accepted: unknown}, {T: 30, Accepted: 250}}
	got, ok := WindowDelta(s, 10, 30, func(s Sample) float64 { return s.Accepted })
	if !ok || got != 200 {
		t.Errorf("got %v, %v; want 200, true", got, ok)
	}
}

func TestWindowMean(t *testing.T) {
	at := func(t, v float64) Sample { return Sample{T: t, Running: v} }
	running := func(s Sample) float64 { return s.Running }
	cases := []struct {
		name     string
		samples  []Sample
		from, to float64
		want     float64
		ok       bool
	}{
		{"inside the window only", []Sample{at(0, 100), at(10, 6), at(20, 8), at(30, 7), at(31, 100)}, 10, 30, 7, true},
		{"unknown skipped", []Sample{at(10, 8), at(20, unknown), at(30, 6)}, 10, 30, 7, true},
		{"none known", []Sample{at(10, unknown)}, 10, 30, 0, false},
	}
	for _, c := range cases {
		got, ok := WindowMean(c.samples, c.from, c.to, running)
		if ok != c.ok || math.Abs(got-c.want) > 1e-9 {
			t.Errorf("%s: got %v, %v; want %v, %v", c.name, got, ok, c.want, c.ok)
		}
	}
}

func TestRSSGrowth(t *testing.T) {
	rss := func(t float64, v ...int64) Sample { return Sample{T: t, RSS: v} }
	cases := []struct {
		name     string
		samples  []Sample
		p        int
		from, to float64
		want     Growth
	}{
		{"flat", []Sample{rss(0, 10), rss(10, 20), rss(20, 20), rss(60, 20)}, 0, 10, 60,
			Growth{Start: 20, End: 20, OK: true}},
		{"growing, second process", []Sample{rss(0, 1, 10), rss(10, 1, 20), rss(30, 1, 25), rss(60, 1, 35)}, 1, 10, 60,
			Growth{Start: 20, End: 35, Growth: 15, MaxRise: 15, OK: true}},
		{"a spike that came back", []Sample{rss(10, 20), rss(30, 50), rss(60, 21)}, 0, 10, 60,
			Growth{Start: 20, End: 21, Growth: 1, MaxRise: 30, OK: true}},
		{"shrinking", []Sample{rss(10, 30), rss(60, 20)}, 0, 10, 60,
			Growth{Start: 30, End: 20, Growth: -10, OK: true}},
		{"unreadable samples skipped", []Sample{rss(10, unknown), rss(20, 20), rss(40, unknown), rss(60, 24)}, 0, 10, 60,
			Growth{Start: 20, End: 24, Growth: 4, MaxRise: 4, OK: true}},
		{"process not sampled", []Sample{rss(10, 20), rss(60, 20)}, 3, 10, 60, Growth{}},
		{"a single sample", []Sample{rss(10, 20)}, 0, 10, 60, Growth{}},
	}
	for _, c := range cases {
		if got := RSSGrowth(c.samples, c.p, c.from, c.to); got != c.want {
			t.Errorf("%s: got %+v, want %+v", c.name, got, c.want)
		}
	}
}

func TestCPUInAndLastPeak(t *testing.T) {
	s := []Sample{
		{T: 0, CPU: []float64{0, 1}, Peak: []int64{5, 6}},
		{T: 10, CPU: []float64{1, 2}, Peak: []int64{7, 8}},
		{T: 60, CPU: []float64{6, unknown}, Peak: []int64{9, unknown}},
	}
	if c, ok := CPUIn(s, 0, 10, 60); !ok || c != 5 {
		t.Errorf("CPU of 0: %v %v, want 5", c, ok)
	}
	if _, ok := CPUIn(s, 1, 10, 60); ok {
		t.Error("CPU of 1: measured from a single known sample")
	}
	if p := LastPeak(s, 0, 60); p != 9 {
		t.Errorf("peak of 0: %d, want 9", p)
	}
	if p := LastPeak(s, 1, 60); p != 8 {
		t.Errorf("peak of 1: %d, want 8 (the last known)", p)
	}
	if p := LastPeak(s, 2, 60); p != unknown {
		t.Errorf("peak of an unsampled process: %d", p)
	}
}

func TestPromValues(t *testing.T) {
	text := []byte(`# HELP sparrow_scheduler_held_calls held now.
# TYPE sparrow_scheduler_held_calls gauge
sparrow_scheduler_held_calls 63
sparrow_scheduler_holds_total 1.234e+03
sparrow_scheduler_hold_seconds_bucket{le="0.01"} 4
sparrow_scheduler_hold_seconds_sum 812.5
sparrow_scheduler_hold_seconds_count 1200
sparrow_rpc_requests_total{method="a b"} 2
sparrow_rpc_requests_total{method="c"} 3
sparrow_scheduler_held_calls_extra 7
broken_metric notanumber
`)
	got := PromValues(text, "sparrow_scheduler_held_calls", "sparrow_scheduler_holds_total",
		"sparrow_scheduler_hold_seconds_sum", "sparrow_rpc_requests_total", "broken_metric", "absent")
	want := map[string]float64{
		"sparrow_scheduler_held_calls":       63,
		"sparrow_scheduler_holds_total":      1234,
		"sparrow_scheduler_hold_seconds_sum": 812.5,
		"sparrow_rpc_requests_total":         5,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

func TestScanGossip(t *testing.T) {
	cases := []struct {
		name, log string
		want      GossipEvents
	}{
		{"quiet", `{"level":"info","message":"scheduler started"}` + "\n", GossipEvents{}},
		{"a suspicion and a declaration",
			`{"level":"info","component":"memberlist","message":"memberlist: Suspect nm2 has failed, no acks received"}
{"level":"info","component":"memberlist","message":"memberlist: Marking nm2 as failed, suspect timeout reached (0 peer confirmations)"}
{"level":"info","component":"memberlist","message":"memberlist: Marking nm2 as failed, suspect timeout reached (1 peer confirmations)"}
{"level":"warn","component":"scheduler","node":"127.62.2.3:20502","running_lost":2,"message":"node monitor lost"}
`, GossipEvents{Declared: map[string]int{"nm2": 2}, Suspected: map[string]int{"nm2": 1}, NodeMonitorsLost: 1}},
		{"refutations",
			`{"level":"warn","message":"memberlist: Refuting a suspect message (from: sched0)"}
{"level":"warn","message":"memberlist: Refuting a dead message (from: sched0)"}
`, GossipEvents{RefutedDead: 1, RefutedSuspect: 1}},
	}
	for _, c := range cases {
		if got := ScanGossip([]byte(c.log)); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: got %+v, want %+v", c.name, got, c.want)
		}
	}
}

func TestMergeGossip(t *testing.T) {
	by := map[string]GossipEvents{
		"sched0": {Declared: map[string]int{"nm2": 1}, Suspected: map[string]int{"nm2": 1, "nm1": 1}, NodeMonitorsLost: 1},
		"nm0":    {Declared: map[string]int{"nm2": 1}},
		"nm1":    {RefutedSuspect: 1},
		"nm3":    {RefutedDead: 1},
	}
	samples := []Sample{{View: 4}, {View: unknown}, {View: 3}, {View: 4}}
	got := MergeGossip(by, samples)
	want := Gossip{DeclaredDead: []string{"nm2", "nm3"}, Declarations: 2, Suspicions: 2, Refutations: 2, NodeMonitorsLost: 1, MinView: 3}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
	quiet := MergeGossip(nil, []Sample{{View: unknown}})
	if len(quiet.DeclaredDead) != 0 || quiet.DeclaredDead == nil || quiet.MinView != unknown {
		t.Errorf("quiet: %+v, want an empty (not nil) list and an unknown view", quiet)
	}
}
