package stats

import (
	"math"
	"slices"
	"time"
)

// Percentile returns the p-th percentile (0..100) of sorted samples by the
// nearest-rank method, or 0 for no samples.
func Percentile(sorted []float64, p float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(math.Ceil(p / 100 * float64(len(sorted))))
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

// Summarize sorts samples in place and summarises them.
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
		P50:  Percentile(samples, 50),
		P95:  Percentile(samples, 95),
		P99:  Percentile(samples, 99),
		Max:  samples[len(samples)-1],
	}
}

// Millis converts a duration to fractional milliseconds.
func Millis(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
