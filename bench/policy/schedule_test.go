package policy

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

func TestStepSchedule(t *testing.T) {
	s := StepSchedule(10*time.Second, 0, 0.25, 0.5, 0.25, 0)
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	if s.End() != 50*time.Second {
		t.Fatalf("End = %v, want 50s", s.End())
	}
	for _, c := range []struct {
		at   time.Duration
		want float64
	}{{0, 0}, {9999 * time.Millisecond, 0}, {10 * time.Second, 0.25}, {25 * time.Second, 0.5}, {39 * time.Second, 0.25}, {45 * time.Second, 0}, {50 * time.Second, 0}, {-time.Second, 0}} {
		if got := s.LoadAt(c.at); got != c.want {
			t.Errorf("LoadAt(%v) = %v, want %v", c.at, got, c.want)
		}
	}
	got := s.Breakpoints(5*time.Second, 30*time.Second)
	want := []time.Duration{10 * time.Second, 20 * time.Second}
	if !slices.Equal(got, want) {
		t.Errorf("Breakpoints = %v, want %v", got, want)
	}
	if bp := s.Breakpoints(10*time.Second, 20*time.Second); len(bp) != 0 {
		t.Errorf("Breakpoints of an exact step = %v, want none (ends are exclusive)", bp)
	}
}

func TestScheduleValidate(t *testing.T) {
	bad := []Schedule{
		nil,
		{{Start: time.Second, End: 2 * time.Second, Load: 1}},
		{{Start: 0, End: 0, Load: 1}},
		{{Start: 0, End: time.Second, Load: -1}},
		{{Start: 0, End: time.Second, Load: math.NaN()}},
		{{Start: 0, End: time.Second, Load: 1}, {Start: 2 * time.Second, End: 3 * time.Second, Load: 1}},
	}
	for i, s := range bad {
		if err := s.Validate(); err == nil {
			t.Errorf("case %d: %v validated", i, s)
		}
	}
	if err := Constant(time.Second, 0).Validate(); err != nil {
		t.Errorf("a zero-load step is valid: %v", err)
	}
}

func TestJobRate(t *testing.T) {
	// The paper's HP user: 25% of 40 slots with jobs of 10 x 100 ms.
	if got := JobRate(0.25, 40, 10, 100*time.Millisecond); math.Abs(got-10) > 1e-9 {
		t.Fatalf("JobRate = %v, want 10 jobs/s", got)
	}
	if JobRate(1, 0, 10, time.Second) != 0 || JobRate(1, 1, 1, 0) != 0 {
		t.Fatal("degenerate JobRate should be 0")
	}
}

func TestArrivalsFollowTheSchedule(t *testing.T) {
	s := StepSchedule(100*time.Second, 0, 1, 3, 0)
	rng := rand.New(rand.NewPCG(7, 8))
	arr := Arrivals(rng, s, 50) // 0, 50, 150, 0 jobs/s
	if !slices.IsSorted(arr) {
		t.Fatal("arrivals not in time order")
	}
	counts := make([]int, len(s))
	for _, a := range arr {
		if a < 0 || a >= s.End() {
			t.Fatalf("arrival %v outside the schedule", a)
		}
		counts[int(a/(100*time.Second))]++
	}
	if counts[0] != 0 || counts[3] != 0 {
		t.Fatalf("arrivals in zero-load steps: %v", counts)
	}
	for i, want := range []float64{0, 5000, 15000, 0} {
		if want == 0 {
			continue
		}
		// Poisson: sd = sqrt(mean); allow 5 sd.
		if d := math.Abs(float64(counts[i]) - want); d > 5*math.Sqrt(want) {
			t.Errorf("step %d: %d arrivals, want about %v", i, counts[i], want)
		}
	}
	// Deterministic for a seed.
	again := Arrivals(rand.New(rand.NewPCG(7, 8)), s, 50)
	if !slices.Equal(arr, again) {
		t.Fatal("arrivals differ for the same seed")
	}
}

func TestMerge(t *testing.T) {
	got := Merge([]time.Duration{1, 5, 9}, []time.Duration{2, 5}, nil)
	want := []Arrival{{1, 0}, {2, 1}, {5, 0}, {5, 1}, {9, 0}}
	if !slices.Equal(got, want) {
		t.Fatalf("Merge = %v, want %v", got, want)
	}
}

func TestParseWeights(t *testing.T) {
	w, err := ParseWeights("1:3")
	if err != nil || w != [2]float64{1, 3} {
		t.Fatalf("ParseWeights(1:3) = %v, %v", w, err)
	}
	if w, err := ParseWeights(" 0.5 : 2 "); err != nil || w != [2]float64{0.5, 2} {
		t.Fatalf("ParseWeights with spaces = %v, %v", w, err)
	}
	for _, s := range []string{"", "1", "1:0", "-1:1", "a:1", "1:NaN", "1:Inf", "1:2:3"} {
		if _, err := ParseWeights(s); err == nil {
			t.Errorf("ParseWeights(%q) accepted", s)
		}
	}
}

func TestCheckLoads(t *testing.T) {
	if err := CheckLoads("x", []float64{0, 0.25, 1.75}); err != nil {
		t.Fatal(err)
	}
	for _, l := range [][]float64{nil, {-0.1}, {math.Inf(1)}, {math.NaN()}} {
		if CheckLoads("x", l) == nil {
			t.Errorf("CheckLoads(%v) accepted", l)
		}
	}
}
