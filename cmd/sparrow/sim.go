package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"image/color"
	"io"
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/sparrowfleet/sparrow/internal/plot"
	"github.com/sparrowfleet/sparrow/sim"
)

func init() { rootCmd.AddCommand(newSimCmd()) }

type simFlags struct {
	cpuProfile  string
	policy      string
	nodes       int
	slots       int
	tasks       int
	loads       string
	jobs        int
	warmup      string
	dist        string
	paretoAlpha float64
	trace       string
	mean        float64
	rtt         float64
	probeRatios string
	cancel      bool
	seed        uint64
	json        bool
	plot        string
	parallel    int
	zeroWait    bool
	longFrac    float64
	longMean    float64
}

func newSimCmd() *cobra.Command {
	f := &simFlags{}
	cmd := &cobra.Command{
		Use:   "sim",
		Short: "Simulate placement policies (paper §3 Figure 3, §5 Table 2)",
		Long: `sim runs the deterministic discrete-event simulator in package sim: N node
monitors with S slots, Poisson arrivals of m-task jobs at a given load, and
RTT/2 per message. It compares random placement, per-task sampling, batch
sampling, batch sampling with late binding (the product's placement and
slots code) and an omniscient centralized scheduler.

Every (policy, probe ratio, load) point is independent and seeded by --seed
alone, so all policies see the same jobs at a load; points run in parallel.
Progress goes to stderr, the table (or JSON with --json) to stdout.

The defaults reproduce the paper's Figure 3 (10,000 nodes, 500-task jobs,
exponential 100 ms tasks, 1 ms RTT, d=2). Random placement at high load
needs a far longer warm-up than the others (e.g. --warmup 10%,random=60000):
watch the drift column, the change in mean response between the two halves
of the measured jobs. See docs/SIMULATION.md.`,
		Example: `  sparrow sim                                   # Figure 3, all policies
  sparrow sim --slots 4 --plot fig3-4slot.svg
  sparrow sim --zero-wait --tasks 100 --jobs 5000 --load 0.1,0.3,0.5,0.7,0.9
  sparrow sim --policy late --probe-ratio 1,1.1,1.5,2,3 --slots 4 --tasks 10
  sparrow sim --policy late --tasks 10 --dist const --long-frac 0.3 --long-mean 10000 --load 0.8`,
		Args: cobra.NoArgs,
	}
	jt := addSimTraceFlags(cmd) // sim_trace.go: --job-trace replays
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		if jt.file != "" {
			return runSimTrace(cmd, f, jt)
		}
		return runSim(cmd, f)
	}
	fl := cmd.Flags()
	fl.StringVar(&f.policy, "policy", "all", "placement policies: random, pertask, batch, late, omniscient, a comma list, or all")
	fl.IntVar(&f.nodes, "nodes", 10000, "number of node monitors")
	fl.IntVar(&f.slots, "slots", 1, "task slots (cores) per node monitor")
	fl.IntVar(&f.tasks, "tasks", 500, "tasks per job (m)")
	fl.StringVar(&f.loads, "load", "0.1,0.3,0.5,0.6,0.7,0.8,0.9,0.95", "offered load(s) in (0,1), one value or a comma list")
	fl.IntVar(&f.jobs, "jobs", 2000, "jobs measured per point, after the warm-up")
	fl.StringVar(&f.warmup, "warmup", "10%", `jobs simulated before measuring: N jobs, or P% of --jobs; append ",policy=N" (or P%) to override per policy, e.g. "10%,random=30000"`)
	fl.StringVar(&f.dist, "dist", "exp", "task duration distribution: exp, const, pareto, or trace")
	fl.Float64Var(&f.paretoAlpha, "pareto-alpha", 2, "Pareto shape alpha (> 1) for --dist pareto; durations are scaled to --mean")
	fl.StringVar(&f.trace, "trace", "", "file of task durations, one number of ms per line ('#' comments allowed), sampled with replacement; implies --dist trace")
	fl.Float64Var(&f.mean, "mean", 100, "mean task duration in ms (exp, const, pareto)")
	fl.Float64Var(&f.rtt, "rtt", 1, "network round trip time in ms; each message takes rtt/2")
	fl.StringVar(&f.probeRatios, "probe-ratio", "2", "probe ratio d >= 1, one value or a comma list")
	fl.BoolVar(&f.cancel, "cancel", false, "late: cancel a job's queued reservations once all its tasks are launched")
	fl.Uint64Var(&f.seed, "seed", 1, "random seed; a run is a function of its flags and seed")
	fl.BoolVar(&f.json, "json", false, "print a JSON array, one object per point, instead of the table")
	fl.StringVar(&f.plot, "plot", "", "also write a plot of mean response time vs load per policy, with the optimal line, to this file (.svg or .png)")
	fl.IntVar(&f.parallel, "parallel", runtime.GOMAXPROCS(0), "points simulated at once, on this many goroutines")
	fl.BoolVar(&f.zeroWait, "zero-wait", false, "print the Table 2 comparison: closed-form vs simulated probability that a job has zero wait")
	fl.Float64Var(&f.longFrac, "long-frac", 0, "fraction of jobs that are long (heterogeneity, paper §7.8); results add short-job-only columns")
	fl.Float64Var(&f.longMean, "long-mean", 10000, "mean task duration of long jobs in ms (with --long-frac)")
	fl.StringVar(&f.cpuProfile, "cpuprofile", "", "write a CPU profile (pprof format) of the whole run to this file")
	cmd.AddCommand(newSimFairnessCmd()) // sim_fairness.go: Choosy §7.1–7.2
	cmd.AddCommand(newSimQuincyCmd())   // sim_quincy.go: Quincy §6
	return cmd
}

// simPoint is one simulation to run, and its outcome.
type simPoint struct {
	cfg  sim.Config
	res  sim.Result
	wall time.Duration
	err  error
}

// simJSONRow is one JSON object of --json.
type simJSONRow struct {
	sim.Result
	ZeroWaitClosedForm *float64 `json:"zero_wait_closed_form,omitempty"`
	WallSeconds        float64  `json:"wall_seconds"`
	TasksPerSec        float64  `json:"tasks_per_sec"`
	EventsPerSec       float64  `json:"events_per_sec"`
}

func simParseFloats(name, s string) ([]float64, error) {
	var out []float64
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		v, err := strconv.ParseFloat(f, 64)
		if err != nil {
			return nil, fmt.Errorf("--%s: %q is not a number", name, f)
		}
		if slices.Contains(out, v) {
			return nil, fmt.Errorf("--%s: %v listed twice", name, v)
		}
		out = append(out, v)
	}
	return out, nil
}

// simParseWarmup parses --warmup into a default and per-policy overrides.
func simParseWarmup(s string, jobs int) (def int, per map[sim.Policy]int, err error) {
	one := func(v string) (int, error) {
		v = strings.TrimSpace(v)
		if p, ok := strings.CutSuffix(v, "%"); ok {
			x, err := strconv.ParseFloat(p, 64)
			if err != nil || x < 0 || math.IsNaN(x) || math.IsInf(x, 0) {
				return 0, fmt.Errorf("--warmup: %q is not a percentage >= 0", v)
			}
			return int(math.Ceil(x / 100 * float64(jobs))), nil
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return 0, fmt.Errorf("--warmup: %q is not a job count >= 0 or a percentage like 10%%", v)
		}
		return n, nil
	}
	per = map[sim.Policy]int{}
	parts := strings.Split(s, ",")
	def, err = one(parts[0])
	if err != nil {
		return 0, nil, err
	}
	for _, p := range parts[1:] {
		name, val, ok := strings.Cut(p, "=")
		if !ok {
			return 0, nil, fmt.Errorf("--warmup: %q: want policy=N after the first value", p)
		}
		pol, err := sim.ParsePolicy(strings.TrimSpace(name))
		if err != nil {
			return 0, nil, fmt.Errorf("--warmup: %w", err)
		}
		if per[pol], err = one(val); err != nil {
			return 0, nil, err
		}
	}
	return def, per, nil
}

func simBuildPoints(cmd *cobra.Command, f *simFlags) ([]*simPoint, error) {
	policies, err := sim.ParsePolicies(f.policy)
	if err != nil {
		return nil, fmt.Errorf("--policy: %w", err)
	}
	loads, err := simParseFloats("load", f.loads)
	if err != nil {
		return nil, err
	}
	ratios, err := simParseFloats("probe-ratio", f.probeRatios)
	if err != nil {
		return nil, err
	}
	if f.jobs < 1 {
		return nil, fmt.Errorf("--jobs must be at least 1, got %d", f.jobs)
	}
	if f.parallel < 1 {
		return nil, fmt.Errorf("--parallel must be at least 1, got %d", f.parallel)
	}
	warm, warmPer, err := simParseWarmup(f.warmup, f.jobs)
	if err != nil {
		return nil, err
	}
	kind, err := sim.ParseDist(f.dist)
	if err != nil {
		return nil, fmt.Errorf("--dist: %w", err)
	}
	dist := sim.Dist{Kind: kind, Mean: f.mean, Alpha: f.paretoAlpha}
	distSet := cmd.Flags().Changed("dist")
	switch {
	case f.trace != "" && distSet && kind != sim.Trace:
		return nil, fmt.Errorf("--trace needs --dist trace, not --dist %s", kind)
	case f.trace != "":
		dist.Kind = sim.Trace
		if dist.Trace, err = sim.ReadTraceFile(f.trace); err != nil {
			return nil, err
		}
		if cmd.Flags().Changed("mean") {
			return nil, fmt.Errorf("--mean does not apply to --dist trace (the trace's own mean is used)")
		}
	case kind == sim.Trace:
		return nil, fmt.Errorf("--dist trace needs --trace FILE")
	}
	if cmd.Flags().Changed("pareto-alpha") && dist.Kind != sim.Pareto {
		return nil, fmt.Errorf("--pareto-alpha only applies to --dist pareto")
	}
	if cmd.Flags().Changed("long-mean") && f.longFrac == 0 {
		return nil, fmt.Errorf("--long-mean needs --long-frac > 0")
	}
	if f.cancel && !slices.Contains(policies, sim.Late) {
		return nil, fmt.Errorf("--cancel only applies to --policy late")
	}
	var pts []*simPoint
	for _, p := range policies {
		w := warm
		if v, ok := warmPer[p]; ok {
			w = v
		}
		for _, d := range ratios {
			if len(ratios) > 1 && (p == sim.Random || p == sim.Omniscient) && d != ratios[0] {
				continue // no probes: one point per load is enough
			}
			for _, l := range loads {
				cfg := sim.Config{
					Policy: p, Nodes: f.nodes, Slots: f.slots, Tasks: f.tasks, Load: l,
					Jobs: f.jobs, Warmup: w, Dist: dist, RTT: f.rtt, ProbeRatio: d,
					Cancel: f.cancel && p == sim.Late, Seed: f.seed,
					Long: sim.LongJobs{Fraction: f.longFrac, Mean: f.longMean},
				}
				if err := cfg.Validate(); err != nil {
					return nil, fmt.Errorf("%s at load %v, d=%v: %w", p, l, d, err)
				}
				pts = append(pts, &simPoint{cfg: cfg})
			}
		}
	}
	return pts, nil
}

// simCost estimates a point's relative run time, to start the longest first.
func simCost(c sim.Config) float64 {
	w := 1.0
	if c.Policy == sim.Late {
		w = 10 * c.ProbeRatio
	}
	return w * float64(c.Jobs+c.Warmup) * float64(c.Tasks) / (1.01 - c.Load)
}

func runSim(cmd *cobra.Command, f *simFlags) error {
	pts, err := simBuildPoints(cmd, f)
	if err != nil {
		return err
	}
	// The engine's garbage is mostly placement's per-request maps and
	// queue nodes; trade memory for fewer collections unless the user
	// tuned the collector.
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	if f.cpuProfile != "" {
		pf, err := os.Create(f.cpuProfile)
		if err != nil {
			return fmt.Errorf("sim: cpu profile: %w", err)
		}
		defer pf.Close()
		if err := pprof.StartCPUProfile(pf); err != nil {
			return fmt.Errorf("sim: cpu profile: %w", err)
		}
		defer pprof.StopCPUProfile()
	}

	order := make([]*simPoint, len(pts))
	copy(order, pts)
	slices.SortStableFunc(order, func(a, b *simPoint) int {
		ca, cb := simCost(a.cfg), simCost(b.cfg)
		switch {
		case ca > cb:
			return -1
		case ca < cb:
			return 1
		}
		return 0
	})
	stderr := cmd.ErrOrStderr()
	start := time.Now()
	work := make(chan *simPoint)
	var mu sync.Mutex
	done := 0
	var wg sync.WaitGroup
	for range min(f.parallel, len(pts)) {
		wg.Go(func() {
			for p := range work {
				t0 := time.Now()
				p.res, p.err = sim.Run(p.cfg)
				p.wall = time.Since(t0)
				mu.Lock()
				done++
				if p.err != nil {
					fmt.Fprintf(stderr, "[%d/%d] %s load=%v: error: %v\n", done, len(pts), simLabel(p.cfg, true), p.cfg.Load, p.err)
				} else {
					r := p.res
					fmt.Fprintf(stderr, "[%d/%d] %-14s load=%-5v %d jobs  mean %8.1f ms  p99 %8.1f ms  drift %+.3f  %6.2fs  %.2fM tasks/s  (total %.1fs)\n",
						done, len(pts), simLabel(p.cfg, true), r.Load, r.Jobs, r.MeanMS, r.P99MS, r.Drift,
						p.wall.Seconds(), float64(r.TasksSimulated)/p.wall.Seconds()/1e6, time.Since(start).Seconds())
				}
				mu.Unlock()
			}
		})
	}
	for _, p := range order {
		work <- p
	}
	close(work)
	wg.Wait()
	var errs []error
	for _, p := range pts {
		if p.err != nil {
			errs = append(errs, fmt.Errorf("%s load=%v: %w", simLabel(p.cfg, true), p.cfg.Load, p.err))
		}
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	fmt.Fprintf(stderr, "%d points in %.1fs\n", len(pts), time.Since(start).Seconds())

	multiD := false
	for _, p := range pts {
		multiD = multiD || p.cfg.ProbeRatio != pts[0].cfg.ProbeRatio
	}
	out := cmd.OutOrStdout()
	if f.plot != "" {
		if err := simChart(pts, multiD).Save(f.plot); err != nil {
			return fmt.Errorf("--plot: %w", err)
		}
		fmt.Fprintf(stderr, "wrote %s\n", f.plot)
	}
	switch {
	case f.json:
		return simWriteJSON(out, pts)
	case f.zeroWait:
		return simWriteZeroWait(out, pts, multiD)
	}
	return simWriteTable(out, pts, multiD, f.longFrac > 0)
}

// simLabel names a point's series: the policy, with d when it matters.
func simLabel(c sim.Config, withD bool) string {
	if withD && c.Policy != sim.Random && c.Policy != sim.Omniscient {
		return fmt.Sprintf("%s d=%g", c.Policy, c.ProbeRatio)
	}
	return c.Policy.String()
}

func simRow(p *simPoint) simJSONRow {
	o := simJSONRow{Result: p.res, WallSeconds: p.wall.Seconds()}
	if s := p.wall.Seconds(); s > 0 {
		o.TasksPerSec = float64(p.res.TasksSimulated) / s
		o.EventsPerSec = float64(p.res.Events) / s
	}
	c := p.cfg
	if v, ok := sim.ZeroWaitClosedForm(c.Policy, c.Load, c.ProbeRatio, c.Tasks, c.Slots); ok {
		o.ZeroWaitClosedForm = &v
	}
	return o
}

func simWriteJSON(w io.Writer, pts []*simPoint) error {
	outs := make([]simJSONRow, len(pts))
	for i, p := range pts {
		outs[i] = simRow(p)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(outs)
}

func simWriteTable(w io.Writer, pts []*simPoint, multiD, short bool) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	hdr := "policy\tload\tjobs\tmedian_ms\tmean_ms\tp95_ms\tp99_ms\toptimal_ms\tmean/opt\tzero_wait\tdrift\ttasks/s\tevents/s\t"
	if short {
		hdr += "short_jobs\tshort_median\tshort_mean\tshort_p99\tshort_opt\t"
	}
	fmt.Fprintln(tw, hdr)
	for _, p := range pts {
		o := simRow(p)
		r := p.res
		fmt.Fprintf(tw, "%s\t%g\t%d\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t%.3f\t%.3f\t%+.3f\t%.3gM\t%.3gM\t",
			simLabel(p.cfg, multiD), r.Load, r.Jobs, r.MedianMS, r.MeanMS, r.P95MS, r.P99MS, r.OptimalMS,
			r.MeanMS/r.OptimalMS, r.ZeroWait, r.Drift, o.TasksPerSec/1e6, o.EventsPerSec/1e6)
		if short && r.Short != nil {
			s := r.Short
			fmt.Fprintf(tw, "%d\t%.1f\t%.1f\t%.1f\t%.1f\t", s.Jobs, s.MedianMS, s.MeanMS, s.P99MS, s.OptimalMS)
		}
		fmt.Fprintln(tw)
	}
	return tw.Flush()
}

// simWriteZeroWait prints, per load, each policy's simulated zero-wait
// fraction next to the paper's closed form where one exists.
func simWriteZeroWait(w io.Writer, pts []*simPoint, multiD bool) error {
	var loads []float64
	var series []string
	cell := map[string]map[float64]*simPoint{}
	for _, p := range pts {
		if !slices.Contains(loads, p.cfg.Load) {
			loads = append(loads, p.cfg.Load)
		}
		l := simLabel(p.cfg, multiD)
		if cell[l] == nil {
			cell[l] = map[float64]*simPoint{}
			series = append(series, l)
		}
		cell[l][p.cfg.Load] = p
	}
	slices.Sort(loads)
	c := pts[0].cfg
	fmt.Fprintf(w, "P(job has zero wait): %d nodes x %d slots, m=%d tasks, %s durations, rtt %g ms; closed forms from Table 2 with rho -> rho^%d\n",
		c.Nodes, c.Slots, c.Tasks, c.Dist.Kind, c.RTT, c.Slots)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	hdr := "load\t"
	for _, s := range series {
		if _, ok := sim.ZeroWaitClosedForm(cell[s][loads[0]].cfg.Policy, 0.5, 2, 1, 1); ok {
			hdr += s + " formula\t" + s + " sim\t"
		} else {
			hdr += s + " sim\t"
		}
	}
	fmt.Fprintln(tw, hdr)
	for _, l := range loads {
		fmt.Fprintf(tw, "%g\t", l)
		for _, s := range series {
			p := cell[s][l]
			if p == nil {
				fmt.Fprint(tw, "-\t-\t")
				continue
			}
			if v, ok := sim.ZeroWaitClosedForm(p.cfg.Policy, l, p.cfg.ProbeRatio, p.cfg.Tasks, p.cfg.Slots); ok {
				fmt.Fprintf(tw, "%.4f\t", v)
			}
			fmt.Fprintf(tw, "%.4f\t", p.res.ZeroWait)
		}
		fmt.Fprintln(tw)
	}
	return tw.Flush()
}

// simChart draws mean response time against load, one line per series,
// with the optimum (each job's longest task) dashed in black.
func simChart(pts []*simPoint, multiD bool) *plot.Chart {
	var names []string
	byName := map[string][]plot.Point{}
	optSum := map[float64]float64{}
	optN := map[float64]int{}
	for _, p := range pts {
		n := simLabel(p.cfg, multiD)
		if _, ok := byName[n]; !ok {
			names = append(names, n)
		}
		byName[n] = append(byName[n], plot.Point{X: p.cfg.Load, Y: p.res.MeanMS})
		optSum[p.cfg.Load] += p.res.OptimalMS
		optN[p.cfg.Load]++
	}
	c := pts[0].cfg
	ch := &plot.Chart{
		Title: fmt.Sprintf("%d nodes x %d slots, %d-task jobs, %s %g ms, rtt %g ms", c.Nodes, c.Slots, c.Tasks, c.Dist.Kind, c.Dist.MeanMS(), c.RTT),
		Subtitle: fmt.Sprintf("simulated, %d measured jobs per point, seed %d; optimal: mean of each job's longest task (no wait, no network)",
			c.Jobs, c.Seed),
		// Loads are in (0, 1); the whole interval keeps the end points
		// off the frame.
		X: plot.Axis{Label: "offered load (fraction of the cluster's slots)", Min: 0, Max: 1},
		Y: plot.Axis{Label: "mean job response time (ms, log scale)", Log: true},
	}
	byX := func(a, b plot.Point) int { return simCmpFloat(a.X, b.X) }
	for _, n := range names {
		xy := byName[n]
		slices.SortFunc(xy, byX)
		ch.Series = append(ch.Series, plot.Series{Name: n, Points: xy, Marker: plot.Circle})
	}
	var opt []plot.Point
	for l, s := range optSum {
		opt = append(opt, plot.Point{X: l, Y: s / float64(optN[l])})
	}
	slices.SortFunc(opt, byX)
	ch.Series = append(ch.Series, plot.Series{Name: "optimal", Points: opt, Color: color.Black, Dashed: true})
	return ch
}

func simCmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
