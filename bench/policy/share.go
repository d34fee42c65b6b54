package policy

import (
	"fmt"
	"math"
	"slices"
	"time"
)

// Span is one task's run on an executor, as offsets from the experiment's
// start: from the executor starting it to it finishing. A task still
// running when the measurement stops has End set to that moment.
type Span struct {
	User       string
	Node       int
	Start, End time.Duration
}

// Shares returns, for each bin [k·bin, (k+1)·bin) of [0, window), each
// user's share of the cluster: the slot-time its tasks occupied in the bin
// divided by slots·bin. Spans are clipped to the bin; spans of users not
// listed are ignored (they still occupy slots, so shares need not sum to
// 1). A final partial bin is measured over its actual length.
func Shares(spans []Span, users []string, slots int, bin, window time.Duration) [][]float64 {
	if bin <= 0 || window <= 0 || slots <= 0 {
		return nil
	}
	nb := int((window + bin - 1) / bin)
	col := make(map[string]int, len(users))
	for i, u := range users {
		col[u] = i
	}
	busy := make([][]float64, nb) // seconds of slot-time
	for k := range busy {
		busy[k] = make([]float64, len(users))
	}
	for _, s := range spans {
		c, ok := col[s.User]
		if !ok {
			continue
		}
		a, b := max(s.Start, 0), min(s.End, window)
		if b <= a {
			continue
		}
		for k := int(a / bin); k < nb; k++ {
			lo, hi := time.Duration(k)*bin, min(time.Duration(k+1)*bin, window)
			if lo >= b {
				break
			}
			if ov := min(b, hi) - max(a, lo); ov > 0 {
				busy[k][c] += ov.Seconds()
			}
		}
	}
	for k := range busy {
		lo, hi := time.Duration(k)*bin, min(time.Duration(k+1)*bin, window)
		capacity := float64(slots) * (hi - lo).Seconds()
		for c := range busy[k] {
			busy[k][c] /= capacity
		}
	}
	return busy
}

// MaxMinFair returns the weighted max-min fair allocation of capacity
// among users with the given demands (same units as capacity) by water
// filling: a user demanding less than its weighted share of what is left
// gets its demand, and what it leaves is split among the others in
// proportion to their weights. Users with zero demand get zero. Weights
// must be positive; a missing weight is 1.
func MaxMinFair(capacity float64, demands, weights []float64) []float64 {
	alloc := make([]float64, len(demands))
	active := make([]bool, len(demands))
	n := 0
	for i, d := range demands {
		if d > 0 {
			active[i] = true
			n++
		}
	}
	w := func(i int) float64 {
		if i < len(weights) && weights[i] > 0 {
			return weights[i]
		}
		return 1
	}
	left := capacity
	for n > 0 && left > 0 {
		total := 0.0
		for i := range demands {
			if active[i] {
				total += w(i)
			}
		}
		satisfied := false
		for i, d := range demands {
			if active[i] && d <= left*w(i)/total {
				alloc[i], active[i] = d, false
				left -= d
				n--
				satisfied = true
			}
		}
		if !satisfied {
			for i := range demands {
				if active[i] {
					alloc[i] = left * w(i) / total
				}
			}
			break
		}
	}
	return alloc
}

// FairShareOver returns each user's max-min fair share of a capacity of 1,
// averaged over [a, b): demands come from the users' schedules, and the
// interval is split at every step boundary so a bin straddling a change
// gets the time-weighted mean.
func FairShareOver(schedules []Schedule, weights []float64, a, b time.Duration) []float64 {
	out := make([]float64, len(schedules))
	if b <= a {
		return out
	}
	cuts := []time.Duration{a}
	for _, s := range schedules {
		cuts = append(cuts, s.Breakpoints(a, b)...)
	}
	cuts = append(cuts, b)
	slices.Sort(cuts)
	for i := 0; i+1 < len(cuts); i++ {
		lo, hi := cuts[i], cuts[i+1]
		if hi <= lo {
			continue
		}
		demands := make([]float64, len(schedules))
		for u, s := range schedules {
			demands[u] = s.LoadAt(lo)
		}
		f := float64(hi-lo) / float64(b-a)
		for u, v := range MaxMinFair(1, demands, weights) {
			out[u] += v * f
		}
	}
	return out
}

// MeanAbsDev is the mean of |measured[i]-fair[i]|; NaN for no samples.
func MeanAbsDev(measured, fair []float64) float64 {
	n := min(len(measured), len(fair))
	if n == 0 {
		return math.NaN()
	}
	sum := 0.0
	for i := 0; i < n; i++ {
		sum += math.Abs(measured[i] - fair[i])
	}
	return sum / float64(n)
}

// ShareRow is one bin of a fairness run: each user's measured share and
// max-min fair share.
type ShareRow struct {
	StartS   float64   `json:"t_s"`
	Measured []float64 `json:"measured"`
	Fair     []float64 `json:"fair"`
}

// IntervalShare summarises one step of the demand schedule.
type IntervalShare struct {
	StartS, EndS float64 `json:"-"`
	Span         string  `json:"span"`
	// Demand is the scheduled (mean) offered load; Offered, if known, is
	// the load the Poisson arrivals actually offered in the interval.
	Demand   []float64 `json:"demand"`
	Offered  []float64 `json:"offered,omitempty"`
	Measured []float64 `json:"measured_mean"`
	Fair     []float64 `json:"fair"`
	// MAD is the mean absolute deviation from the fair share of the
	// bins lying wholly inside the interval.
	MAD []float64 `json:"mad"`
}

// FairnessAnalysis is the measured side of a Figure 11 run.
type FairnessAnalysis struct {
	Users   []string  `json:"users"`
	Weights []float64 `json:"weights"`
	BinS    float64   `json:"bin_s"`
	Rows    []ShareRow
	// MAD is each user's mean absolute deviation of the per-bin share from
	// the max-min fair share, over every bin; Settled leaves out the first
	// bin after each demand change (the time Sparrow needs to react).
	MAD        []float64       `json:"mad"`
	MADSettled []float64       `json:"mad_settled"`
	Intervals  []IntervalShare `json:"intervals"`
	// Utilisation is the mean fraction of slot-time used by anyone.
	Utilisation float64 `json:"utilisation"`
}

// AnalyzeFairness bins spans into per-user shares over [0, window) and sets
// them beside the max-min fair shares the schedules and weights imply.
// Every span counts towards utilisation; only listed users get columns.
func AnalyzeFairness(spans []Span, users []string, weights []float64, schedules []Schedule, slots int, bin, window time.Duration) (FairnessAnalysis, error) {
	if len(users) != len(schedules) {
		return FairnessAnalysis{}, fmt.Errorf("%d users but %d schedules", len(users), len(schedules))
	}
	if bin <= 0 || window <= 0 || slots <= 0 {
		return FairnessAnalysis{}, fmt.Errorf("bin, window and slots must be positive")
	}
	fa := FairnessAnalysis{Users: users, Weights: weights, BinS: bin.Seconds()}
	shares := Shares(spans, users, slots, bin, window)
	perUserM := make([][]float64, len(users))
	perUserF := make([][]float64, len(users))
	settledM := make([][]float64, len(users))
	settledF := make([][]float64, len(users))
	var changes []time.Duration
	for _, s := range schedules {
		changes = append(changes, s.Breakpoints(0, window)...)
	}
	for k, m := range shares {
		lo, hi := time.Duration(k)*bin, min(time.Duration(k+1)*bin, window)
		fair := FairShareOver(schedules, weights, lo, hi)
		fa.Rows = append(fa.Rows, ShareRow{StartS: lo.Seconds(), Measured: m, Fair: fair})
		// A bin is unsettled if a demand change happened within one bin
		// before its end.
		settled := true
		for _, c := range changes {
			if c > lo-bin && c < hi {
				settled = false
			}
		}
		for u := range users {
			perUserM[u] = append(perUserM[u], m[u])
			perUserF[u] = append(perUserF[u], fair[u])
			if settled {
				settledM[u] = append(settledM[u], m[u])
				settledF[u] = append(settledF[u], fair[u])
			}
		}
	}
	for u := range users {
		fa.MAD = append(fa.MAD, MeanAbsDev(perUserM[u], perUserF[u]))
		fa.MADSettled = append(fa.MADSettled, MeanAbsDev(settledM[u], settledF[u]))
	}
	all := Shares(relabel(spans, "*"), []string{"*"}, slots, window, window)
	if len(all) == 1 {
		fa.Utilisation = all[0][0]
	}
	// Per-interval means over the union of every schedule's steps.
	cuts := []time.Duration{0}
	for _, s := range schedules {
		cuts = append(cuts, s.Breakpoints(0, window)...)
	}
	cuts = append(cuts, window)
	slices.Sort(cuts)
	for i := 0; i+1 < len(cuts); i++ {
		lo, hi := cuts[i], cuts[i+1]
		if hi <= lo {
			continue
		}
		iv := IntervalShare{StartS: lo.Seconds(), EndS: hi.Seconds(), Span: fmt.Sprintf("%g-%gs", lo.Seconds(), hi.Seconds())}
		for _, s := range schedules {
			iv.Demand = append(iv.Demand, s.LoadAt(lo))
		}
		iv.Fair = MaxMinFair(1, iv.Demand, weights)
		iv.Measured = Shares(shift(spans, -lo), users, slots, hi-lo, hi-lo)[0]
		for u := range users {
			var m, f []float64
			for _, row := range fa.Rows {
				a, b := secs(row.StartS), secs(row.StartS+fa.BinS)
				if a >= lo && b <= hi {
					m, f = append(m, row.Measured[u]), append(f, row.Fair[u])
				}
			}
			iv.MAD = append(iv.MAD, MeanAbsDev(m, f))
		}
		fa.Intervals = append(fa.Intervals, iv)
	}
	return fa, nil
}

func secs(s float64) time.Duration { return time.Duration(math.Round(s * float64(time.Second))) }

// SetOffered records, for each interval, the load each user's arrivals
// actually offered: jobs arriving in it times work (slot-time per job),
// over slots times the interval. Poisson arrivals offer more or less than
// the scheduled mean; this is what the user really asked for.
func (fa *FairnessAnalysis) SetOffered(arrivals [][]time.Duration, work []time.Duration, slots int) {
	for i := range fa.Intervals {
		iv := &fa.Intervals[i]
		lo, hi := secs(iv.StartS), secs(iv.EndS)
		iv.Offered = make([]float64, len(arrivals))
		for u, arr := range arrivals {
			n := 0
			for _, a := range arr {
				if a >= lo && a < hi {
					n++
				}
			}
			iv.Offered[u] = float64(n) * work[u].Seconds() / (float64(slots) * (hi - lo).Seconds())
		}
	}
}

func relabel(spans []Span, user string) []Span {
	out := make([]Span, len(spans))
	for i, s := range spans {
		s.User = user
		out[i] = s
	}
	return out
}

func shift(spans []Span, d time.Duration) []Span {
	out := make([]Span, len(spans))
	for i, s := range spans {
		s.Start += d
		s.End += d
		out[i] = s
	}
	return out
}
