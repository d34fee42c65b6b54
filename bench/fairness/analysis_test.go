package fairness

import (
	"math"
	"slices"
	"testing"
	"time"

	"github.com/sparrowfleet/sparrow/bench/policy"
)

func TestEligibleMatchesThePaper(t *testing.T) {
	want := map[string][]string{
		"hadoop": {"standard", "high-memory", "cluster", "cluster-gpu"},
		"spark":  {"high-memory"},
		"cuda":   {"cluster-gpu"},
		"mpi":    {"cluster", "cluster-gpu"},
	}
	for _, u := range PaperUsers {
		if got := Eligible(u, PaperTypes); !slices.Equal(got, want[u.Name]) {
			t.Errorf("%s may use %v; want %v", u.Name, got, want[u.Name])
		}
	}
}

// TestPhasesGiveThePaperShares checks the CMMF shares of every phase of
// the timeline against the paper's (§7.3: Spark 1/4; at the end Spark
// 1/4, Hadoop 3/8, MPI 3/8) and the ones derived in the study notes.
func TestPhasesGiveThePaperShares(t *testing.T) {
	ph, err := Phases(PaperEvents, PaperEnd, PaperUsers, PaperTypes, 40)
	if err != nil {
		t.Fatal(err)
	}
	s := time.Second
	want := []struct {
		start, end time.Duration
		target     []float64 // hadoop, spark, cuda, mpi
	}{
		{0, 30 * s, []float64{1, 0, 0, 0}},
		{30 * s, 65 * s, []float64{0.75, 0.25, 0, 0}},
		{65 * s, 100 * s, []float64{0.5, 0.25, 0.25, 0}},
		{100 * s, 200 * s, []float64{0.25, 0.25, 0.25, 0.25}},
		{200 * s, 250 * s, []float64{0.375, 0.25, 0, 0.375}},
		{250 * s, 305 * s, []float64{0.75, 0.25, 0, 0}},
		{305 * s, 360 * s, []float64{0.375, 0.25, 0, 0.375}},
	}
	if len(ph) != len(want) {
		t.Fatalf("got %d phases; want %d: %+v", len(ph), len(want), ph)
	}
	for k, w := range want {
		p := ph[k]
		if p.Start != w.start || p.End != w.end {
			t.Errorf("phase %d is [%v, %v); want [%v, %v)", k, p.Start, p.End, w.start, w.end)
		}
		for i, x := range w.target {
			if math.Abs(p.Target[i]-x) > 1e-9 {
				t.Errorf("phase %d: %s's share %.4f; want %.4f", k, PaperUsers[i].Name, p.Target[i], x)
			}
			if p.Live[i] != (x > 0) {
				t.Errorf("phase %d: %s live = %v", k, PaperUsers[i].Name, p.Live[i])
			}
		}
	}
}

func TestPhasesRejectsBadTimelines(t *testing.T) {
	s := time.Second
	for _, tc := range []struct {
		name   string
		events []Event
	}{
		{"out of order", []Event{{At: 2 * s, User: "hadoop", Arrive: true}, {At: s, User: "spark", Arrive: true}}},
		{"unknown user", []Event{{At: 0, User: "storm", Arrive: true}}},
		{"arrives twice", []Event{{At: 0, User: "hadoop", Arrive: true}, {At: s, User: "hadoop", Arrive: true}}},
		{"leaves while not live", []Event{{At: 0, User: "hadoop"}}},
		{"at the end", []Event{{At: 10 * s, User: "hadoop", Arrive: true}}},
	} {
		if _, err := Phases(tc.events, 10*s, PaperUsers, PaperTypes, 4); err == nil {
			t.Errorf("%s: no error", tc.name)
		}
	}
}

func TestScale(t *testing.T) {
	got := Scale(PaperEvents, 0.2)
	if got[1].At != 6*time.Second || got[3].At != 20*time.Second || got[6].At != 61*time.Second {
		t.Errorf("scaled by 0.2: %+v", got)
	}
	if PaperEvents[1].At != 30*time.Second {
		t.Error("Scale modified its input")
	}
}

// twoPhases: user 0 alone in [0, 4s), then users 0 and 1 at 1/2 each in
// [4s, 8s).
var twoPhases = []Phase{
	{Start: 0, End: 4 * time.Second, Live: []bool{true, false}, Target: []float64{1, 0}},
	{Start: 4 * time.Second, End: 8 * time.Second, Live: []bool{true, true}, Target: []float64{0.5, 0.5}},
}

func TestConvergedDeviation(t *testing.T) {
	s := time.Second
	for _, tc := range []struct {
		name    string
		shares  [][]float64
		settle  time.Duration
		perUser []float64
		bins    []int
		all     float64
	}{
		{
			name:    "exact",
			shares:  [][]float64{{1, 0}, {1, 0}, {1, 0}, {1, 0}, {0.5, 0.5}, {0.5, 0.5}, {0.5, 0.5}, {0.5, 0.5}},
			perUser: []float64{0, 0}, bins: []int{8, 4}, all: 0,
		},
		{
			name:   "settle skips the ramp",
			shares: [][]float64{{0, 0}, {1, 0}, {1, 0}, {1, 0}, {1, 0}, {0.6, 0.4}, {0.5, 0.5}, {0.5, 0.5}},
			settle: 2 * s,
			// user 0: bins 2,3 (dev 0) and 6,7 (dev 0); user 1: bins 6,7.
			perUser: []float64{0, 0}, bins: []int{4, 2}, all: 0,
		},
		{
			name:   "constant error",
			shares: [][]float64{{0.9, 0}, {0.9, 0}, {0.9, 0}, {0.9, 0}, {0.6, 0.3}, {0.6, 0.3}, {0.6, 0.3}, {0.6, 0.3}},
			settle: s,
			// user 0: bins 1-3 at 0.1, bins 5-7 at 0.1; user 1: bins 5-7 at 0.2.
			perUser: []float64{0.1, 0.2}, bins: []int{6, 3}, all: (6*0.1 + 3*0.2) / 9,
		},
		{
			name:    "user never live has no deviation",
			shares:  [][]float64{{1, 0}, {1, 0}, {1, 0}, {1, 0}},
			perUser: []float64{0, math.NaN()}, bins: []int{4, 0}, all: 0,
		},
	} {
		ph := twoPhases
		d := ConvergedDeviation(tc.shares, s, ph, tc.settle)
		for i := range tc.perUser {
			if !near(d.PerUser[i], tc.perUser[i]) || d.Bins[i] != tc.bins[i] {
				t.Errorf("%s: user %d deviation %.4f over %d bins; want %.4f over %d", tc.name, i, d.PerUser[i], d.Bins[i], tc.perUser[i], tc.bins[i])
			}
		}
		if !near(d.All, tc.all) {
			t.Errorf("%s: overall deviation %.4f; want %.4f", tc.name, d.All, tc.all)
		}
	}
}

func TestConvergedDeviationSkipsBinsAcrossPhases(t *testing.T) {
	// 3 s bins: [0,3) is in phase 0, [3,6) straddles the change, [6,9)
	// runs past the end of phase 1.
	d := ConvergedDeviation([][]float64{{1, 0}, {0, 1}, {0, 1}}, 3*time.Second, twoPhases, 0)
	if d.Bins[0] != 1 || d.Bins[1] != 0 || d.PerUser[0] != 0 {
		t.Errorf("got %+v; want one bin for user 0 at deviation 0", d)
	}
}

func near(a, b float64) bool {
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.IsNaN(a) && math.IsNaN(b)
	}
	return math.Abs(a-b) < 1e-9
}

func TestRampUps(t *testing.T) {
	s := time.Second
	users := []string{"a", "b"}
	for _, tc := range []struct {
		name   string
		shares [][]float64
		want   []Ramp
	}{
		{
			name:   "immediate",
			shares: [][]float64{{1, 0}, {1, 0}, {1, 0}, {1, 0}, {0.5, 0.5}, {0.5, 0.5}, {0.5, 0.5}, {0.5, 0.5}},
			want: []Ramp{
				{At: 0, User: "a", From: 0, To: 1, Reached: true, Time: s},
				{At: 4 * s, User: "a", From: 1, To: 0.5, Reached: true, Time: s},
				{At: 4 * s, User: "b", From: 0, To: 0.5, Reached: true, Time: s},
			},
		},
		{
			name:   "slow and within tolerance",
			shares: [][]float64{{0.5, 0}, {0.97, 0}, {1, 0}, {1, 0}, {0.9, 0.1}, {0.7, 0.3}, {0.54, 0.46}, {0.5, 0.5}},
			want: []Ramp{
				{At: 0, User: "a", From: 0, To: 1, Reached: true, Time: 2 * s},
				{At: 4 * s, User: "a", From: 1, To: 0.5, Reached: true, Time: 3 * s},
				{At: 4 * s, User: "b", From: 0, To: 0.5, Reached: true, Time: 3 * s},
			},
		},
		{
			name:   "never",
			shares: [][]float64{{1, 0}, {1, 0}, {1, 0}, {1, 0}, {0.75, 0.25}, {0.75, 0.25}, {0.75, 0.25}, {0.75, 0.25}},
			want: []Ramp{
				{At: 0, User: "a", From: 0, To: 1, Reached: true, Time: s},
				{At: 4 * s, User: "a", From: 1, To: 0.5},
				{At: 4 * s, User: "b", From: 0, To: 0.5},
			},
		},
		{
			name:   "measurement shorter than the phase",
			shares: [][]float64{{1, 0}, {1, 0}},
			want: []Ramp{
				{At: 0, User: "a", From: 0, To: 1, Reached: true, Time: s},
				{At: 4 * s, User: "a", From: 1, To: 0.5},
				{At: 4 * s, User: "b", From: 0, To: 0.5},
			},
		},
	} {
		got := RampUps(tc.shares, users, s, twoPhases, 0.05)
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s:\n got %+v\nwant %+v", tc.name, got, tc.want)
		}
	}
}

func TestRampUpsSkipsUnchangedUsers(t *testing.T) {
	ph := []Phase{
		{Start: 0, End: 2 * time.Second, Live: []bool{true, true}, Target: []float64{0.5, 0.5}},
		{Start: 2 * time.Second, End: 4 * time.Second, Live: []bool{true, true}, Target: []float64{0.52, 0.48}},
	}
	got := RampUps([][]float64{{0.5, 0.5}, {0.5, 0.5}, {0.5, 0.5}, {0.5, 0.5}}, []string{"a", "b"}, time.Second, ph, 0.05)
	if len(got) != 2 || got[0].At != 0 || got[1].At != 0 {
		t.Errorf("got %+v; want only the two ramps at 0", got)
	}
}

func TestIntervals(t *testing.T) {
	s := time.Second
	events := Scale(PaperEvents, 0.1) // 0, 3, 6.5, 10, 20, 25, 30.5; end 36
	for _, tc := range []struct {
		user string
		want []interval
	}{
		{"hadoop", []interval{{0, 36 * s}}},
		{"spark", []interval{{3 * s, 36 * s}}},
		{"cuda", []interval{{6500 * time.Millisecond, 20 * s}}},
		{"mpi", []interval{{10 * s, 25 * s}, {30500 * time.Millisecond, 36 * s}}},
		{"storm", nil},
	} {
		if got := intervals(events, tc.user, 36*s); !slices.Equal(got, tc.want) {
			t.Errorf("%s: got %v; want %v", tc.user, got, tc.want)
		}
	}
}

func TestMaxSwings(t *testing.T) {
	s := time.Second
	two := func(a, b float64) []float64 { return []float64{a, b} }
	phases := []Phase{
		{Start: 0, End: 4 * s, Live: []bool{true, false}, Target: two(1, 0)},
		{Start: 4 * s, End: 8 * s, Live: []bool{true, true}, Target: two(0.5, 0.5)},
	}
	tests := []struct {
		name   string
		shares [][]float64
		settle time.Duration
		want   []float64 // NaN: none
	}{
		{
			name:   "largest step within a phase, bins after settle only",
			shares: [][]float64{two(0, 0), two(1, 0), two(0.9, 0), two(0.95, 0), two(0.2, 0.8), two(0.4, 0.6), two(0.5, 0.5), two(0.45, 0.55)},
			settle: s,
			// Phase 1 converged bins 1-3: steps 0.1, 0.05. Phase 2 bins
			// 5-7: steps 0.1, 0.05 (user 0); 0.1, 0.05 (user 1). The step
			// across phases (bin 3 to 4) is not counted.
			want: []float64{0.1, 0.1},
		},
		{
			name:   "a user never live has none",
			shares: [][]float64{two(1, 0), two(0.5, 0), two(1, 0), two(1, 0)},
			want:   []float64{0.5, math.NaN()},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := MaxSwings(tt.shares, s, phases, tt.settle)
			for i := range tt.want {
				if math.IsNaN(tt.want[i]) != math.IsNaN(got[i]) || (!math.IsNaN(got[i]) && math.Abs(got[i]-tt.want[i]) > 1e-9) {
					t.Fatalf("swings %v, want %v", got, tt.want)
				}
			}
		})
	}
}

func TestGroupBusy(t *testing.T) {
	s := time.Second
	tests := []struct {
		name  string
		spans []policy.Span
		want  []float64
	}{
		{name: "idle", want: []float64{0, 0}},
		{
			// Two groups of 2 nodes x 2 slots over 10 s: 40 slot-seconds
			// each. Group 0: 10 + 10 = 20; group 1: 5 (clipped at the
			// window) + 5 (clipped at 0).
			name: "clipped spans per group",
			spans: []policy.Span{
				{User: "a", Node: 0, Start: 0, End: 10 * s}, {User: "b", Node: 1, Start: 0, End: 10 * s},
				{User: "a", Node: 2, Start: 5 * s, End: 15 * s}, {User: "a", Node: 3, Start: -5 * s, End: 5 * s},
				{User: "a", Node: 9, Start: 0, End: 10 * s}, // no such group
			},
			want: []float64{0.5, 0.25},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := GroupBusy(tt.spans, 2, 2, 2, 10*s); !slices.EqualFunc(got, tt.want, func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }) {
				t.Fatalf("busy %v, want %v", got, tt.want)
			}
		})
	}
}

func TestOfBusy(t *testing.T) {
	got := OfBusy([][]float64{{0.2, 0.2}, {0, 0}, {0.3, 0.1, 0.1}})
	want := [][]float64{{0.5, 0.5}, {0, 0}, {0.6, 0.2, 0.2}}
	for k := range want {
		if !slices.EqualFunc(got[k], want[k], func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }) {
			t.Fatalf("bin %d: %v, want %v", k, got[k], want[k])
		}
	}
}

func TestGroupLongestIdle(t *testing.T) {
	ms := time.Millisecond
	// Two groups of 2 nodes x 2 slots; measured over [100 ms, 1000 ms).
	full := func(node int) []policy.Span {
		return []policy.Span{{User: "a", Node: node, Start: 0, End: time.Second}, {User: "a", Node: node, Start: 0, End: time.Second}}
	}
	tests := []struct {
		name  string
		spans []policy.Span
		want  []time.Duration
	}{
		{name: "nothing ran: the whole window", want: []time.Duration{900 * ms, 900 * ms}},
		{
			name:  "every slot busy throughout",
			spans: slices.Concat(full(0), full(1), full(2), full(3)),
			want:  []time.Duration{0, 0},
		},
		{
			// Node 1's second slot: a task ends at 400 ms, the next
			// starts at 430 ms; node 3's at 700 ms and 800 ms. A task
			// starting as another ends leaves nothing free (node 2).
			name: "gaps between tasks on one slot",
			spans: slices.Concat(full(0), full(2)[:1], full(3)[:1],
				[]policy.Span{
					{User: "a", Node: 1, Start: 0, End: time.Second},
					{User: "a", Node: 1, Start: 0, End: 400 * ms}, {User: "b", Node: 1, Start: 430 * ms, End: time.Second},
					{User: "a", Node: 2, Start: 0, End: 500 * ms}, {User: "a", Node: 2, Start: 500 * ms, End: time.Second},
					{User: "a", Node: 3, Start: 0, End: 700 * ms}, {User: "a", Node: 3, Start: 800 * ms, End: time.Second},
				}),
			want: []time.Duration{30 * ms, 100 * ms},
		},
		{
			// Free before the window's start counts from its start;
			// free at its end counts to its end; spans of unknown nodes
			// are ignored.
			name: "clipped to the window",
			spans: slices.Concat(full(0), full(2), full(3),
				[]policy.Span{
					{User: "a", Node: 1, Start: 0, End: time.Second},
					{User: "a", Node: 1, Start: 150 * ms, End: 950 * ms},
					{User: "a", Node: 7, Start: 0, End: time.Second},
				}),
			want: []time.Duration{50 * ms, 0},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := GroupLongestIdle(tt.spans, 2, 2, 2, 100*ms, time.Second); !slices.Equal(got, tt.want) {
				t.Fatalf("longest idle %v, want %v", got, tt.want)
			}
		})
	}
}
