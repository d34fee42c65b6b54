package main

import (
	"runtime"

	"github.com/spf13/cobra"

	"github.com/sparrowfleet/sparrow/core/shortjobs"
	"github.com/sparrowfleet/sparrow/internal/jobtrace"
	"github.com/sparrowfleet/sparrow/sim/replay"
	"github.com/sparrowfleet/sparrow/sim/sweep"
)

func init() { rootCmd.AddCommand(newSimCmd()) }

func newSimCmd() *cobra.Command {
	var spec sweep.Spec  // the sweep
	var out sweep.Output // how to print it
	jt := &replay.Options{}
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
		RunE: func(cmd *cobra.Command, _ []string) error {
			spec.Given = cmd.Flags().Changed
			if jt.File != "" {
				jt.Spec, jt.JSON, jt.Plot = spec, out.JSON, out.Plot
				return jt.Run(cmd.OutOrStdout(), cmd.ErrOrStderr())
			}
			return spec.RunAndWrite(out, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&jt.File, "job-trace", "", "replay this job trace (Hawk/Eagle format: submit_s n_tasks mean_task_s d_1..d_n per line), streamed; --policy then takes sparrow, aware, ideal or all (see docs/experiments/traces.md)")
	fl.Float64Var(&jt.TimeScale, "time-scale", 1, "with --job-trace: divide every task duration and arrival gap by this factor")
	fl.Float64Var(&jt.Cutoff, "cutoff", jobtrace.CutoffYahoo, "with --job-trace: jobs whose mean task duration is at least this many seconds are long (Hawk/Eagle: 90.5811 for Yahoo, 1129.532 for Google)")
	fl.Float64Var(&jt.ShortShare, "short-share", 0.05, "with --job-trace, policy aware: fraction of nodes reserved for short jobs, chosen by a hash of the node name (Eagle used 0.02 for Yahoo, 0.17 for Google)")
	fl.IntVar(&jt.StarveLimit, "starve-limit", shortjobs.DefaultStarveLimit, "with --job-trace, policy aware: most times a queued reservation may be passed over by younger ones")
	fl.Float64Var(&jt.GossipDelay, "gossip-delay", 1000, "with --job-trace, policy aware: ms for a node's long-work advert to reach the schedulers")
	fl.StringVar(&spec.Policies, "policy", "all", "placement policies: random, pertask, batch, late, omniscient, a comma list, or all")
	fl.IntVar(&spec.Nodes, "nodes", 10000, "number of node monitors")
	fl.IntVar(&spec.Slots, "slots", 1, "task slots (cores) per node monitor")
	fl.IntVar(&spec.Tasks, "tasks", 500, "tasks per job (m)")
	fl.StringVar(&spec.Loads, "load", "0.1,0.3,0.5,0.6,0.7,0.8,0.9,0.95", "offered load(s) in (0,1), one value or a comma list")
	fl.IntVar(&spec.Jobs, "jobs", 2000, "jobs measured per point, after the warm-up")
	fl.StringVar(&spec.Warmup, "warmup", "10%", `jobs simulated before measuring: N jobs, or P% of --jobs; append ",policy=N" (or P%) to override per policy, e.g. "10%,random=30000"`)
	fl.StringVar(&spec.Dist, "dist", "exp", "task duration distribution: exp, const, pareto, or trace")
	fl.Float64Var(&spec.ParetoAlpha, "pareto-alpha", 2, "Pareto shape alpha (> 1) for --dist pareto; durations are scaled to --mean")
	fl.StringVar(&spec.Trace, "trace", "", "file of task durations, one number of ms per line ('#' comments allowed), sampled with replacement; implies --dist trace")
	fl.Float64Var(&spec.Mean, "mean", 100, "mean task duration in ms (exp, const, pareto)")
	fl.Float64Var(&spec.RTT, "rtt", 1, "network round trip time in ms; each message takes rtt/2")
	fl.StringVar(&spec.ProbeRatios, "probe-ratio", "2", "probe ratio d >= 1, one value or a comma list")
	fl.BoolVar(&spec.Cancel, "cancel", false, "late: cancel a job's queued reservations once all its tasks are launched")
	fl.Uint64Var(&spec.Seed, "seed", 1, "random seed; a run is a function of its flags and seed")
	fl.BoolVar(&out.JSON, "json", false, "print a JSON array, one object per point, instead of the table")
	fl.StringVar(&out.Plot, "plot", "", "also write a plot of mean response time vs load per policy, with the optimal line, to this file (.svg or .png)")
	fl.IntVar(&spec.Parallel, "parallel", runtime.GOMAXPROCS(0), "points simulated at once, on this many goroutines")
	fl.BoolVar(&out.ZeroWait, "zero-wait", false, "print the Table 2 comparison: closed-form vs simulated probability that a job has zero wait")
	fl.Float64Var(&spec.LongFrac, "long-frac", 0, "fraction of jobs that are long (heterogeneity, paper §7.8); results add short-job-only columns")
	fl.Float64Var(&spec.LongMean, "long-mean", 10000, "mean task duration of long jobs in ms (with --long-frac)")
	fl.StringVar(&out.CPUProfile, "cpuprofile", "", "write a CPU profile (pprof format) of the whole run to this file")
	cmd.AddCommand(newSimFairnessCmd()) // sim_fairness.go: Choosy §7.1–7.2
	cmd.AddCommand(newSimQuincyCmd())   // sim_quincy.go: Quincy §6
	return cmd
}
