package main

import (
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/pprof"

	"github.com/spf13/cobra"

	"github.com/sparrowfleet/sparrow/sim/sweep"
)

func init() { rootCmd.AddCommand(newSimCmd()) }

// simFlags are sparrow sim's flags: the sweep, and how to print it.
type simFlags struct {
	spec       sweep.Spec
	cpuProfile string
	json       bool
	plot       string
	zeroWait   bool
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
	fl.StringVar(&f.spec.Policies, "policy", "all", "placement policies: random, pertask, batch, late, omniscient, a comma list, or all")
	fl.IntVar(&f.spec.Nodes, "nodes", 10000, "number of node monitors")
	fl.IntVar(&f.spec.Slots, "slots", 1, "task slots (cores) per node monitor")
	fl.IntVar(&f.spec.Tasks, "tasks", 500, "tasks per job (m)")
	fl.StringVar(&f.spec.Loads, "load", "0.1,0.3,0.5,0.6,0.7,0.8,0.9,0.95", "offered load(s) in (0,1), one value or a comma list")
	fl.IntVar(&f.spec.Jobs, "jobs", 2000, "jobs measured per point, after the warm-up")
	fl.StringVar(&f.spec.Warmup, "warmup", "10%", `jobs simulated before measuring: N jobs, or P% of --jobs; append ",policy=N" (or P%) to override per policy, e.g. "10%,random=30000"`)
	fl.StringVar(&f.spec.Dist, "dist", "exp", "task duration distribution: exp, const, pareto, or trace")
	fl.Float64Var(&f.spec.ParetoAlpha, "pareto-alpha", 2, "Pareto shape alpha (> 1) for --dist pareto; durations are scaled to --mean")
	fl.StringVar(&f.spec.Trace, "trace", "", "file of task durations, one number of ms per line ('#' comments allowed), sampled with replacement; implies --dist trace")
	fl.Float64Var(&f.spec.Mean, "mean", 100, "mean task duration in ms (exp, const, pareto)")
	fl.Float64Var(&f.spec.RTT, "rtt", 1, "network round trip time in ms; each message takes rtt/2")
	fl.StringVar(&f.spec.ProbeRatios, "probe-ratio", "2", "probe ratio d >= 1, one value or a comma list")
	fl.BoolVar(&f.spec.Cancel, "cancel", false, "late: cancel a job's queued reservations once all its tasks are launched")
	fl.Uint64Var(&f.spec.Seed, "seed", 1, "random seed; a run is a function of its flags and seed")
	fl.BoolVar(&f.json, "json", false, "print a JSON array, one object per point, instead of the table")
	fl.StringVar(&f.plot, "plot", "", "also write a plot of mean response time vs load per policy, with the optimal line, to this file (.svg or .png)")
	fl.IntVar(&f.spec.Parallel, "parallel", runtime.GOMAXPROCS(0), "points simulated at once, on this many goroutines")
	fl.BoolVar(&f.zeroWait, "zero-wait", false, "print the Table 2 comparison: closed-form vs simulated probability that a job has zero wait")
	fl.Float64Var(&f.spec.LongFrac, "long-frac", 0, "fraction of jobs that are long (heterogeneity, paper §7.8); results add short-job-only columns")
	fl.Float64Var(&f.spec.LongMean, "long-mean", 10000, "mean task duration of long jobs in ms (with --long-frac)")
	fl.StringVar(&f.cpuProfile, "cpuprofile", "", "write a CPU profile (pprof format) of the whole run to this file")
	cmd.AddCommand(newSimFairnessCmd()) // sim_fairness.go: Choosy §7.1–7.2
	cmd.AddCommand(newSimQuincyCmd())   // sim_quincy.go: Quincy §6
	return cmd
}

func runSim(cmd *cobra.Command, f *simFlags) error {
	f.spec.Given = cmd.Flags().Changed
	pts, err := f.spec.Points()
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
	stderr := cmd.ErrOrStderr()
	if err := sweep.Run(pts, f.spec.Parallel, stderr); err != nil {
		return err
	}
	multiD := sweep.MultiD(pts)
	out := cmd.OutOrStdout()
	if f.plot != "" {
		if err := sweep.Chart(pts, multiD).Save(f.plot); err != nil {
			return fmt.Errorf("--plot: %w", err)
		}
		fmt.Fprintf(stderr, "wrote %s\n", f.plot)
	}
	switch {
	case f.json:
		return sweep.WriteJSON(out, pts)
	case f.zeroWait:
		return sweep.WriteZeroWait(out, pts, multiD)
	}
	return sweep.WriteTable(out, pts, multiD, f.spec.LongFrac > 0)
}
