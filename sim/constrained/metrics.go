package constrained

import (
	"math"
	"slices"
)

var nan = math.NaN()

// SortedRMSE is the paper's allocation distance (§7.1): the root mean
// square difference between the two allocation vectors, each sorted, in
// percent of total. The shorter vector is padded with zeros (users the
// other run no longer has count as holding nothing).
func SortedRMSE(a, b []float64, total float64) float64 {
	n := max(len(a), len(b))
	if n == 0 {
		return nan
	}
	x := make([]float64, n)
	y := make([]float64, n)
	copy(x[n-len(a):], a)
	copy(y[n-len(b):], b)
	slices.Sort(x)
	slices.Sort(y)
	s := 0.0
	for i := range x {
		d := (x[i] - y[i]) / total * 100
		s += d * d
	}
	return math.Sqrt(s / float64(n))
}

// PairRMSE compares two runs' samples taken at the same time: the union
// of the jobs active in either run, each run's running tasks (zero where
// the job is not active in it), sorted, by SortedRMSE.
func PairRMSE(a, b []Share, total float64) float64 {
	if len(a) == 0 && len(b) == 0 {
		return nan
	}
	inB := make(map[int32]bool, len(b))
	for _, s := range b {
		inB[s.Job] = true
	}
	inA := make(map[int32]bool, len(a))
	var x, y []float64
	for _, s := range a {
		inA[s.Job] = true
		x = append(x, float64(s.Running))
		if !inB[s.Job] {
			y = append(y, 0)
		}
	}
	for _, s := range b {
		y = append(y, float64(s.Running))
		if !inA[s.Job] {
			x = append(x, 0)
		}
	}
	return SortedRMSE(x, y, total)
}
