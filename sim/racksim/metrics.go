package racksim

import (
	"math"
)

// Metrics are §5.2's summary numbers of one run against ideal times.
type Metrics struct {
	Makespan float64 `json:"makespan_s"`
	// SNP is the geometric mean of the jobs' ANP = ideal / actual time.
	SNP float64 `json:"snp"`
	// L1, L2 and LInf are the scaled norms of the slowdowns σ = 1/ANP.
	L1   float64 `json:"slowdown_l1"`
	L2   float64 `json:"slowdown_l2"`
	LInf float64 `json:"slowdown_linf"`
	// Unfairness is the coefficient of variation of the ANPs (population
	// standard deviation over the mean; the paper does not say which).
	Unfairness float64 `json:"unfairness"`
	// SNPCPU and SNPNW are SNP over the CPU-bound and network-bound jobs.
	SNPCPU float64 `json:"snp_cpu"`
	SNPNW  float64 `json:"snp_nw"`
	// DT in TB (10^12 bytes): total, local, same rack, cross cluster.
	DTTotal float64 `json:"dt_total_tb"`
	DTLocal float64 `json:"dt_local_tb"`
	DTRack  float64 `json:"dt_rack_tb"`
	DTCore  float64 `json:"dt_core_tb"`
	// DTGather* are the parts of DT read by all-to-all gathers (see
	// Result.GatherBytes), in TB; DT less these is what placement decides.
	DTGatherTotal float64 `json:"dt_gather_total_tb"`
	DTGatherRack  float64 `json:"dt_gather_rack_tb"`
	DTGatherCore  float64 `json:"dt_gather_core_tb"`
}

// Measure computes r's metrics with ideal[name] as each job's ideal time;
// a job without one counts as ideal (ANP 1) and is reported by the caller.
func Measure(r *Result, ideal map[string]float64) Metrics {
	m := Metrics{Makespan: r.Makespan}
	var logSum, s1, s2, a1, a2, lc, ln float64
	var nc, nn int
	for _, j := range r.Jobs {
		anp := 1.0
		if id, ok := ideal[j.Name]; ok && j.Time > 0 {
			anp = id / j.Time
		}
		sigma := 1 / anp
		logSum += math.Log(anp)
		s1 += sigma
		s2 += sigma * sigma
		m.LInf = max(m.LInf, sigma)
		a1 += anp
		a2 += anp * anp
		if j.NW {
			ln += math.Log(anp)
			nn++
		} else {
			lc += math.Log(anp)
			nc++
		}
	}
	n := float64(len(r.Jobs))
	if n > 0 {
		m.SNP = math.Exp(logSum / n)
		m.L1 = s1 / n
		m.L2 = math.Sqrt(s2 / n)
		mean := a1 / n
		m.Unfairness = math.Sqrt(max(a2/n-mean*mean, 0)) / mean
	}
	if nc > 0 {
		m.SNPCPU = math.Exp(lc / float64(nc))
	}
	if nn > 0 {
		m.SNPNW = math.Exp(ln / float64(nn))
	}
	m.DTLocal, m.DTRack, m.DTCore = r.Bytes[local]/1e12, r.Bytes[rack]/1e12, r.Bytes[core]/1e12
	m.DTTotal = m.DTLocal + m.DTRack + m.DTCore
	m.DTGatherRack, m.DTGatherCore = r.GatherBytes[rack]/1e12, r.GatherBytes[core]/1e12
	m.DTGatherTotal = (r.GatherBytes[local] + r.GatherBytes[rack] + r.GatherBytes[core]) / 1e12
	return m
}
