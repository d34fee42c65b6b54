package constrained

import (
	"fmt"
	"math"
	"slices"

	"github.com/sparrowfleet/sparrow/internal/stats"
)

// Run simulates policy p on the cluster.
func Run(c *Cluster, p Policy) (*Trace, error) {
	switch p {
	case Fair, Choosy, ChoosyExact:
		o, err := newOnline(c, p)
		if err != nil {
			return nil, err
		}
		return o.run()
	case Offline:
		return newOffline(c).run()
	}
	return nil, fmt.Errorf("unknown policy %d", int(p))
}

// Bin is a range of offline response times, as in the paper's Table 1.
type Bin struct {
	Label  string
	Lo, Hi float64 // seconds; Hi is exclusive
}

// Table1Bins are the paper's Table 1 job-size bins.
var Table1Bins = []Bin{
	{"<30s", 0, 30}, {"30-120s", 30, 120}, {"120-600s", 120, 600}, {">600s", 600, math.Inf(1)},
}

// Slowdown is the mean and standard deviation of jobs' response time
// under a policy over their response time under Offline.
type Slowdown struct {
	Bin  string  `json:"bin"`
	Jobs int     `json:"jobs"`
	Mean float64 `json:"mean"`
	Std  float64 `json:"std"`
}

// Stats is one policy's outcome against the Restricted Offline reference.
type Stats struct {
	Policy string `json:"policy"`
	// RMSE of sorted allocation vectors against Offline at the same
	// instants, % of the cluster's slots, over samples where some job was
	// active in either run.
	RMSEMean float64 `json:"rmse_vs_offline_mean_pct"`
	RMSEP50  float64 `json:"rmse_vs_offline_p50_pct"`
	RMSEP95  float64 `json:"rmse_vs_offline_p95_pct"`
	RMSEMax  float64 `json:"rmse_vs_offline_max_pct"`
	// RMSEArrivals is RMSEMean over the arrival window [0, Duration)
	// only, leaving out the tail in which the last long jobs drain.
	RMSEArrivals float64 `json:"rmse_vs_offline_arrivals_mean_pct"`
	// IdealRMSEMean is the mean RMSE against the ideal (migrating,
	// preempting) CMMF allocation of the policy's own active jobs.
	IdealRMSEMean float64 `json:"rmse_vs_ideal_cmmf_mean_pct"`
	IdealRMSEP95  float64 `json:"rmse_vs_ideal_cmmf_p95_pct"`
	Samples       int     `json:"samples"`
	// Response times, s.
	RespMean float64 `json:"response_mean_s"`
	RespP50  float64 `json:"response_p50_s"`
	RespP95  float64 `json:"response_p95_s"`
	// SlowdownMean is the mean over all jobs of response / Offline's.
	SlowdownMean float64    `json:"slowdown_vs_offline_mean"`
	Slowdowns    []Slowdown `json:"slowdown_vs_offline_by_bin"`
	// Makespan is the last job's end, s.
	Makespan float64 `json:"makespan_s"`
	Tasks    int64   `json:"tasks"`
	Events   int64   `json:"events"`
	Solves   int64   `json:"offline_solves,omitempty"`
	Guidance int64   `json:"guidance_versions,omitempty"`
}

// RMSESeries returns, at each sample time, the RMSE between tr and ref
// (NaN where no job is active in either).
func RMSESeries(c *Cluster, tr, ref *Trace) []float64 {
	n := max(len(tr.Samples), len(ref.Samples))
	out := make([]float64, n)
	total := float64(c.TotalSlots())
	for k := range out {
		var a, b []Share
		if k < len(tr.Samples) {
			a = tr.Samples[k]
		}
		if k < len(ref.Samples) {
			b = ref.Samples[k]
		}
		out[k] = PairRMSE(a, b, total)
	}
	return out
}

// Compare summarises tr against the Offline trace ref.
func Compare(c *Cluster, tr, ref *Trace) Stats {
	s := Stats{Policy: tr.Policy.String(), Tasks: tr.Tasks, Events: tr.Events, Solves: tr.Solves, Guidance: tr.Guidance}
	series := RMSESeries(c, tr, ref)
	r := finite(series)
	s.RMSEArrivals = mean(finite(series[:min(len(series), int(math.Ceil(c.Cfg.Duration/c.Cfg.Sample)))]))
	s.Samples = len(r)
	s.RMSEMean, s.RMSEP50, s.RMSEP95, s.RMSEMax = mean(r), quantile(r, 0.5), quantile(r, 0.95), quantile(r, 1)
	id := finite(tr.IdealRMSE)
	s.IdealRMSEMean, s.IdealRMSEP95 = mean(id), quantile(id, 0.95)
	s.RespMean, s.RespP50, s.RespP95 = mean(tr.Response), quantile(tr.Response, 0.5), quantile(tr.Response, 0.95)
	for j, resp := range tr.Response {
		s.Makespan = max(s.Makespan, c.Jobs[j].Arrival+resp)
	}
	var all []float64
	for _, b := range Table1Bins {
		var xs []float64
		for j, off := range ref.Response {
			if off >= b.Lo && off < b.Hi && off > 0 {
				xs = append(xs, tr.Response[j]/off)
			}
		}
		all = append(all, xs...)
		s.Slowdowns = append(s.Slowdowns, Slowdown{Bin: b.Label, Jobs: len(xs), Mean: mean(xs), Std: std(xs)})
	}
	s.SlowdownMean = mean(all)
	return s
}

func finite(xs []float64) []float64 {
	var out []float64
	for _, x := range xs {
		if !math.IsNaN(x) && !math.IsInf(x, 0) {
			out = append(out, x)
		}
	}
	return out
}

func mean(xs []float64) float64 {
	if len(xs) == 0 {
		return nan
	}
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

func std(xs []float64) float64 {
	if len(xs) < 2 {
		return nan
	}
	m, s := mean(xs), 0.0
	for _, x := range xs {
		s += (x - m) * (x - m)
	}
	return math.Sqrt(s / float64(len(xs)-1))
}

// quantile is the q-quantile of xs, which need not be sorted, by
// stats.Quantile's nearest-rank definition; NaN for no values.
func quantile(xs []float64, q float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return stats.Quantile(s, q)
}

// ModelStats summarises how constrained the workload's jobs are: the
// fraction of the cluster's nodes the average job may use, the fractions
// of jobs that may use under 20% and under 10% of them, and the mean
// number of constraints per job (the paper: 38%, 40%, 30%, 1.8).
type ModelStats struct {
	MeanUsable  float64 `json:"mean_usable_fraction"`
	Under20     float64 `json:"jobs_under_20pct"`
	Under10     float64 `json:"jobs_under_10pct"`
	Constraints float64 `json:"mean_constraints_per_job"`
}

// WorkloadStats computes ModelStats over c's jobs.
func WorkloadStats(c *Cluster) ModelStats {
	var s ModelStats
	total := float64(c.TotalSlots())
	for _, j := range c.Jobs {
		var slots int64
		for _, t := range j.Types {
			slots += c.TypeSlots[t]
		}
		f := float64(slots) / total
		s.MeanUsable += f
		if f < 0.2 {
			s.Under20++
		}
		if f < 0.1 {
			s.Under10++
		}
		s.Constraints += float64(len(j.Constraints))
	}
	n := float64(len(c.Jobs))
	s.MeanUsable /= n
	s.Under20 /= n
	s.Under10 /= n
	s.Constraints /= n
	return s
}
