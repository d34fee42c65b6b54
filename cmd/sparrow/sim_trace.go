package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/sparrowfleet/sparrow/core/shortjobs"
	"github.com/sparrowfleet/sparrow/internal/jobtrace"
	"github.com/sparrowfleet/sparrow/sim"
	"github.com/sparrowfleet/sparrow/sim/sweep"
)

// simTraceFlags are the flags of `sparrow sim --job-trace`; the cluster,
// policy, load, rtt, probe ratio, seed, json, plot and parallel flags are
// the sim command's own.
type simTraceFlags struct {
	file        string
	timeScale   float64
	cutoff      float64
	shortShare  float64
	starveLimit int
	gossipDelay float64
}

// addSimTraceFlags registers the job-trace flags on the sim command.
func addSimTraceFlags(cmd *cobra.Command) *simTraceFlags {
	t := &simTraceFlags{}
	fl := cmd.Flags()
	fl.StringVar(&t.file, "job-trace", "", "replay this job trace (Hawk/Eagle format: submit_s n_tasks mean_task_s d_1..d_n per line), streamed; --policy then takes sparrow, aware, ideal or all (see docs/experiments/traces.md)")
	fl.Float64Var(&t.timeScale, "time-scale", 1, "with --job-trace: divide every task duration and arrival gap by this factor")
	fl.Float64Var(&t.cutoff, "cutoff", jobtrace.CutoffYahoo, "with --job-trace: jobs whose mean task duration is at least this many seconds are long (Hawk/Eagle: 90.5811 for Yahoo, 1129.532 for Google)")
	fl.Float64Var(&t.shortShare, "short-share", 0.05, "with --job-trace, policy aware: fraction of nodes reserved for short jobs, chosen by a hash of the node name (Eagle used 0.02 for Yahoo, 0.17 for Google)")
	fl.IntVar(&t.starveLimit, "starve-limit", shortjobs.DefaultStarveLimit, "with --job-trace, policy aware: most times a queued reservation may be passed over by younger ones")
	fl.Float64Var(&t.gossipDelay, "gossip-delay", 1000, "with --job-trace, policy aware: ms for a node's long-work advert to reach the schedulers")
	return t
}

// simTracePoint is one replay to run, and its outcome.
type simTracePoint struct {
	cfg       sim.TraceConfig
	load      float64 // offered load, after gap scaling
	traceLoad float64 // the trace's own load on this cluster
	rec       *jobtrace.Recorder
	res       sim.TraceResult
	wall      time.Duration
	err       error
}

// simTraceRow is one JSON object of --json with --job-trace.
type simTraceRow struct {
	Trace     string  `json:"trace"`
	Load      float64 `json:"load"`
	TraceLoad float64 `json:"trace_load"`
	TimeScale float64 `json:"time_scale"`
	sim.TraceResult
	WallSeconds float64 `json:"wall_seconds"`
}

func (p *simTracePoint) name(multiLoad bool) string {
	if multiLoad {
		return fmt.Sprintf("%s@%g", p.cfg.Policy, p.load)
	}
	return p.cfg.Policy.String()
}

func openTrace(path string) (*os.File, *jobtrace.Reader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("--job-trace: %w", err)
	}
	return f, jobtrace.NewReader(f, path), nil
}

func runSimTrace(cmd *cobra.Command, f *simFlags, t *simTraceFlags) error {
	fl := cmd.Flags()
	for _, name := range []string{"tasks", "jobs", "warmup", "dist", "pareto-alpha", "trace", "mean", "zero-wait", "long-frac", "long-mean", "cancel"} {
		if fl.Changed(name) {
			return fmt.Errorf("--%s does not apply to --job-trace (the trace fixes the jobs; reservations are always cancelled)", name)
		}
	}
	if !(t.timeScale > 0) || math.IsInf(t.timeScale, 0) {
		return fmt.Errorf("--time-scale must be a finite number > 0, got %v", t.timeScale)
	}
	policies, err := sim.ParseTracePolicies(f.spec.Policies)
	if err != nil {
		return fmt.Errorf("--policy: %w", err)
	}
	ratios, err := sweep.ParseFloats("probe-ratio", f.spec.ProbeRatios)
	if err != nil || len(ratios) != 1 {
		return fmt.Errorf("--probe-ratio: want one value with --job-trace (%v)", err)
	}
	if f.plot != "" {
		if err := checkPlotPath(f.plot); err != nil {
			return err
		}
	}
	file, r, err := openTrace(t.file)
	if err != nil {
		return err
	}
	tot, err := jobtrace.Scan(r)
	file.Close()
	if err != nil {
		return err
	}
	if tot.Jobs == 0 {
		return fmt.Errorf("--job-trace %s: no jobs", t.file)
	}
	own := tot.Load(f.spec.Nodes*f.spec.Slots) * t.timeScale
	loads := []float64{own}
	if fl.Changed("load") {
		if loads, err = sweep.ParseFloats("load", f.spec.Loads); err != nil {
			return err
		}
	}
	stderr := cmd.ErrOrStderr()
	fmt.Fprintf(stderr, "%s: %d jobs, %d tasks, %.0f task-seconds over %.0f s of arrivals: load %.3f on %d x %d slots at time scale %g\n",
		t.file, tot.Jobs, tot.Tasks, tot.Work, tot.Span(), own, f.spec.Nodes, f.spec.Slots, t.timeScale)
	var pts []*simTracePoint
	for _, l := range loads {
		if !(l > 0) || own <= 0 {
			return fmt.Errorf("--load %v: want a load > 0 and a trace whose arrivals span some time", l)
		}
		for _, p := range policies {
			cfg := sim.TraceConfig{
				Policy: p, Nodes: f.spec.Nodes, Slots: f.spec.Slots, RTT: f.spec.RTT, ProbeRatio: ratios[0],
				TimeScale: t.timeScale, GapScale: own / l, GossipDelay: t.gossipDelay, Seed: f.spec.Seed,
				Aware: shortjobs.Config{Cutoff: t.cutoff, ShortShare: t.shortShare, StarveLimit: t.starveLimit},
			}
			if err := cfg.Validate(); err != nil {
				return fmt.Errorf("%s: %w", p, err)
			}
			pts = append(pts, &simTracePoint{cfg: cfg, load: l, traceLoad: own, rec: jobtrace.NewRecorder(t.cutoff)})
		}
	}
	start := time.Now()
	work := make(chan *simTracePoint)
	var wg sync.WaitGroup
	var mu sync.Mutex
	for range min(max(f.spec.Parallel, 1), len(pts)) {
		wg.Go(func() {
			for p := range work {
				t0 := time.Now()
				p.err = runTracePoint(t.file, p)
				p.wall = time.Since(t0)
				mu.Lock()
				if p.err != nil {
					fmt.Fprintf(stderr, "%s load=%g: error: %v\n", p.cfg.Policy, p.load, p.err)
				} else {
					fmt.Fprintf(stderr, "%-8s load=%-6.3g short p50 %.1f s p99 %.1f s, long mean %.1f s  %.1fs\n",
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
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	fmt.Fprintf(stderr, "%d runs in %.1fs\n", len(pts), time.Since(start).Seconds())
	if f.plot != "" {
		if err := simTracePlots(f.plot, t, pts, len(loads) > 1); err != nil {
			return err
		}
	}
	out := cmd.OutOrStdout()
	if f.json {
		enc := json.NewEncoder(out)
		for _, p := range pts {
			row := simTraceRow{Trace: t.file, Load: p.load, TraceLoad: p.traceLoad, TimeScale: t.timeScale, TraceResult: p.res, WallSeconds: p.wall.Seconds()}
			if err := enc.Encode(row); err != nil {
				return err
			}
		}
		return nil
	}
	for _, l := range loads {
		fmt.Fprintf(out, "%s on %d x %d slots, load %.3g (trace's own %.3f), time scale %g, cutoff %g s; times in s, ratios to ideal\n",
			filepath.Base(t.file), f.spec.Nodes, f.spec.Slots, l, own, t.timeScale, t.cutoff)
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

// runTracePoint replays the trace file for one point, reading it afresh.
func runTracePoint(path string, p *simTracePoint) error {
	f, r, err := openTrace(path)
	if err != nil {
		return err
	}
	defer f.Close()
	p.res, err = sim.RunTrace(p.cfg, r.Next, p.rec)
	return err
}

// checkPlotPath checks --plot's name and that of its long-job sibling.
func checkPlotPath(path string) error {
	ext := strings.ToLower(filepath.Ext(path))
	if ext != ".svg" && ext != ".png" {
		return fmt.Errorf("--plot %s: want a .svg or .png file name", path)
	}
	return nil
}

// simTracePlots writes the short jobs' response-time CDFs to path and the
// long jobs' to path with "-long" before its extension.
func simTracePlots(path string, t *simTraceFlags, pts []*simTracePoint, multiLoad bool) error {
	ext := filepath.Ext(path)
	long := strings.TrimSuffix(path, ext) + "-long" + ext
	var runs []jobtrace.CDFRun
	for _, p := range pts {
		runs = append(runs, jobtrace.CDFRun{Name: p.name(multiLoad), Rec: p.rec})
	}
	c := pts[0].cfg
	sub := fmt.Sprintf("%d x %d slots, time scale %g, cutoff %g s, rtt %g ms, d=%g, seed %d", c.Nodes, c.Slots, c.TimeScale, t.cutoff, c.RTT, c.ProbeRatio, c.Seed)
	for _, o := range []struct {
		class jobtrace.Class
		file  string
	}{{jobtrace.Short, path}, {jobtrace.Long, long}} {
		title := fmt.Sprintf("%s: %s jobs' response time", filepath.Base(t.file), o.class)
		if err := jobtrace.CDFChart(title, sub, o.class, slices.Clone(runs)).Save(o.file); err != nil {
			return fmt.Errorf("--plot: %w", err)
		}
	}
	return nil
}
