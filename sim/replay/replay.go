package replay

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/spf13/pflag"

	"github.com/sparrowfleet/sparrow/core/shortjobs"
	"github.com/sparrowfleet/sparrow/internal/jobtrace"
	"github.com/sparrowfleet/sparrow/sim"
	"github.com/sparrowfleet/sparrow/sim/sweep"
)

// Options are a replay: the job-trace flags of sparrow sim, and Spec, the
// sim command's own flags that apply (policy, nodes, slots, rtt, probe
// ratio, load, seed, parallel); Spec.Given reports which flags the user
// set.
type Options struct {
	// File is the trace.
	File string
	// TimeScale divides every task duration and arrival gap.
	TimeScale float64
	// Cutoff (trace seconds of mean task duration) separates short jobs
	// from long ones; ShortShare, StarveLimit and GossipDelay (ms) are
	// the long-task-aware policy's settings.
	Cutoff, ShortShare float64
	StarveLimit        int
	GossipDelay        float64
	// LongSteer, ClassFirst, WorkRefresh and ShortStickyOnly are the
	// policy's switches of the same names (shortjobs.Config).
	LongSteer, ClassFirst, WorkRefresh, ShortStickyOnly bool
	// Overrun is shortjobs.Config.Overrun.
	Overrun bool
	// AdaptiveShare sizes the short-only share as the run goes, with
	// ShortShare as its floor; ShareHold is how long its target must stay
	// below a step before it falls one.
	AdaptiveShare bool
	ShareHold     time.Duration
	// Estimates names the source of task duration estimates
	// (sim.ParseTraceEstimates).
	Estimates string
	// Unestimated names the rule for jobs without an estimate
	// (shortjobs.ParseUnestimated).
	Unestimated string
	// Pull turns on pulls (policy aware): after PullAfter ms with tasks
	// unlaunched, a short job's tasks are pulled by slots freed anywhere.
	Pull      bool
	PullAfter float64
	Spec      sweep.Spec
	// JSON prints a JSON object per point instead of the tables; Plot, if
	// set, receives the short jobs' CDFs, and Plot with "-long" before
	// its extension the long jobs'.
	JSON bool
	Plot string
	// JobsOut, if set, receives every run's per-job outcomes as CSV
	// (jobtrace.WriteJobs), each run named as in the plots.
	JobsOut string
}

// point is one replay to run, and its outcome.
type point struct {
	cfg       sim.TraceConfig
	load      float64 // offered load, after gap scaling
	traceLoad float64 // the trace's own load on this cluster
	rec       *jobtrace.Recorder
	res       sim.TraceResult
	wall      time.Duration
	err       error
}

// row is one JSON object of --json.
type row struct {
	Trace     string  `json:"trace"`
	Load      float64 `json:"load"`
	TraceLoad float64 `json:"trace_load"`
	TimeScale float64 `json:"time_scale"`
	sim.TraceResult
	WallSeconds float64 `json:"wall_seconds"`
}

func (p *point) name(multiLoad bool) string {
	if multiLoad {
		return fmt.Sprintf("%s@%g", p.cfg.Policy, p.load)
	}
	return p.cfg.Policy.String()
}

func open(path string) (*os.File, *jobtrace.Reader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("--job-trace: %w", err)
	}
	return f, jobtrace.NewReader(f, path), nil
}

// notForTraces are the sim flags a replay refuses: the trace fixes the
// jobs.
var notForTraces = []string{"tasks", "jobs", "warmup", "dist", "pareto-alpha", "trace", "mean", "zero-wait", "long-frac", "long-mean", "cancel"}

// traceOnly are the flags of AddFlags that mean something only with
// --job-trace.
var traceOnly = []string{"time-scale", "cutoff", "short-share", "starve-limit", "gossip-delay", "pull", "pull-after", "jobs-out",
	"long-steer", "class-first", "work-refresh", "short-sticky-only", "adaptive-share", "share-hold", "estimates", "unestimated", "overrun"}

// CheckUnused refuses the flags of AddFlags given (by changed) without
// --job-trace: a simulation that silently dropped them would not be the
// one asked for.
func CheckUnused(changed func(string) bool) error {
	for _, name := range traceOnly {
		if changed(name) {
			return fmt.Errorf("--%s needs --job-trace", name)
		}
	}
	return nil
}

func (o *Options) given(flag string) bool { return o.Spec.Given != nil && o.Spec.Given(flag) }

// Run replays the trace at every point, with a line per point on
// progress, and prints the results on out.
func (o *Options) Run(out, progress io.Writer) error {
	pts, loads, own, err := o.points(progress)
	if err != nil {
		return err
	}
	start := time.Now()
	if err := o.run(pts, progress); err != nil {
		return err
	}
	fmt.Fprintf(progress, "%d runs in %.1fs\n", len(pts), time.Since(start).Seconds())
	if o.Plot != "" {
		if err := o.writePlots(pts, len(loads) > 1); err != nil {
			return err
		}
	}
	if o.JobsOut != "" {
		if err := o.writeJobs(pts, len(loads) > 1); err != nil {
			return err
		}
	}
	if o.JSON {
		enc := json.NewEncoder(out)
		for _, p := range pts {
			r := row{Trace: o.File, Load: p.load, TraceLoad: p.traceLoad, TimeScale: o.TimeScale, TraceResult: p.res, WallSeconds: p.wall.Seconds()}
			if err := enc.Encode(r); err != nil {
				return err
			}
		}
		return nil
	}
	return o.writeTables(out, pts, loads, own)
}

// points checks the settings, scans the trace and lists the points: per
// load (the trace's own unless --load is given), per policy.
func (o *Options) points(progress io.Writer) (pts []*point, loads []float64, own float64, err error) {
	for _, name := range notForTraces {
		if o.given(name) {
			return nil, nil, 0, fmt.Errorf("--%s does not apply to --job-trace (the trace fixes the jobs; reservations are always cancelled)", name)
		}
	}
	if !(o.TimeScale > 0) || math.IsInf(o.TimeScale, 0) {
		return nil, nil, 0, fmt.Errorf("--time-scale must be a finite number > 0, got %v", o.TimeScale)
	}
	if o.given("share-hold") && !o.AdaptiveShare {
		return nil, nil, 0, fmt.Errorf("--share-hold needs --adaptive-share")
	}
	policies, err := sim.ParseTracePolicies(o.Spec.Policies)
	if err != nil {
		return nil, nil, 0, fmt.Errorf("--policy: %w", err)
	}
	ratios, err := sweep.ParseFloats("probe-ratio", o.Spec.ProbeRatios)
	if err != nil || len(ratios) != 1 {
		return nil, nil, 0, fmt.Errorf("--probe-ratio: want one value with --job-trace (%v)", err)
	}
	if o.Plot != "" {
		if err := checkPlotPath(o.Plot); err != nil {
			return nil, nil, 0, err
		}
	}
	estimates, err := sim.ParseTraceEstimates(o.Estimates)
	if err != nil {
		return nil, nil, 0, fmt.Errorf("--estimates: %w", err)
	}
	unestimated, err := shortjobs.ParseUnestimated(o.Unestimated)
	if err != nil {
		return nil, nil, 0, fmt.Errorf("--unestimated: %w", err)
	}
	file, r, err := open(o.File)
	if err != nil {
		return nil, nil, 0, err
	}
	tot, err := jobtrace.Scan(r)
	file.Close()
	if err != nil {
		return nil, nil, 0, err
	}
	if tot.Jobs == 0 {
		return nil, nil, 0, fmt.Errorf("--job-trace %s: no jobs", o.File)
	}
	s := o.Spec
	// Dividing durations and gaps alike leaves the load as it is.
	own = tot.Load(s.Nodes * s.Slots)
	loads = []float64{own}
	if o.given("load") {
		if loads, err = sweep.ParseFloats("load", s.Loads); err != nil {
			return nil, nil, 0, err
		}
	}
	fmt.Fprintf(progress, "%s: %d jobs, %d tasks, %.0f task-seconds over %.0f s of arrivals: load %.3f on %d x %d slots at time scale %g\n",
		o.File, tot.Jobs, tot.Tasks, tot.Work, tot.Span(), own, s.Nodes, s.Slots, o.TimeScale)
	for _, l := range loads {
		if !(l > 0) || own <= 0 {
			return nil, nil, 0, fmt.Errorf("--load %v: want a load > 0 and a trace whose arrivals span some time", l)
		}
		for _, p := range policies {
			cfg := sim.TraceConfig{
				Policy: p, Nodes: s.Nodes, Slots: s.Slots, RTT: s.RTT, ProbeRatio: ratios[0],
				TimeScale: o.TimeScale, GapScale: own / l, GossipDelay: o.GossipDelay, Pull: o.Pull, PullAfter: o.PullAfter, AdaptiveShare: o.AdaptiveShare, ShareHold: o.ShareHold, Estimates: estimates, Seed: s.Seed,
				Aware: shortjobs.Config{Cutoff: o.Cutoff, ShortShare: o.ShortShare, StarveLimit: o.StarveLimit,
					LongSteer: o.LongSteer, ClassFirst: o.ClassFirst, WorkRefresh: o.WorkRefresh, ShortStickyOnly: o.ShortStickyOnly,
					Overrun: o.Overrun, Unestimated: unestimated},
			}
			if err := cfg.Validate(); err != nil {
				return nil, nil, 0, fmt.Errorf("%s: %w", p, err)
			}
			rec := jobtrace.NewRecorder(o.Cutoff)
			if o.JobsOut != "" {
				rec.KeepJobs()
			}
			pts = append(pts, &point{cfg: cfg, load: l, traceLoad: own, rec: rec})
		}
	}
	return pts, loads, own, nil
}

// run replays the points, Spec.Parallel at a time, and returns every
// point's error, joined.
func (o *Options) run(pts []*point, progress io.Writer) error {
	work := make(chan *point)
	var wg sync.WaitGroup
	var mu sync.Mutex
	for range min(max(o.Spec.Parallel, 1), len(pts)) {
		wg.Go(func() {
			for p := range work {
				t0 := time.Now()
				p.err = runPoint(o.File, p)
				p.wall = time.Since(t0)
				mu.Lock()
				if p.err != nil {
					fmt.Fprintf(progress, "%s load=%g: error: %v\n", p.cfg.Policy, p.load, p.err)
				} else {
					fmt.Fprintf(progress, "%-8s load=%-6.3g short p50 %.1f s p99 %.1f s, long mean %.1f s  %.1fs\n",
						p.cfg.Policy, p.load, p.res.Short.P50, p.res.Short.P99, p.res.Long.Mean, p.wall.Seconds())
				}
				mu.Unlock()
			}
		})
	}
	for _, p := range pts {
		work <- p
	}
	close(work)
	wg.Wait()
	var errs []error
	for _, p := range pts {
		if p.err != nil {
			errs = append(errs, fmt.Errorf("%s load=%g: %w", p.cfg.Policy, p.load, p.err))
		}
	}
	return errors.Join(errs...)
}

// writeTables prints a table per load, with the aware policy's steering
// counts under it.
func (o *Options) writeTables(out io.Writer, pts []*point, loads []float64, own float64) error {
	for _, l := range loads {
		fmt.Fprintf(out, "%s on %d x %d slots, load %.3g (trace's own %.3f), time scale %g, cutoff %g s; times in s, ratios to ideal\n",
			filepath.Base(o.File), o.Spec.Nodes, o.Spec.Slots, l, own, o.TimeScale, o.Cutoff)
		var runs []jobtrace.Named
		for _, p := range pts {
			if p.load == l {
				runs = append(runs, jobtrace.Named{Name: p.cfg.Policy.String(), Result: p.res.Result})
			}
		}
		if err := jobtrace.WriteTable(out, runs, sim.TraceIdeal.String()); err != nil {
			return err
		}
		for _, p := range pts {
			if p.load == l && p.cfg.Policy == sim.TraceAware {
				r := p.res
				fmt.Fprintf(out, "aware: %d of %d short jobs steered; %d sticky fetches; %d long-work adverts (%.2f per node per hour of simulated time, at most %d in a minute)\n",
					r.SteeredShort, r.ShortJobs, r.StickyFetches, r.AdvertChanges,
					float64(r.AdvertChanges)/float64(r.Nodes)/(r.SimSeconds/3600), r.AdvertPeakMinute)
			}
		}
		fmt.Fprintln(out)
	}
	return nil
}

// runPoint replays the trace file for one point, reading it afresh.
func runPoint(path string, p *point) error {
	f, r, err := open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	p.res, err = sim.RunTrace(p.cfg, r.Next, p.rec)
	return err
}

// writeJobs writes every point's per-job outcomes to JobsOut.
func (o *Options) writeJobs(pts []*point, multiLoad bool) error {
	f, err := os.Create(o.JobsOut)
	if err != nil {
		return fmt.Errorf("--jobs-out: %w", err)
	}
	for i, p := range pts {
		if err := jobtrace.WriteJobs(f, p.name(multiLoad), p.rec.Jobs(), i == 0); err != nil {
			f.Close()
			return fmt.Errorf("--jobs-out %s: %w", o.JobsOut, err)
		}
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("--jobs-out: %w", err)
	}
	return nil
}

// checkPlotPath checks --plot's name and that of its long-job sibling.
func checkPlotPath(path string) error {
	ext := strings.ToLower(filepath.Ext(path))
	if ext != ".svg" && ext != ".png" {
		return fmt.Errorf("--plot %s: want a .svg or .png file name", path)
	}
	return nil
}

// writePlots writes the short jobs' response-time CDFs to Plot and the
// long jobs' to Plot with "-long" before its extension.
func (o *Options) writePlots(pts []*point, multiLoad bool) error {
	ext := filepath.Ext(o.Plot)
	long := strings.TrimSuffix(o.Plot, ext) + "-long" + ext
	var runs []jobtrace.CDFRun
	for _, p := range pts {
		if p.cfg.Policy == sim.TraceBound {
			continue // it records no job: nothing to draw
		}
		runs = append(runs, jobtrace.CDFRun{Name: p.name(multiLoad), Rec: p.rec})
	}
	c := pts[0].cfg
	sub := fmt.Sprintf("%d x %d slots, time scale %g, cutoff %g s, rtt %g ms, d=%g, seed %d", c.Nodes, c.Slots, c.TimeScale, o.Cutoff, c.RTT, c.ProbeRatio, c.Seed)
	for _, f := range []struct {
		class jobtrace.Class
		file  string
	}{{jobtrace.Short, o.Plot}, {jobtrace.Long, long}} {
		title := fmt.Sprintf("%s: %s jobs' response time", filepath.Base(o.File), f.class)
		if err := jobtrace.CDFChart(title, sub, f.class, slices.Clone(runs)).Save(f.file); err != nil {
			return fmt.Errorf("--plot: %w", err)
		}
	}
	return nil
}

// AddFlags declares the job-trace flags of `sparrow sim` on fs, with their
// defaults.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.File, "job-trace", "", "replay this job trace (Hawk/Eagle format: submit_s n_tasks mean_task_s d_1..d_n per line), streamed; --policy then takes sparrow, aware, ideal, central, bound (a bound below any scheduler's response times on the same slots) or all (all but bound) (see docs/experiments/traces.md)")
	fs.Float64Var(&o.TimeScale, "time-scale", 1, "with --job-trace: divide every task duration and arrival gap by this factor")
	fs.Float64Var(&o.Cutoff, "cutoff", jobtrace.CutoffYahoo, "with --job-trace: jobs whose mean task duration is at least this many seconds are long (Hawk/Eagle: 90.5811 for Yahoo, 1129.532 for Google)")
	fs.Float64Var(&o.ShortShare, "short-share", 0.05, "with --job-trace, policy aware: fraction of nodes reserved for short jobs, rounded up to whole nodes (at least one when above 0), those of the smallest hash of their names (Eagle used 0.02 for Yahoo, 0.17 for Google)")
	fs.IntVar(&o.StarveLimit, "starve-limit", shortjobs.DefaultStarveLimit, "with --job-trace, policy aware: most times a queued reservation may be passed over by younger ones, per slot (a node's bound is this times --slots)")
	fs.Float64Var(&o.GossipDelay, "gossip-delay", 1000, "with --job-trace, policy aware: ms for a node's long-work advert, or a scheduler's backlog advert, to reach the others")
	fs.BoolVar(&o.Pull, "pull", true, "with --job-trace, policy aware: slots freed anywhere pull waiting short tasks from their scheduler's backlog (the daemons: --short-pull; see docs/experiments/traces.md)")
	fs.StringVar(&o.JobsOut, "jobs-out", "", "with --job-trace: write every run's per-job outcomes to this CSV file (run,job,class,mean_task_s,arrival_s,response_s; run is the policy, with @load when several loads are given; job is the job's ordinal in the trace, from 0, as in sparrow drive --jobs-out)")
	fs.BoolVar(&o.LongSteer, "long-steer", true, "with --job-trace, policy aware: node monitors advertise a coarse level of their long work, running and queued, and long jobs probe the general nodes of the lowest levels, at random among them")
	fs.BoolVar(&o.ClassFirst, "class-first", false, "with --job-trace, policy aware: node monitors serve short jobs' reservations before long jobs', then by remaining work (the daemons: --short-class-first)")
	fs.BoolVar(&o.WorkRefresh, "work-refresh", true, "with --job-trace, policy aware: schedulers send a job's remaining work to the nodes holding its reservations each time its unlaunched tasks halve")
	fs.BoolVar(&o.ShortStickyOnly, "short-sticky-only", false, "with --job-trace, policy aware: only short jobs' slots ask the same job for another task when a task ends; a long task's slot serves its queue")
	fs.BoolVar(&o.Overrun, "overrun", true, "with --job-trace, policy aware: node monitors count a short job's task that has run for the cutoff as long work until it ends, and schedulers take a job that stated no estimate as long from then on (its remaining work counted at 100 cutoffs per task, out of the pull backlog, off the short-only nodes) (the daemons: --short-overrun)")
	fs.BoolVar(&o.AdaptiveShare, "adaptive-share", false, "with --job-trace, policy aware: size the short-only share from the short work arrived over the last 10 minutes and the nodes advertising long work, in steps of 10, 20, 35, 50 and 65% above --short-share (its floor): up at once, down one step after --share-hold below")
	fs.DurationVar(&o.ShareHold, "share-hold", shortjobs.DefaultShareHold, "with --job-trace and --adaptive-share: how long, in simulated time, the share's target must stay below its step before the share falls one step")
	fs.StringVar(&o.Estimates, "estimates", "exact", "with --job-trace, policy aware: jobs' task duration estimates: exact (each job's true mean), noisy (the true mean times a random factor from 0.5 to 2) or none (the scheduler's fallback, --unestimated)")
	fs.StringVar(&o.Unestimated, "unestimated", "tasks", "with --job-trace, policy aware: how a job without an estimate is classed: tasks (short, its remaining work counted as its unlaunched tasks times half the cutoff: fewest tasks first) or history (the moving mean of finished tasks, the trace naming no applications; long before any)")
	fs.Float64Var(&o.PullAfter, "pull-after", 1000, "with --job-trace and --pull: ms a short job waits with tasks unlaunched before its scheduler advertises a backlog; also the retry delay of a pull that got no task")
}
