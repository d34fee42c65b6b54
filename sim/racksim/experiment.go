package racksim

import (
	"fmt"
	"math"
	"slices"
)

// Experiment is one of the paper's tables or figures to reproduce.
type Experiment string

// The experiments.
const (
	// Table2 runs G, Q and QP at K = 1 on the unconstrained network (§6.1);
	// QP's per-instance times are the ideal times of Fig6.
	Table2 Experiment = "table2"
	// Fig6 runs the seven policies at K = 10 on the unconstrained network
	// (§6.2), against Table2's QP times.
	Fig6 Experiment = "fig6"
	// Table4 runs GFP, QFP and QFPX at K = 10 on the constrained network
	// without PrimeLarge (§6.3), against QFPX's times at K = 1 there.
	Table4 Experiment = "table4"
)

// Experiments lists them in the order "all" runs them.
var Experiments = []Experiment{Table2, Fig6, Table4}

// ParseExperiments reads "table2", "fig6", "table4", a comma list, or
// "all".
func ParseExperiments(s string) ([]Experiment, error) {
	if s == "all" {
		return slices.Clone(Experiments), nil
	}
	var out []Experiment
	for _, name := range splitList(s) {
		if !slices.Contains(Experiments, Experiment(name)) {
			return nil, fmt.Errorf("racksim: unknown experiment %q (want table2, fig6, table4 or all)", name)
		}
		out = append(out, Experiment(name))
	}
	return out, nil
}

func splitList(s string) []string {
	var out []string
	start := 0
	for i := 0; i <= len(s); i++ {
		if i == len(s) || s[i] == ',' {
			if i > start {
				out = append(out, s[start:i])
			}
			start = i + 1
		}
	}
	return out
}

// Policies returns the experiment's policies (withGFH adds GFH to Fig6,
// which §6.4 ran without printing numbers).
func (x Experiment) Policies(withGFH bool) []Policy {
	switch x {
	case Table2:
		return []Policy{G, Q, QP}
	case Fig6:
		if withGFH {
			return []Policy{G, GF, GFP, GFH, Q, QF, QFP, QFPX}
		}
		return []Policy{G, GF, GFP, Q, QF, QFP, QFPX}
	case Table4:
		return []Policy{GFP, QFP, QFPX}
	}
	return nil
}

// Constrained reports whether the experiment uses §6.3's 1 Gbit/s uplinks
// (and drops PrimeLarge).
func (x Experiment) Constrained() bool { return x == Table4 }

// Config returns the run of policy p with seed for the experiment, from
// base (whose cluster, rates and scheduler settings it keeps).
func (x Experiment) Config(base Config, p Policy, seed uint64) Config {
	c := base
	c.Policy, c.Seed, c.K = p, seed, 10
	if x == Table2 {
		c.K = 1
	}
	if x.Constrained() {
		c.Uplink, c.NoPrimeLarge = base.NIC, true
	}
	return c
}

// IdealConfig returns the K = 1 run whose per-instance times are the
// experiment's ideal times: QP unconstrained (§6.1, also Table2's QP run)
// or QFPX constrained without PrimeLarge (§6.3).
func (x Experiment) IdealConfig(base Config, seed uint64) Config {
	if x.Constrained() {
		c := x.Config(base, QFPX, seed)
		c.K = 1
		return c
	}
	return Table2.Config(base, QP, seed)
}

// IdealTimes averages each instance's time over runs.
func IdealTimes(runs []*Result) map[string]float64 {
	sum, n := map[string]float64{}, map[string]int{}
	for _, r := range runs {
		for _, j := range r.Jobs {
			sum[j.Name] += j.Time
			n[j.Name]++
		}
	}
	out := map[string]float64{}
	for k, v := range sum {
		out[k] = v / float64(n[k])
	}
	return out
}

// Summary is one policy's metrics over several seeds.
type Summary struct {
	Policy Policy `json:"policy"`
	Runs   int    `json:"runs"`
	// Mean and Std are the metrics' mean and sample standard deviation
	// over the runs.
	Mean Metrics `json:"mean"`
	Std  Metrics `json:"std"`
	// Kills and Solves are means per run; SolveMeanMS the mean of the
	// solves' wall time and SolveMaxMS the largest, in ms.
	Kills       float64 `json:"kills"`
	Solves      float64 `json:"solves"`
	SolveMeanMS float64 `json:"solve_mean_ms"`
	SolveMaxMS  float64 `json:"solve_max_ms"`
	// JobTime is each instance's mean running time over the runs.
	JobTime map[string]float64 `json:"job_time_s"`
}

// Summarize measures runs of one policy against ideal and averages them.
func Summarize(p Policy, runs []*Result, ideal map[string]float64) Summary {
	s := Summary{Policy: p, Runs: len(runs), JobTime: IdealTimes(runs)}
	ms := make([]Metrics, len(runs))
	var solveTotal, solves float64
	for i, r := range runs {
		ms[i] = Measure(r, ideal)
		s.Kills += float64(r.Kills)
		s.Solves += float64(r.Solves)
		solveTotal += r.SolveMean.Seconds() * float64(r.Solves)
		solves += float64(r.Solves)
		s.SolveMaxMS = max(s.SolveMaxMS, r.SolveMax.Seconds()*1000)
	}
	if n := float64(len(runs)); n > 0 {
		s.Kills /= n
		s.Solves /= n
	}
	if solves > 0 {
		s.SolveMeanMS = solveTotal / solves * 1000
	}
	fields := func(m *Metrics) []*float64 {
		return []*float64{&m.Makespan, &m.SNP, &m.L1, &m.L2, &m.LInf, &m.Unfairness, &m.SNPCPU, &m.SNPNW, &m.DTTotal, &m.DTLocal, &m.DTRack, &m.DTCore, &m.DTGatherTotal, &m.DTGatherRack, &m.DTGatherCore}
	}
	mean, std := fields(&s.Mean), fields(&s.Std)
	for k := range mean {
		var a, b float64
		for i := range ms {
			v := *fields(&ms[i])[k]
			a += v
			b += v * v
		}
		n := float64(len(ms))
		if n == 0 {
			continue
		}
		*mean[k] = a / n
		if n > 1 {
			*std[k] = math.Sqrt(max(b-a*a/n, 0) / (n - 1))
		}
	}
	return s
}
