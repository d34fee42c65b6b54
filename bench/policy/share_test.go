package policy

import (
	"math"
	"testing"
	"time"
)

const eps = 1e-9

func near(a, b float64) bool { return math.Abs(a-b) < 1e-6 }

func nearAll(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !near(a[i], b[i]) {
			return false
		}
	}
	return true
}

func ms(n int) time.Duration { return time.Duration(n) * time.Millisecond }

func TestShares(t *testing.T) {
	spans := []Span{
		{User: "a", Start: 0, End: ms(1500)},
		{User: "b", Start: ms(500), End: ms(2000)},
		{User: "a", Start: ms(-500), End: ms(250)},  // clipped at 0
		{User: "b", Start: ms(2200), End: ms(9000)}, // clipped at the window
		{User: "c", Start: 0, End: ms(2500)},        // not a listed user
		{User: "a", Start: ms(3000), End: ms(4000)}, // outside the window
	}
	got := Shares(spans, []string{"a", "b"}, 2, time.Second, ms(2500))
	want := [][]float64{
		{(1 + 0.25) / 2, 0.5 / 2},
		{0.5 / 2, 1.0 / 2},
		{0, 0.3 / (2 * 0.5)}, // partial bin of 0.5s
	}
	if len(got) != len(want) {
		t.Fatalf("%d bins, want %d", len(got), len(want))
	}
	for k := range want {
		if !nearAll(got[k], want[k]) {
			t.Errorf("bin %d: %v, want %v", k, got[k], want[k])
		}
	}
	if Shares(spans, []string{"a"}, 0, time.Second, time.Second) != nil {
		t.Error("zero slots should give no bins")
	}
}

func TestMaxMinFair(t *testing.T) {
	cases := []struct {
		name           string
		demand, weight []float64
		capacity       float64
		want           []float64
	}{
		// The paper's Figure 11: user 0 saturates, user 1 steps 0, .25, .5.
		{"paper user1 idle", []float64{1, 0}, []float64{1, 1}, 1, []float64{1, 0}},
		{"paper user1 25%", []float64{1, 0.25}, []float64{1, 1}, 1, []float64{0.75, 0.25}},
		{"paper user1 50%", []float64{1, 0.5}, []float64{1, 1}, 1, []float64{0.5, 0.5}},
		// Weights 1:3: user1's share (75%) exceeds its demand, so it gets
		// its demand and user0 the rest.
		{"1:3 user1 50%", []float64{1, 0.5}, []float64{1, 3}, 1, []float64{0.5, 0.5}},
		{"1:3 both saturate", []float64{1, 1}, []float64{1, 3}, 1, []float64{0.25, 0.75}},
		// Weights 3:1: user1 is capped at 25%.
		{"3:1 user1 50%", []float64{1, 0.5}, []float64{3, 1}, 1, []float64{0.75, 0.25}},
		{"underloaded", []float64{0.2, 0.3}, []float64{1, 1}, 1, []float64{0.2, 0.3}},
		{"three users", []float64{0.1, 1, 1}, []float64{1, 1, 2}, 1, []float64{0.1, 0.3, 0.6}},
		{"cascade", []float64{0.1, 0.35, 5}, []float64{1, 1, 1}, 1, []float64{0.1, 0.35, 0.55}},
		{"absolute capacity", []float64{400, 100}, nil, 400, []float64{300, 100}},
		{"nobody", []float64{0, 0}, []float64{1, 1}, 1, []float64{0, 0}},
	}
	for _, c := range cases {
		got := MaxMinFair(c.capacity, c.demand, c.weight)
		if !nearAll(got, c.want) {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
		sum := 0.0
		for i, a := range got {
			sum += a
			if a > c.demand[i]+eps {
				t.Errorf("%s: user %d gets %v above its demand %v", c.name, i, a, c.demand[i])
			}
		}
		if sum > c.capacity+eps {
			t.Errorf("%s: allocates %v of %v", c.name, sum, c.capacity)
		}
	}
}

func TestFairShareOverStraddlesAChange(t *testing.T) {
	scheds := []Schedule{Constant(20*time.Second, 1), StepSchedule(10*time.Second, 0, 0.5)}
	// Half the bin at (1, 0), half at (0.5, 0.5).
	got := FairShareOver(scheds, []float64{1, 1}, ms(9500), ms(10500))
	if !nearAll(got, []float64{0.75, 0.25}) {
		t.Fatalf("straddling bin: %v, want [0.75 0.25]", got)
	}
	if got := FairShareOver(scheds, []float64{1, 1}, ms(12000), ms(13000)); !nearAll(got, []float64{0.5, 0.5}) {
		t.Fatalf("inside a step: %v", got)
	}
}

func TestMeanAbsDev(t *testing.T) {
	if got := MeanAbsDev([]float64{0.5, 0.7, 0.1}, []float64{0.5, 0.5, 0.5}); !near(got, 0.2) {
		t.Fatalf("MAD = %v, want 0.2", got)
	}
	if !math.IsNaN(MeanAbsDev(nil, nil)) {
		t.Fatal("MAD of nothing should be NaN")
	}
}

// spansAt builds spans that keep n slots busy for user during [a, b), as
// back-to-back tasks of length d.
func spansAt(user string, n int, a, b, d time.Duration) []Span {
	var out []Span
	for s := 0; s < n; s++ {
		for t := a; t < b; t += d {
			out = append(out, Span{User: user, Node: s, Start: t, End: min(t+d, b)})
		}
	}
	return out
}

func TestAnalyzeFairnessPerfectRun(t *testing.T) {
	// 40 slots; user1 steps 0, 25%, 50%, 25%, 0 over 2s intervals, user0
	// gets the rest: a perfect max-min run.
	iv := 2 * time.Second
	loads := []float64{0, 0.25, 0.5, 0.25, 0}
	var spans []Span
	for i, l := range loads {
		a, b := time.Duration(i)*iv, time.Duration(i+1)*iv
		u1 := int(l * 40)
		spans = append(spans, spansAt("user1", u1, a, b, ms(100))...)
		spans = append(spans, spansAt("user0", 40-u1, a, b, ms(100))...)
	}
	scheds := []Schedule{Constant(10*time.Second, 1), StepSchedule(iv, loads...)}
	fa, err := AnalyzeFairness(spans, []string{"user0", "user1"}, []float64{1, 1}, scheds, 40, time.Second, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if len(fa.Rows) != 10 {
		t.Fatalf("%d rows, want 10", len(fa.Rows))
	}
	for u := range 2 {
		if !near(fa.MAD[u], 0) || !near(fa.MADSettled[u], 0) {
			t.Errorf("user %d: MAD %v / %v, want 0", u, fa.MAD[u], fa.MADSettled[u])
		}
	}
	if !near(fa.Utilisation, 1) {
		t.Errorf("utilisation %v, want 1", fa.Utilisation)
	}
	if len(fa.Intervals) != 5 {
		t.Fatalf("%d intervals, want 5", len(fa.Intervals))
	}
	for i, l := range loads {
		got := fa.Intervals[i]
		if !nearAll(got.Demand, []float64{1, l}) || !nearAll(got.Fair, []float64{1 - l, l}) || !nearAll(got.Measured, []float64{1 - l, l}) || !nearAll(got.MAD, []float64{0, 0}) {
			t.Errorf("interval %d: %+v", i, got)
		}
	}
}

func TestAnalyzeFairnessDeviation(t *testing.T) {
	// user1 never gets anything while demanding 50%: its MAD is 0.5 in the
	// 50% interval; user0 runs everything.
	scheds := []Schedule{Constant(4*time.Second, 1), StepSchedule(2*time.Second, 0, 0.5)}
	spans := spansAt("user0", 4, 0, 4*time.Second, ms(100))
	fa, err := AnalyzeFairness(spans, []string{"user0", "user1"}, []float64{1, 1}, scheds, 4, time.Second, 4*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if !near(fa.MAD[1], 0.25) || !near(fa.MAD[0], 0.25) {
		t.Fatalf("MAD %v, want [0.25 0.25] (0.5 off in half the bins)", fa.MAD)
	}
	// Settled leaves out the bin at 2s (the change): bins 0, 1, 3 remain.
	if !near(fa.MADSettled[1], 0.5/3) {
		t.Fatalf("settled MAD %v, want %v", fa.MADSettled[1], 0.5/3)
	}
	if iv := fa.Intervals; !nearAll(iv[0].MAD, []float64{0, 0}) || !nearAll(iv[1].MAD, []float64{0.5, 0.5}) {
		t.Fatalf("interval MADs %v %v, want [0 0] [0.5 0.5]", iv[0].MAD, iv[1].MAD)
	}
	// user1 offers three jobs of 1 slot-second each in [2s, 4s) on 4 slots.
	fa.SetOffered([][]time.Duration{nil, {ms(2100), ms(2500), ms(3999), ms(4000)}}, []time.Duration{time.Second, time.Second}, 4)
	if got := fa.Intervals[1].Offered; !nearAll(got, []float64{0, 0.375}) || !nearAll(fa.Intervals[0].Offered, []float64{0, 0}) {
		t.Fatalf("offered %v, want [0 0.375]", got)
	}
	if _, err := AnalyzeFairness(spans, []string{"user0"}, nil, scheds, 4, time.Second, time.Second); err == nil {
		t.Fatal("mismatched users and schedules accepted")
	}
}

func TestPlacementAndUtilisation(t *testing.T) {
	spans := []Span{
		{User: "c", Node: 0, Start: 0, End: time.Second},
		{User: "c", Node: 1, Start: 0, End: time.Second},
		{User: "f", Node: 0, Start: 0, End: time.Second},
		{User: "f", Node: 3, Start: 0, End: 2 * time.Second},
		{User: "f", Node: -1, Start: 0, End: time.Second},
	}
	attr := func(n int) bool { return n < 2 }
	pl := PlacementOf(spans, []string{"c", "f"}, attr)
	if pl[0] != (Placement{"c", 2, 0}) || pl[1] != (Placement{"f", 1, 1}) {
		t.Fatalf("placement %+v", pl)
	}
	// Attr nodes: 2 nodes x 2 slots x 2s = 8 slot-s, 3 busy.
	if got := NodeUtilisation(spans, attr, 2, 2, 2*time.Second); !near(got, 3.0/8) {
		t.Fatalf("attr utilisation %v, want 0.375", got)
	}
	// Others: 2 nodes x 2 slots x 1s window, 1 slot-s busy (clipped).
	if got := NodeUtilisation(spans, func(n int) bool { return !attr(n) }, 2, 2, time.Second); !near(got, 0.25) {
		t.Fatalf("other utilisation %v, want 0.25", got)
	}
}
