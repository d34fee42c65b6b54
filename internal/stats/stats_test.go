package stats

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestQuantile(t *testing.T) {
	for _, tc := range []struct {
		name   string
		sorted []float64
		q      float64
		want   float64
	}{
		{"median of an even count is the lower middle", []float64{1, 2, 3, 4}, 0.5, 2},
		{"median of an odd count is the middle", []float64{1, 2, 3}, 0.5, 2},
		{"q 0 is the first", []float64{1, 2, 3, 4}, 0, 1},
		{"q 1 is the last", []float64{1, 2, 3, 4}, 1, 4},
		{"p95 of four is the last", []float64{1, 2, 3, 4}, 0.95, 4},
		{"p99 of 100 is the 99th", seq(100), 0.99, 99},
		{"p50 of 1000 is the 500th", seq(1000), 0.5, 500},
		{"one sample", []float64{7}, 0.3, 7},
	} {
		if got := Quantile(tc.sorted, tc.q); got != tc.want {
			t.Errorf("%s: Quantile(%v) = %v, want %v", tc.name, tc.q, got, tc.want)
		}
	}
	if got := Quantile(nil, 0.5); !math.IsNaN(got) {
		t.Errorf("Quantile of no samples = %v, want NaN", got)
	}
}

// TestQuantileAgainstCounting checks Quantile against the definition read
// literally: the smallest sample with at least a fraction q of the samples
// at or below it.
func TestQuantileAgainstCounting(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 500 {
		xs := make([]float64, 1+rng.IntN(40))
		for i := range xs {
			xs[i] = float64(rng.IntN(10))
		}
		slices.Sort(xs)
		q := rng.Float64()
		var want float64
		for _, x := range xs {
			atOrBelow := 0
			for _, y := range xs {
				if y <= x {
					atOrBelow++
				}
			}
			if float64(atOrBelow) >= q*float64(len(xs)) {
				want = x
				break
			}
		}
		if got := Quantile(xs, q); got != want {
			t.Fatalf("Quantile(%v, %v) = %v, want %v", xs, q, got, want)
		}
	}
}

func seq(n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = float64(i + 1)
	}
	return out
}
