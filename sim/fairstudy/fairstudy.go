package fairstudy

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/sparrowfleet/sparrow/internal/plot"
	"github.com/sparrowfleet/sparrow/sim/constrained"
)

// SeedRun is one seed's outcome.
type SeedRun struct {
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

// Summary averages one policy's numbers over the seeds.
type Summary struct {
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

// Config is a study: the cluster and workload of every seed, the
// policies compared with offline, and the seeds.
type Config struct {
	// Base is every seed's configuration but its seed; seed s runs
	// Base.Seed+s.
	Base constrained.Config
	// Policies to compare, as constrained.ParsePolicies lists them
	// (offline, the reference, last).
	Policies []constrained.Policy
	Seeds    int
	// Progress, if not nil, receives progress lines.
	Progress io.Writer
}

// Study is a study's outcome.
type Study struct {
	Policies []constrained.Policy
	Runs     []*SeedRun
	Summary  []Summary
}

// Run runs every seed: offline first, then the others, each compared
// with offline; then it averages the seeds.
func Run(cfg Config) (*Study, error) {
	if cfg.Seeds < 1 {
		return nil, fmt.Errorf("--seeds must be at least 1, got %d", cfg.Seeds)
	}
	errw := cfg.Progress
	if errw == nil {
		errw = io.Discard
	}
	policies := cfg.Policies
	start := time.Now()
	lastProg := start
	var runs []*SeedRun
	for s := range cfg.Seeds {
		cfg := cfg.Base
		cfg.Seed += uint64(s)
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
			return nil, err
		}
		run := &SeedRun{Seed: cfg.Seed, Workload: constrained.WorkloadStats(c), WallSeconds: map[string]float64{},
			CPUSeconds: map[string]float64{},
			traces:     map[constrained.Policy]*constrained.Trace{}, cluster: c}
		// Offline first: the others are compared with it.
		for _, p := range append([]constrained.Policy{constrained.Offline}, policies[:len(policies)-1]...) {
			t0, cpu0 := time.Now(), cpuTime()
			tr, err := constrained.Run(c, p)
			if err != nil {
				return nil, fmt.Errorf("seed %d: %w", cfg.Seed, err)
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
	return &Study{Policies: policies, Runs: runs, Summary: summarise(runs)}, nil
}

// JSON is the study's JSON form, with config, the settings it ran with.
func (st *Study) JSON(config map[string]any) any {
	return struct {
		Config  map[string]any `json:"config"`
		Runs    []*SeedRun     `json:"runs"`
		Summary []Summary      `json:"summary"`
	}{config, st.Runs, jsonSafe(st.Summary)}
}

// WriteTable prints the study as tables.
func (st *Study) WriteTable(w io.Writer) error { return writeTable(w, st.Runs, st.Summary) }

// RMSEChart plots each policy's RMSE against offline over time, of the
// first seed.
func (st *Study) RMSEChart() *plot.Chart { return rmseChart(st.Runs[0], st.Policies) }

// ResponseChart plots CDFs of job response times per policy, of the
// first seed.
func (st *Study) ResponseChart() *plot.Chart { return responseChart(st.Runs[0], st.Policies) }

// jsonSafe replaces NaN (an empty bin) by -1, which JSON can encode.
func jsonSafe(s []Summary) []Summary {
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
func (r *SeedRun) MarshalJSON() ([]byte, error) {
	type plain SeedRun
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

// summarise averages each policy's per-seed numbers; a bin's
// slowdown is the mean over all its jobs of every seed.
func summarise(runs []*SeedRun) []Summary {
	var out []Summary
	for i, st := range runs[0].Stats {
		s := Summary{Policy: st.Policy}
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

func writeTable(w io.Writer, runs []*SeedRun, sum []Summary) error {
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

// rmseChart plots each policy's RMSE against offline over
// time, as means over 60 s windows.
func rmseChart(r *SeedRun, policies []constrained.Policy) *plot.Chart {
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

// responseChart plots the CDF of job response times per policy.
func responseChart(r *SeedRun, policies []constrained.Policy) *plot.Chart {
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
