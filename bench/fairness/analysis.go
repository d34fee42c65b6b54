package fairness

import (
	"cmp"
	"math"
	"slices"
	"time"

	"github.com/sparrowfleet/sparrow/bench/policy"
)

// Deviation is how far users' measured shares were from their CMMF
// shares once converged.
type Deviation struct {
	// PerUser[i] is the mean absolute difference between user i's share
	// and its CMMF share over the converged bins of the phases in which it
	// was live; NaN if there were none.
	PerUser []float64
	// Bins[i] counts those bins.
	Bins []int
	// All is the mean over every (live user, converged bin) pair.
	All float64
}

// ConvergedDeviation compares shares (shares[k][i]: user i's share of the
// cluster in bin [k·bin, (k+1)·bin), as policy.Shares returns) with the
// phases' CMMF targets. A bin counts as converged when it lies wholly in
// one phase and starts at least settle after that phase began, so the
// ramp after each arrival or departure is left out (it is measured by
// RampUps instead). A user is counted only in the phases where it is
// live: after leaving, its last tasks drain, and before arriving its
// share is trivially zero.
func ConvergedDeviation(shares [][]float64, bin time.Duration, phases []Phase, settle time.Duration) Deviation {
	n := 0
	if len(phases) > 0 {
		n = len(phases[0].Target)
	}
	sum := make([]float64, n)
	d := Deviation{PerUser: make([]float64, n), Bins: make([]int, n)}
	allSum, allN := 0.0, 0
	if bin <= 0 {
		return d
	}
	for _, p := range phases {
		first := ceilDiv(p.Start+settle, bin)
		for k := first; k < len(shares) && time.Duration(k+1)*bin <= p.End; k++ {
			for i := range n {
				if !isLive(p, i) || i >= len(shares[k]) {
					continue
				}
				dev := math.Abs(shares[k][i] - p.Target[i])
				sum[i] += dev
				d.Bins[i]++
				allSum += dev
				allN++
			}
		}
	}
	for i := range n {
		d.PerUser[i] = math.NaN()
		if d.Bins[i] > 0 {
			d.PerUser[i] = sum[i] / float64(d.Bins[i])
		}
	}
	d.All = math.NaN()
	if allN > 0 {
		d.All = allSum / float64(allN)
	}
	return d
}

// isLive reports whether user i is live in p.
func isLive(p Phase, i int) bool { return i < len(p.Live) && p.Live[i] }

func ceilDiv(a, b time.Duration) int {
	if a <= 0 {
		return 0
	}
	return int((a + b - 1) / b)
}

// Ramp is how long one user took to come within tolerance of its new CMMF
// share after the live set changed.
type Ramp struct {
	// At is when the phase began (the arrival or departure), User the user
	// whose share changed, From and To its CMMF shares before and after.
	At       time.Duration
	User     string
	From, To float64
	// Reached says whether the user came within tolerance before the phase
	// ended; Time is then from At to the end of the first bin in which
	// its share was within tolerance (an upper bound, at bin resolution).
	Reached bool
	Time    time.Duration
}

// RampUps measures, at the start of every phase, each user whose CMMF
// share changed by more than tol: the time until its share in a bin first
// came within tol (absolute, as a fraction of the cluster) of its new
// share. Only bins that start at or after the phase's start and end by its
// end are looked at. users names shares' columns.
func RampUps(shares [][]float64, users []string, bin time.Duration, phases []Phase, tol float64) []Ramp {
	var out []Ramp
	if bin <= 0 {
		return nil
	}
	for j, p := range phases {
		for i, u := range users {
			if i >= len(p.Target) {
				break
			}
			from := 0.0
			if j > 0 {
				from = phases[j-1].Target[i]
			}
			to := p.Target[i]
			if math.Abs(to-from) <= tol {
				continue
			}
			r := Ramp{At: p.Start, User: u, From: from, To: to}
			for k := ceilDiv(p.Start, bin); k < len(shares) && time.Duration(k+1)*bin <= p.End; k++ {
				if i < len(shares[k]) && math.Abs(shares[k][i]-to) <= tol {
					r.Reached, r.Time = true, time.Duration(k+1)*bin-p.Start
					break
				}
			}
			out = append(out, r)
		}
	}
	return out
}

// MaxSwings returns, per user, the largest change of its share between
// two consecutive converged bins of one phase in which it is live (the
// bins ConvergedDeviation counts); NaN if it had no such pair.
func MaxSwings(shares [][]float64, bin time.Duration, phases []Phase, settle time.Duration) []float64 {
	n := 0
	if len(phases) > 0 {
		n = len(phases[0].Target)
	}
	out := make([]float64, n)
	for i := range out {
		out[i] = math.NaN()
	}
	if bin <= 0 {
		return out
	}
	for _, p := range phases {
		first := ceilDiv(p.Start+settle, bin)
		for k := first + 1; k < len(shares) && time.Duration(k+1)*bin <= p.End; k++ {
			for i := range n {
				if !isLive(p, i) || i >= len(shares[k]) || i >= len(shares[k-1]) {
					continue
				}
				d := math.Abs(shares[k][i] - shares[k-1][i])
				if math.IsNaN(out[i]) || d > out[i] {
					out[i] = d
				}
			}
		}
	}
	return out
}

// GroupBusy returns, for each group of nodes (group g holds nodes
// g·perGroup to (g+1)·perGroup-1, each with slots slots), the fraction of
// its slot-time over [0, window) that tasks occupied.
func GroupBusy(spans []policy.Span, groups, perGroup, slots int, window time.Duration) []float64 {
	busy := make([]float64, groups)
	if perGroup <= 0 || slots <= 0 || window <= 0 {
		return busy
	}
	for _, s := range spans {
		g := s.Node / perGroup
		if s.Node < 0 || g >= groups {
			continue
		}
		if d := min(s.End, window) - max(s.Start, 0); d > 0 {
			busy[g] += d.Seconds()
		}
	}
	for g := range busy {
		busy[g] /= float64(perGroup*slots) * window.Seconds()
	}
	return busy
}

// OfBusy returns each bin's shares as fractions of the slots busy in that
// bin (shares[k][i] / Σ_j shares[k][j]; a bin with nothing busy stays 0):
// how the work that ran was split, apart from how much of the fleet was
// busy. On a host short of CPU every user's share of the whole fleet
// falls with the fleet's utilisation, and swings with it from bin to bin,
// whatever the queues decide.
func OfBusy(shares [][]float64) [][]float64 {
	out := make([][]float64, len(shares))
	for k, row := range shares {
		sum := 0.0
		for _, x := range row {
			sum += x
		}
		out[k] = make([]float64, len(row))
		if sum > 0 {
			for i, x := range row {
				out[k][i] = x / sum
			}
		}
	}
	return out
}

// GroupLongestIdle returns, for each group of nodes (as GroupBusy), the
// longest stretch of [from, window) during which one node of the group
// kept a slot free: fewer than slots of its tasks running, from the end of
// one task to the start of the next there, or a node that ran nothing.
// With every user of a group backlogged on it, a stretch much longer than
// the time a node monitor takes to start its next task is a slot idling
// while queued work could run on it.
func GroupLongestIdle(spans []policy.Span, groups, perGroup, slots int, from, window time.Duration) []time.Duration {
	out := make([]time.Duration, groups)
	if perGroup <= 0 || slots <= 0 || window <= from {
		return out
	}
	type edge struct {
		at    time.Duration
		delta int
	}
	edges := make([][]edge, groups*perGroup)
	for _, s := range spans {
		if s.Node < 0 || s.Node >= len(edges) {
			continue
		}
		start, end := max(s.Start, from), min(s.End, window)
		if end <= start {
			continue
		}
		edges[s.Node] = append(edges[s.Node], edge{start, 1}, edge{end, -1})
	}
	for node, es := range edges {
		// Starts before ends at the same instant: a task that starts as
		// another ends leaves no slot free.
		slices.SortFunc(es, func(a, b edge) int {
			if c := cmp.Compare(a.at, b.at); c != 0 {
				return c
			}
			return cmp.Compare(b.delta, a.delta)
		})
		g := node / perGroup
		running, freeSince := 0, from
		for _, e := range es {
			was := running
			running += e.delta
			switch {
			case was < slots && running >= slots:
				out[g] = max(out[g], e.at-freeSince)
			case was >= slots && running < slots:
				freeSince = e.at
			}
		}
		if running < slots {
			out[g] = max(out[g], window-freeSince)
		}
	}
	return out
}
