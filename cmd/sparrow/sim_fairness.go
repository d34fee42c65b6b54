package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/sparrowfleet/sparrow/internal/plot"
	"github.com/sparrowfleet/sparrow/sim/constrained"
)

type simFairnessFlags struct {
	policy      string
	nodes       int
	slots       int
	jobs        int
	duration    float64
	taskMean    float64
	paretoAlpha float64
	rttMS       float64
	probeRatio  float64
	period      float64
	sample      float64
	seed        uint64
	seeds       int
	json        bool
	plotRMSE    string
	plotResp    string
}

func newSimFairnessCmd() *cobra.Command {
	f := &simFairnessFlags{}
	d := constrained.DefaultConfig()
	cmd := &cobra.Command{
		Use:   "fairness",
		Short: "Simulate Choosy against the offline CMMF scheduler (Choosy paper §7.1–7.2)",
		Long: `fairness runs the deterministic simulation in package sim/constrained: a
cluster of several machine types whose jobs (one user each) carry hard
constraints drawn like the Google constraint model of the Choosy paper
(§7.1), Facebook-like job sizes, Poisson arrivals and Pareto task durations.

Policies: Sparrow (batch sampling with late binding over the nodes that
satisfy a job's constraints; the product's placement, slots and queue code)
with per-node weighted fair queues (fair), with Choosy queues refreshed by a
coordinator every --period (choosy), or with Choosy given exact cluster-wide
counts at every decision (choosy-exact); and the paper's Restricted Offline
scheduler (offline: central, no network, a leximin CMMF solve of the free
slots at every decision, no migration or preemption), the reference.

Reported per policy, against offline: RMSE of the sorted allocation vectors
sampled every --sample seconds (% of the cluster's slots; the paper: 0.09%
on average for Choosy), the RMSE against the ideal migrating and preempting
CMMF allocation of the policy's own active jobs, response times and the
paper's Table 1 slowdowns, and each policy's wall time. Progress goes to
stderr, the table (or JSON with --json) to stdout. See docs/FAIRNESS.md.`,
		Example: `  sparrow sim fairness                                   # 1,000 nodes, 300 jobs in an hour
  sparrow sim fairness --seeds 10 --json > fairness.json
  sparrow sim fairness --plot-rmse docs/img/fairness-sim-rmse.svg --plot-response docs/img/fairness-sim-response.svg`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runSimFairness(cmd, f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.policy, "policy", "all", "policies: fair, choosy, choosy-exact, a comma list, or all (offline, the reference, always runs)")
	fl.IntVar(&f.nodes, "nodes", d.Nodes, "number of nodes")
	fl.IntVar(&f.slots, "slots", d.Slots, "task slots per node")
	fl.IntVar(&f.jobs, "jobs", d.Jobs, "jobs (users) submitted, as a Poisson process over --duration")
	fl.Float64Var(&f.duration, "duration", d.Duration, "arrival window in simulated seconds (the run goes on until every job ends)")
	fl.Float64Var(&f.taskMean, "task-mean", d.TaskMean, "mean task duration in seconds")
	fl.Float64Var(&f.paretoAlpha, "pareto-alpha", d.ParetoAlpha, "Pareto shape (> 1) of task durations")
	fl.Float64Var(&f.rttMS, "rtt", d.RTT*1000, "network round trip in ms for the Sparrow policies; each message takes rtt/2")
	fl.Float64Var(&f.probeRatio, "probe-ratio", d.ProbeRatio, "Sparrow's probe ratio d >= 1")
	fl.Float64Var(&f.period, "period", d.Period, "coordinator period in simulated seconds (choosy)")
	fl.Float64Var(&f.sample, "sample", d.Sample, "interval between allocation samples, in simulated seconds")
	fl.Uint64Var(&f.seed, "seed", d.Seed, "first random seed; a run is a function of its flags and seed")
	fl.IntVar(&f.seeds, "seeds", 1, "independent runs, seeds --seed .. --seed+seeds-1; the summary averages them")
	fl.BoolVar(&f.json, "json", false, "print JSON (per-seed results and the summary) instead of tables")
	fl.StringVar(&f.plotRMSE, "plot-rmse", "", "write a plot of each policy's RMSE against offline over time (first seed, 60 s means) to this .svg or .png file")
	fl.StringVar(&f.plotResp, "plot-response", "", "write CDFs of job response times per policy (first seed) to this .svg or .png file")
	return cmd
}

// simFairnessRun is one seed's outcome.
type simFairnessRun struct {
	Seed        uint64                 `json:"seed"`
	Workload    constrained.ModelStats `json:"workload"`
	Stats       []constrained.Stats    `json:"policies"`
	WallSeconds map[string]float64     `json:"wall_seconds"`
	// CPUSeconds is the process's user+system CPU time during each
	// policy's run (the runs are sequential and single-threaded, so this
	// is that run's cost plus the garbage collector's), less sensitive
	// than wall time to other load on the machine.
	CPUSeconds map[string]float64 `json:"cpu_seconds"`
	traces     map[constrained.Policy]*constrained.Trace
	cluster    *constrained.Cluster
}

// simFairnessSummary averages one policy's numbers over the seeds.
type simFairnessSummary struct {
	Policy       string                 `json:"policy"`
	RMSEMean     float64                `json:"rmse_vs_offline_mean_pct"`
	RMSEArrivals float64                `json:"rmse_vs_offline_arrivals_mean_pct"`
	IdealRMSE    float64                `json:"rmse_vs_ideal_cmmf_mean_pct"`
	RespMean     float64                `json:"response_mean_s"`
	SlowdownMean float64                `json:"slowdown_vs_offline_mean"`
	Slowdowns    []constrained.Slowdown `json:"slowdown_vs_offline_by_bin"`
	WallSeconds  float64                `json:"wall_seconds_mean"`
	CPUSeconds   float64                `json:"cpu_seconds_mean"`
}

func runSimFairness(cmd *cobra.Command, f *simFairnessFlags) error {
	policies, err := constrained.ParsePolicies(f.policy)
	if err != nil {
		return fmt.Errorf("--policy: %w", err)
	}
	if f.seeds < 1 {
		return fmt.Errorf("--seeds must be at least 1, got %d", f.seeds)
	}
	for _, p := range []string{f.plotRMSE, f.plotResp} {
		if p != "" {
			if err := plot.CheckPath(p); err != nil {
				return err
			}
		}
	}
	errw := cmd.ErrOrStderr()
	start := time.Now()
	lastProg := start
	var runs []*simFairnessRun
	for s := range f.seeds {
		cfg := constrained.DefaultConfig()
		cfg.Nodes, cfg.Slots, cfg.Jobs, cfg.Duration = f.nodes, f.slots, f.jobs, f.duration
		cfg.TaskMean, cfg.ParetoAlpha, cfg.RTT, cfg.ProbeRatio = f.taskMean, f.paretoAlpha, f.rttMS/1000, f.probeRatio
		cfg.Period, cfg.Sample, cfg.Seed = f.period, f.sample, f.seed+uint64(s)
		cfg.Progress = func(p constrained.Policy, t float64) {
			// At most one line per 2 s of wall time.
			if time.Since(lastProg) < 2*time.Second {
				return
			}
			lastProg = time.Now()
			fmt.Fprintf(errw, "[%6.1fs] seed %d %-12s simulated %6.0f s\n", time.Since(start).Seconds(), cfg.Seed, p, t)
		}
		c, err := constrained.NewCluster(cfg)
		if err != nil {
			return err
		}
		run := &simFairnessRun{Seed: cfg.Seed, Workload: constrained.WorkloadStats(c), WallSeconds: map[string]float64{},
			CPUSeconds: map[string]float64{},
			traces:     map[constrained.Policy]*constrained.Trace{}, cluster: c}
		// Offline first: the others are compared with it.
		for _, p := range append([]constrained.Policy{constrained.Offline}, policies[:len(policies)-1]...) {
			t0, cpu0 := time.Now(), cpuTime()
			tr, err := constrained.Run(c, p)
			if err != nil {
				return fmt.Errorf("seed %d: %w", cfg.Seed, err)
			}
			run.WallSeconds[p.String()] = time.Since(t0).Seconds()
			run.CPUSeconds[p.String()] = (cpuTime() - cpu0).Seconds()
			run.traces[p] = tr
			fmt.Fprintf(errw, "[%6.1fs] seed %d %-12s done in %.1f s (%d tasks, %d events)\n",
				time.Since(start).Seconds(), cfg.Seed, p, time.Since(t0).Seconds(), tr.Tasks, tr.Events)
		}
		ref := run.traces[constrained.Offline]
		for _, p := range policies {
			run.Stats = append(run.Stats, constrained.Compare(c, run.traces[p], ref))
		}
		runs = append(runs, run)
	}
	sum := simFairnessSummarise(runs)
	if f.plotRMSE != "" {
		if err := simFairnessRMSEChart(runs[0], policies).Save(f.plotRMSE); err != nil {
			return err
		}
	}
	if f.plotResp != "" {
		if err := simFairnessRespChart(runs[0], policies).Save(f.plotResp); err != nil {
			return err
		}
	}
	out := cmd.OutOrStdout()
	if f.json {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		return enc.Encode(struct {
			Config  map[string]any       `json:"config"`
			Runs    []*simFairnessRun    `json:"runs"`
			Summary []simFairnessSummary `json:"summary"`
		}{simFairnessConfig(f), runs, jsonSafe(sum)})
	}
	return simFairnessTable(out, runs, sum)
}

func simFairnessConfig(f *simFairnessFlags) map[string]any {
	return map[string]any{
		"nodes": f.nodes, "slots": f.slots, "jobs": f.jobs, "duration_s": f.duration,
		"task_mean_s": f.taskMean, "pareto_alpha": f.paretoAlpha, "rtt_ms": f.rttMS,
		"probe_ratio": f.probeRatio, "period_s": f.period, "sample_s": f.sample,
		"seed": f.seed, "seeds": f.seeds,
	}
}

// jsonSafe replaces NaN (an empty bin) by -1, which JSON can encode.
func jsonSafe(s []simFairnessSummary) []simFairnessSummary {
	fix := func(v *float64) {
		if math.IsNaN(*v) {
			*v = -1
		}
	}
	for i := range s {
		fix(&s[i].RMSEMean)
		fix(&s[i].RMSEArrivals)
		fix(&s[i].IdealRMSE)
		fix(&s[i].SlowdownMean)
		for k := range s[i].Slowdowns {
			fix(&s[i].Slowdowns[k].Mean)
			fix(&s[i].Slowdowns[k].Std)
		}
	}
	return s
}

// MarshalJSON encodes a run with NaNs (empty bins, no samples) as -1.
func (r *simFairnessRun) MarshalJSON() ([]byte, error) {
	type plain simFairnessRun
	c := *r
	c.Stats = slices.Clone(r.Stats)
	for i := range c.Stats {
		s := &c.Stats[i]
		for _, v := range []*float64{&s.RMSEMean, &s.RMSEP50, &s.RMSEP95, &s.RMSEMax, &s.RMSEArrivals, &s.IdealRMSEMean, &s.IdealRMSEP95,
			&s.RespMean, &s.RespP50, &s.RespP95, &s.SlowdownMean} {
			if math.IsNaN(*v) {
				*v = -1
			}
		}
		s.Slowdowns = slices.Clone(s.Slowdowns)
		for k := range s.Slowdowns {
			if math.IsNaN(s.Slowdowns[k].Mean) {
				s.Slowdowns[k].Mean = -1
			}
			if math.IsNaN(s.Slowdowns[k].Std) {
				s.Slowdowns[k].Std = -1
			}
		}
	}
	return json.Marshal((*plain)(&c))
}

// simFairnessSummarise averages each policy's per-seed numbers; a bin's
// slowdown is the mean over all its jobs of every seed.
func simFairnessSummarise(runs []*simFairnessRun) []simFairnessSummary {
	var out []simFairnessSummary
	for i, st := range runs[0].Stats {
		s := simFairnessSummary{Policy: st.Policy}
		n := float64(len(runs))
		binSum := make([]float64, len(constrained.Table1Bins))
		binSq := make([]float64, len(constrained.Table1Bins))
		binN := make([]int, len(constrained.Table1Bins))
		for _, r := range runs {
			x := r.Stats[i]
			s.RMSEMean += x.RMSEMean / n
			s.RMSEArrivals += x.RMSEArrivals / n
			s.IdealRMSE += x.IdealRMSEMean / n
			s.RespMean += x.RespMean / n
			s.WallSeconds += r.WallSeconds[x.Policy] / n
			s.CPUSeconds += r.CPUSeconds[x.Policy] / n
			for b, sl := range x.Slowdowns {
				if sl.Jobs == 0 {
					continue
				}
				binSum[b] += sl.Mean * float64(sl.Jobs)
				if sl.Jobs > 1 {
					binSq[b] += sl.Std*sl.Std*float64(sl.Jobs-1) + sl.Mean*sl.Mean*float64(sl.Jobs)
				} else {
					binSq[b] += sl.Mean * sl.Mean
				}
				binN[b] += sl.Jobs
			}
		}
		all, allN := 0.0, 0
		for b, bin := range constrained.Table1Bins {
			sl := constrained.Slowdown{Bin: bin.Label, Jobs: binN[b], Mean: math.NaN(), Std: math.NaN()}
			if binN[b] > 0 {
				sl.Mean = binSum[b] / float64(binN[b])
				all += binSum[b]
				allN += binN[b]
			}
			if binN[b] > 1 {
				v := (binSq[b] - sl.Mean*sl.Mean*float64(binN[b])) / float64(binN[b]-1)
				sl.Std = math.Sqrt(max(v, 0))
			}
			s.Slowdowns = append(s.Slowdowns, sl)
		}
		s.SlowdownMean = math.NaN()
		if allN > 0 {
			s.SlowdownMean = all / float64(allN)
		}
		out = append(out, s)
	}
	return out
}

func simFairnessTable(w io.Writer, runs []*simFairnessRun, sum []simFairnessSummary) error {
	ws := runs[0].Workload
	fmt.Fprintf(w, "workload (seed %d): %.0f%% of nodes usable on average, %.0f%% of jobs under 20%%, %.0f%% under 10%%, %.2f constraints per job\n",
		runs[0].Seed, 100*ws.MeanUsable, 100*ws.Under20, 100*ws.Under10, ws.Constraints)
	fmt.Fprintf(w, "summary over %d seed(s); RMSE in %% of the cluster's slots, mean over all samples and over the arrival window; slowdown = response / offline's, mean (std)\n\n", len(runs))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	hdr := "policy\tRMSE vs offline\t(arrivals)\tRMSE vs ideal CMMF\tmean resp (s)\tslowdown"
	for _, b := range constrained.Table1Bins {
		hdr += "\t" + b.Label
	}
	fmt.Fprintln(tw, hdr+"\twall (s)\tCPU (s)\t")
	for _, s := range sum {
		line := fmt.Sprintf("%s\t%.3f%%\t%.3f%%\t%.3f%%\t%.1f\t%.3f", s.Policy, s.RMSEMean, s.RMSEArrivals, s.IdealRMSE, s.RespMean, s.SlowdownMean)
		for _, sl := range s.Slowdowns {
			switch {
			case sl.Jobs == 0:
				line += "\t-"
			case sl.Jobs == 1:
				line += fmt.Sprintf("\t%.2f n=1", sl.Mean)
			default:
				line += fmt.Sprintf("\t%.2f (%.2f) n=%d", sl.Mean, sl.Std, sl.Jobs)
			}
		}
		fmt.Fprintln(tw, line+fmt.Sprintf("\t%.1f\t%.1f\t", s.WallSeconds, s.CPUSeconds))
	}
	return tw.Flush()
}

// simFairnessRMSEChart plots each policy's RMSE against offline over
// time, as means over 60 s windows.
func simFairnessRMSEChart(r *simFairnessRun, policies []constrained.Policy) *plot.Chart {
	c := r.cluster.Cfg
	ch := &plot.Chart{
		Title: fmt.Sprintf("Allocation vs Restricted Offline: %d nodes x %d slots, %d jobs in %.0f s", c.Nodes, c.Slots, c.Jobs, c.Duration),
		Subtitle: fmt.Sprintf("RMSE of sorted allocation vectors, %% of slots, mean per 60 s; seed %d; Pareto(%g) tasks, mean %g s; coordinator period %g s",
			c.Seed, c.ParetoAlpha, c.TaskMean, c.Period),
		X: plot.Axis{Label: "simulated time (s)"},
		Y: plot.Axis{Label: "RMSE vs offline (% of cluster)"},
	}
	ref := r.traces[constrained.Offline]
	for _, p := range policies {
		if p == constrained.Offline {
			continue
		}
		series := constrained.RMSESeries(r.cluster, r.traces[p], ref)
		win := max(int(60/c.Sample), 1)
		var pts []plot.Point
		for k := 0; k < len(series); k += win {
			s, n := 0.0, 0
			for _, v := range series[k:min(k+win, len(series))] {
				if !math.IsNaN(v) {
					s += v
					n++
				}
			}
			if n > 0 {
				pts = append(pts, plot.Point{X: float64(k) * c.Sample, Y: s / float64(n)})
			}
		}
		ch.Series = append(ch.Series, plot.Series{Name: p.String(), Points: pts})
	}
	for _, s := range r.Stats {
		if s.Policy != constrained.Offline.String() {
			ch.Notes = append(ch.Notes, fmt.Sprintf("%s: mean %.3f%%", s.Policy, s.RMSEMean))
		}
	}
	ch.Notes = append(ch.Notes, "paper (Choosy vs", "Restricted Offline): 0.09%")
	return ch
}

// simFairnessRespChart plots the CDF of job response times per policy.
func simFairnessRespChart(r *simFairnessRun, policies []constrained.Policy) *plot.Chart {
	c := r.cluster.Cfg
	ch := &plot.Chart{
		Title:    fmt.Sprintf("Job response times: %d nodes x %d slots, %d jobs in %.0f s", c.Nodes, c.Slots, c.Jobs, c.Duration),
		Subtitle: fmt.Sprintf("CDF per policy, seed %d; offline = Restricted Offline (central, no network, leximin per decision)", c.Seed),
		X:        plot.Axis{Label: "job response time (s, log scale)", Log: true},
		Y:        plot.Axis{Label: "fraction of jobs", Min: 0, Max: 1},
	}
	for _, p := range policies {
		resp := slices.Clone(r.traces[p].Response)
		slices.Sort(resp)
		pts := make([]plot.Point, len(resp))
		for i, v := range resp {
			pts[i] = plot.Point{X: v, Y: float64(i+1) / float64(len(resp))}
		}
		s := plot.Series{Name: p.String(), Points: pts, Step: true}
		if p == constrained.Offline {
			s.Dashed = true
		}
		ch.Series = append(ch.Series, s)
	}
	return ch
}

// cpuTime is the process's user plus system CPU time so far (zero if the
// platform does not report it).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
