package sweep

import (
	"encoding/json"
	"errors"
	"fmt"
	"image/color"
	"io"
	"math"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/pflag"

	"github.com/sparrowfleet/sparrow/internal/parallel"
	"github.com/sparrowfleet/sparrow/internal/plot"
	"github.com/sparrowfleet/sparrow/sim"
)

// Spec is a sweep as sparrow sim's flags give it; its errors name the
// flags.
type Spec struct {
	Policies           string // comma list or all
	Nodes, Slots       int
	Tasks              int    // per job
	Loads              string // comma list
	Jobs               int    // measured per point
	Warmup             string // N, P%, then ",policy=N"
	Dist               string // exp, const, pareto or trace
	ParetoAlpha        float64
	Trace              string // file of durations
	Mean, RTT          float64
	ProbeRatios        string // comma list
	Cancel             bool
	Seed               uint64
	Parallel           int
	LongFrac, LongMean float64
	// Given reports whether the user set a flag (dist, mean,
	// pareto-alpha, long-mean), whose defaults are otherwise implied.
	Given func(flag string) bool
}

func (f *Spec) given(flag string) bool { return f.Given != nil && f.Given(flag) }

// MultiD reports whether the points differ in probe ratio, so that series
// need it in their labels.
func MultiD(pts []*Point) bool {
	for _, p := range pts {
		if p.cfg.ProbeRatio != pts[0].cfg.ProbeRatio {
			return true
		}
	}
	return false
}

// Run simulates the points, workers at a time, the costliest first, and
// writes a line per finished point to progress. Every point's error is
// returned, joined.
func Run(pts []*Point, workers int, progress io.Writer) error {
	order := slices.Clone(pts)
	slices.SortStableFunc(order, func(a, b *Point) int { return cmpFloat(cost(b.cfg), cost(a.cfg)) })
	start := time.Now()
	parallel.Each(workers, order, func(p *Point) {
		t0 := time.Now()
		p.res, p.err = sim.Run(p.cfg)
		p.wall = time.Since(t0)
	}, func(p *Point, done int) {
		if p.err != nil {
			fmt.Fprintf(progress, "[%d/%d] %s load=%v: error: %v\n", done, len(pts), label(p.cfg, true), p.cfg.Load, p.err)
			return
		}
		r := p.res
		fmt.Fprintf(progress, "[%d/%d] %-14s load=%-5v %d jobs  mean %8.1f ms  p99 %8.1f ms  drift %+.3f  %6.2fs  %.2fM tasks/s  (total %.1fs)\n",
			done, len(pts), label(p.cfg, true), r.Load, r.Jobs, r.MeanMS, r.P99MS, r.Drift,
			p.wall.Seconds(), float64(r.TasksSimulated)/p.wall.Seconds()/1e6, time.Since(start).Seconds())
	})
	var errs []error
	for _, p := range pts {
		if p.err != nil {
			errs = append(errs, fmt.Errorf("%s load=%v: %w", label(p.cfg, true), p.cfg.Load, p.err))
		}
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	fmt.Fprintf(progress, "%d points in %.1fs\n", len(pts), time.Since(start).Seconds())
	return nil
}

// Point is one simulation to run, and its outcome.
type Point struct {
	cfg  sim.Config
	res  sim.Result
	wall time.Duration
	// cpu is the whole process's CPU time (user and system, start-up
	// included) when the point was the sweep's only one; else zero.
	cpu time.Duration
	err error
}

// jsonRow is one JSON object of --json.
type jsonRow struct {
	sim.Result
	ZeroWaitClosedForm *float64 `json:"zero_wait_closed_form,omitempty"`
	WallSeconds        float64  `json:"wall_seconds"`
	TasksPerSec        float64  `json:"tasks_per_sec"`
	EventsPerSec       float64  `json:"events_per_sec"`
	// CPUSeconds is the CPU time (user + system) of the whole process,
	// start-up and output included, given only for a sweep of one point,
	// whose tasks per CPU-second it is the divisor of.
	CPUSeconds     float64 `json:"cpu_seconds,omitempty"`
	TasksPerCPUSec float64 `json:"tasks_per_cpu_sec,omitempty"`
}

// ParseFloats parses a comma list of numbers given to the flag --name.
func ParseFloats(name, s string) ([]float64, error) {
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

// parseWarmup parses --warmup into a default and per-policy overrides.
func parseWarmup(s string, jobs int) (def int, per map[sim.Policy]int, err error) {
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

// Points validates the spec and lists its points: per policy, per probe
// ratio (one for policies that send no probes), per load.
func (f *Spec) Points() ([]*Point, error) {
	policies, err := sim.ParsePolicies(f.Policies)
	if err != nil {
		return nil, fmt.Errorf("--policy: %w", err)
	}
	loads, err := ParseFloats("load", f.Loads)
	if err != nil {
		return nil, err
	}
	ratios, err := ParseFloats("probe-ratio", f.ProbeRatios)
	if err != nil {
		return nil, err
	}
	if f.Jobs < 1 {
		return nil, fmt.Errorf("--jobs must be at least 1, got %d", f.Jobs)
	}
	if f.Parallel < 1 {
		return nil, fmt.Errorf("--parallel must be at least 1, got %d", f.Parallel)
	}
	warm, warmPer, err := parseWarmup(f.Warmup, f.Jobs)
	if err != nil {
		return nil, err
	}
	kind, err := sim.ParseDist(f.Dist)
	if err != nil {
		return nil, fmt.Errorf("--dist: %w", err)
	}
	dist := sim.Dist{Kind: kind, Mean: f.Mean, Alpha: f.ParetoAlpha}
	distSet := f.given("dist")
	switch {
	case f.Trace != "" && distSet && kind != sim.Trace:
		return nil, fmt.Errorf("--trace needs --dist trace, not --dist %s", kind)
	case f.Trace != "":
		dist.Kind = sim.Trace
		if dist.Trace, err = sim.ReadTraceFile(f.Trace); err != nil {
			return nil, err
		}
		if f.given("mean") {
			return nil, fmt.Errorf("--mean does not apply to --dist trace (the trace's own mean is used)")
		}
	case kind == sim.Trace:
		return nil, fmt.Errorf("--dist trace needs --trace FILE")
	}
	if f.given("pareto-alpha") && dist.Kind != sim.Pareto {
		return nil, fmt.Errorf("--pareto-alpha only applies to --dist pareto")
	}
	if f.given("long-mean") && f.LongFrac == 0 {
		return nil, fmt.Errorf("--long-mean needs --long-frac > 0")
	}
	if f.Cancel && !slices.Contains(policies, sim.Late) {
		return nil, fmt.Errorf("--cancel only applies to --policy late")
	}
	var pts []*Point
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
					Policy: p, Nodes: f.Nodes, Slots: f.Slots, Tasks: f.Tasks, Load: l,
					Jobs: f.Jobs, Warmup: w, Dist: dist, RTT: f.RTT, ProbeRatio: d,
					Cancel: f.Cancel && p == sim.Late, Seed: f.Seed,
					Long: sim.LongJobs{Fraction: f.LongFrac, Mean: f.LongMean},
				}
				if err := cfg.Validate(); err != nil {
					return nil, fmt.Errorf("%s at load %v, d=%v: %w", p, l, d, err)
				}
				pts = append(pts, &Point{cfg: cfg})
			}
		}
	}
	return pts, nil
}

// cost estimates a point's relative run time, to start the longest first.
func cost(c sim.Config) float64 {
	w := 1.0
	if c.Policy == sim.Late {
		w = 10 * c.ProbeRatio
	}
	return w * float64(c.Jobs+c.Warmup) * float64(c.Tasks) / (1.01 - c.Load)
}

// label names a point's series: the policy, with d when it matters.
func label(c sim.Config, withD bool) string {
	if withD && c.Policy != sim.Random && c.Policy != sim.Omniscient {
		return fmt.Sprintf("%s d=%g", c.Policy, c.ProbeRatio)
	}
	return c.Policy.String()
}

func row(p *Point) jsonRow {
	o := jsonRow{Result: p.res, WallSeconds: p.wall.Seconds()}
	if s := p.wall.Seconds(); s > 0 {
		o.TasksPerSec = float64(p.res.TasksSimulated) / s
		o.EventsPerSec = float64(p.res.Events) / s
	}
	if c := p.cpu.Seconds(); c > 0 {
		o.CPUSeconds = c
		o.TasksPerCPUSec = float64(p.res.TasksSimulated) / c
	}
	c := p.cfg
	if v, ok := sim.ZeroWaitClosedForm(c.Policy, c.Load, c.ProbeRatio, c.Tasks, c.Slots); ok {
		o.ZeroWaitClosedForm = &v
	}
	return o
}

// WriteJSON writes the points as one JSON array, one object per point.
func WriteJSON(w io.Writer, pts []*Point) error {
	outs := make([]jsonRow, len(pts))
	for i, p := range pts {
		outs[i] = row(p)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(outs)
}

// WriteTable writes the points as a table; multiD labels series with their
// probe ratio, short adds the short jobs' columns.
func WriteTable(w io.Writer, pts []*Point, multiD, short bool) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	hdr := "policy\tload\tjobs\tmedian_ms\tmean_ms\tp95_ms\tp99_ms\toptimal_ms\tmean/opt\tzero_wait\tdrift\ttasks/s\tevents/s\t"
	if short {
		hdr += "short_jobs\tshort_median\tshort_mean\tshort_p99\tshort_opt\t"
	}
	fmt.Fprintln(tw, hdr)
	for _, p := range pts {
		o := row(p)
		r := p.res
		fmt.Fprintf(tw, "%s\t%g\t%d\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t%.3f\t%.3f\t%+.3f\t%.3gM\t%.3gM\t",
			label(p.cfg, multiD), r.Load, r.Jobs, r.MedianMS, r.MeanMS, r.P95MS, r.P99MS, r.OptimalMS,
			r.MeanMS/r.OptimalMS, r.ZeroWait, r.Drift, o.TasksPerSec/1e6, o.EventsPerSec/1e6)
		if short && r.Short != nil {
			s := r.Short
			fmt.Fprintf(tw, "%d\t%.1f\t%.1f\t%.1f\t%.1f\t", s.Jobs, s.MedianMS, s.MeanMS, s.P99MS, s.OptimalMS)
		}
		fmt.Fprintln(tw)
	}
	return tw.Flush()
}

// WriteZeroWait prints, per load, each policy's simulated zero-wait
// fraction next to the paper's closed form where one exists.
func WriteZeroWait(w io.Writer, pts []*Point, multiD bool) error {
	var loads []float64
	var series []string
	cell := map[string]map[float64]*Point{}
	for _, p := range pts {
		if !slices.Contains(loads, p.cfg.Load) {
			loads = append(loads, p.cfg.Load)
		}
		l := label(p.cfg, multiD)
		if cell[l] == nil {
			cell[l] = map[float64]*Point{}
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

// Chart draws mean response time against load, one line per series,
// with the optimum (each job's longest task) dashed in black.
func Chart(pts []*Point, multiD bool) *plot.Chart {
	var names []string
	byName := map[string][]plot.Point{}
	optSum := map[float64]float64{}
	optN := map[float64]int{}
	for _, p := range pts {
		n := label(p.cfg, multiD)
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
	byX := func(a, b plot.Point) int { return cmpFloat(a.X, b.X) }
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

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// AddFlags declares the flags of `sparrow sim` that set the sweep on fs, with
// their defaults.
func (f *Spec) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&f.Policies, "policy", "all", "placement policies: random, pertask, batch, late, omniscient, a comma list, or all")
	fs.IntVar(&f.Nodes, "nodes", 10000, "number of node monitors")
	fs.IntVar(&f.Slots, "slots", 1, "task slots (cores) per node monitor")
	fs.IntVar(&f.Tasks, "tasks", 500, "tasks per job (m)")
	fs.StringVar(&f.Loads, "load", "0.1,0.3,0.5,0.6,0.7,0.8,0.9,0.95", "offered load(s) in (0,1), one value or a comma list")
	fs.IntVar(&f.Jobs, "jobs", 2000, "jobs measured per point, after the warm-up")
	fs.StringVar(&f.Warmup, "warmup", "10%", `jobs simulated before measuring: N jobs, or P% of --jobs; append ",policy=N" (or P%) to override per policy, e.g. "10%,random=30000"`)
	fs.StringVar(&f.Dist, "dist", "exp", "task duration distribution: exp, const, pareto, or trace")
	fs.Float64Var(&f.ParetoAlpha, "pareto-alpha", 2, "Pareto shape alpha (> 1) for --dist pareto; durations are scaled to --mean")
	fs.StringVar(&f.Trace, "trace", "", "file of task durations, one number of ms per line ('#' comments allowed), sampled with replacement; implies --dist trace")
	fs.Float64Var(&f.Mean, "mean", 100, "mean task duration in ms (exp, const, pareto)")
	fs.Float64Var(&f.RTT, "rtt", 1, "network round trip time in ms; each message takes rtt/2")
	fs.StringVar(&f.ProbeRatios, "probe-ratio", "2", "probe ratio d >= 1, one value or a comma list")
	fs.BoolVar(&f.Cancel, "cancel", false, "late: cancel a job's queued reservations once all its tasks are launched")
	fs.Uint64Var(&f.Seed, "seed", 1, "random seed; a run is a function of its flags and seed")
	fs.IntVar(&f.Parallel, "parallel", runtime.GOMAXPROCS(0), "points simulated at once, on this many goroutines")
	fs.Float64Var(&f.LongFrac, "long-frac", 0, "fraction of jobs that are long (heterogeneity, paper §7.8); results add short-job-only columns")
	fs.Float64Var(&f.LongMean, "long-mean", 10000, "mean task duration of long jobs in ms (with --long-frac)")
}
