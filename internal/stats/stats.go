package stats

import (
	"math"
	"slices"
	"time"
)

// Quantile is the module's one definition of a quantile, used by the
// simulators and the benchmarks alike: the q-quantile (q in [0, 1]) of
// sorted samples by the nearest-rank method, the smallest sample with at
// least a fraction q of the samples at or below it (the first for q = 0).
// It is always one of the samples, never an interpolation between two.
// NaN for no samples.
func Quantile(sorted []float64, q float64) float64 {
	if len(sorted) == 0 {
		return math.NaN()
	}
	rank := int(math.Ceil(q * float64(len(sorted))))
	return sorted[min(max(rank, 1), len(sorted))-1]
}

// Summary is a distribution's usual figures, in milliseconds.
type Summary struct {
	N    int     `json:"n"`
	Mean float64 `json:"mean"`
	P50  float64 `json:"p50"`
	P95  float64 `json:"p95"`
	P99  float64 `json:"p99"`
	Max  float64 `json:"max"`
}

// Summarize sorts samples in place and summarises them; its percentiles
// are Quantile's.
func Summarize(samples []float64) Summary {
	if len(samples) == 0 {
		return Summary{}
	}
	slices.Sort(samples)
	sum := 0.0
	for _, v := range samples {
		sum += v
	}
	return Summary{
		N:    len(samples),
		Mean: sum / float64(len(samples)),
		P50:  Quantile(samples, 0.50),
		P95:  Quantile(samples, 0.95),
		P99:  Quantile(samples, 0.99),
		Max:  samples[len(samples)-1],
	}
}

// Millis converts a duration to fractional milliseconds.
func Millis(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
