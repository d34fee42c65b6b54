package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/sparrowfleet/sparrow/bench/policy"
	"github.com/sparrowfleet/sparrow/bench/policy/live"
	"github.com/sparrowfleet/sparrow/internal/plot"
	"github.com/sparrowfleet/sparrow/internal/report"
)

// The policy experiments of the paper (§7.5 Figure 11, §7.6 Table 3) and a
// job-level constraints scenario (§4.1), run on a real in-process fleet.
// docs/POLICIES.md records their results next to the paper's.
func init() {
	benchCmd.AddCommand(newBenchFairnessCmd(), newBenchPriorityCmd(), newBenchConstraintsCmd())
}

// policyFlags are the flags every policy scenario shares.
type policyFlags struct {
	live.Common
	asJSON bool
	plot   string
}

func (p *policyFlags) register(fs *pflag.FlagSet, nodes int) {
	fs.IntVar(&p.Fleet.Schedulers, "schedulers", 2, "schedulers in the fleet (jobs go to them round robin)")
	fs.IntVar(&p.Fleet.NodeMonitors, "nodes", nodes, "node monitors in the fleet")
	fs.IntVar(&p.Fleet.Slots, "slots", 4, "slots per node monitor")
	fs.IntVar(&p.TasksPerJob, "tasks", 10, "tasks per job")
	fs.DurationVar(&p.TaskDuration, "task-duration", 100*time.Millisecond, "how long each sleep task runs")
	fs.Float64Var(&p.Fleet.ProbeRatio, "probe-ratio", 2, "probe ratio d")
	fs.BoolVar(&p.Fleet.SingleHost, "single-host", false, "put every member on 127.0.0.1 instead of its own 127.0.x.y address")
	fs.Uint64Var(&p.Seed, "seed", 1, "seed for arrivals and placement")
	fs.BoolVar(&p.asJSON, "json", false, "also print the results as one JSON object on the last line")
	fs.StringVar(&p.plot, "plot", "", "write a plot to this file (.svg or .png)")
	fs.Float64Var(&p.MaxLoad, "max-load", 0, "before starting each fleet, wait until the host's 1-minute load (/proc/loadavg) is below this (0: don't wait)")
	fs.DurationVar(&p.MaxLoadWait, "max-load-wait", 10*time.Minute, "longest wait for --max-load; the run then goes ahead and says so")
}

// run validates the shared flags, then the scenario's (validate), starts
// the fleet's logging and progress lines on stderr, runs the scenario and
// prints its report.
func (p *policyFlags) run(cmd *cobra.Command, validate func() error, scenario func(context.Context, live.Common) (report.Charted, error)) error {
	if err := p.Validate(); err != nil {
		return err
	}
	if p.plot != "" {
		if err := plot.CheckPath(p.plot); err != nil {
			return fmt.Errorf("--%w", err) // "--plot FILE: want ..."
		}
	}
	if err := validate(); err != nil {
		return err
	}
	ctx, cancel := benchContext(cmd, true)
	defer cancel()
	base, err := newLogger() // validates --log-level
	if err != nil {
		return err
	}
	stderr := cmd.ErrOrStderr()
	p.Fleet.Log, p.Fleet.Watch = live.NewLog(os.Stderr, base.GetLevel())
	p.Fleet.Seed = p.Seed
	p.Progress = func(pr live.Progress) { fmt.Fprintln(stderr, " ", pr) }
	p.Say = lines(stderr)
	r, err := scenario(ctx, p.Common)
	if err != nil {
		return err
	}
	return report.Write(cmd.OutOrStdout(), stderr, r, report.If(p.asJSON, report.TableThenJSON), p.plot)
}

func newBenchFairnessCmd() *cobra.Command {
	var pf policyFlags
	var o live.FairnessOptions
	var weights string
	cmd := &cobra.Command{
		Use:   "fairness",
		Short: "Weighted fair sharing between two users as demand changes (paper Figure 11)",
		Long: `Reproduce the paper's Figure 11 (§7.5) on a real fleet with "fair" queues:
user0 offers --user0-load (default 1: the whole fleet) throughout, while
user1's offered load steps through --user1-loads, one step per --interval.
Jobs arrive as Poisson processes. Each user's share is the fraction of
the fleet's slot-time its tasks ran (executor start to finish) in each
--bin, printed next to its weighted max-min fair share of the offered
demands, with the mean absolute deviation. --weights w0:w1 sets the
users' weights on every node monitor.`,
		Example: `  sparrow bench fairness --plot docs/img/fairness-1-1.svg
  sparrow bench fairness --weights 1:3 --plot docs/img/fairness-1-3.svg`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return pf.run(cmd, func() (err error) {
				if o.Weights, err = policy.ParseWeights(weights); err != nil {
					return fmt.Errorf("--weights: %w", err)
				}
				return o.Validate()
			}, func(ctx context.Context, c live.Common) (report.Charted, error) {
				fmt.Fprintf(cmd.ErrOrStderr(), "fairness: %d node monitors x %d slots, weights %s, user1 loads %v per %v\n",
					c.Fleet.NodeMonitors, c.Fleet.Slots, weights, o.User1Loads, o.Interval)
				o.Common = c
				return live.Fairness(ctx, o)
			})
		},
	}
	pf.register(cmd.Flags(), 10)
	fs := cmd.Flags()
	fs.DurationVar(&o.Interval, "interval", 10*time.Second, "length of each step of user1's demand")
	fs.DurationVar(&o.Bin, "bin", time.Second, "share measurement bin")
	fs.StringVar(&weights, "weights", "1:1", "fair-share weights user0:user1")
	fs.Float64Var(&o.User0Load, "user0-load", 1, "user0's offered load, as a fraction of the fleet's slots")
	fs.Float64SliceVar(&o.User1Loads, "user1-loads", []float64{0, 0.25, 0.5, 0.25, 0}, "user1's offered load in each interval")
	return cmd
}

func newBenchPriorityCmd() *cobra.Command {
	var pf policyFlags
	var o live.PriorityOptions
	cmd := &cobra.Command{
		Use:   "priority",
		Short: "A high-priority user beside a growing low-priority load (paper Table 3)",
		Long: `Reproduce the paper's Table 3 (§7.6) on a real fleet with "priority" queues:
for each --lp-loads value a fresh fleet runs a high-priority user
(priority 0) at --hp-load beside a low-priority user (priority 1) at that
load, for --duration of Poisson arrivals; then it waits at most --drain
for the jobs to finish. Response times (submit to last task's message)
are summarised over the jobs that completed within that window; for
overloaded runs the table also says how many LP jobs and tasks were still
queued, and gives a lower bound on the LP percentiles counting them as
finishing at the window's close. The paper's numbers are printed beside.`,
		Example: `  sparrow bench priority --plot docs/img/priority.svg`,
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return pf.run(cmd, o.Validate, func(ctx context.Context, c live.Common) (report.Charted, error) {
				o.Common = c
				return live.Priority(ctx, o)
			})
		},
	}
	pf.register(cmd.Flags(), 10)
	fs := cmd.Flags()
	fs.Float64Var(&o.HPLoad, "hp-load", 0.25, "high-priority user's offered load, as a fraction of the fleet's slots")
	fs.Float64SliceVar(&o.LPLoads, "lp-loads", []float64{0, 0.25, 0.5, 0.75, 1.75}, "low-priority loads, one fleet run each")
	fs.DurationVar(&o.Duration, "duration", 15*time.Second, "how long jobs arrive in each run")
	fs.DurationVar(&o.Drain, "drain", 5*time.Second, "longest wait for unfinished jobs after arrivals stop; what is left is reported as still queued")
	fs.DurationVar(&o.Warmup, "warmup", time.Second, "jobs submitted this early in each run are not measured")
	return cmd
}

func newBenchConstraintsCmd() *cobra.Command {
	var pf policyFlags
	var o live.ConstraintsOptions
	var attr string
	cmd := &cobra.Command{
		Use:   "constraints",
		Short: "Jobs constrained to 20% of the nodes beside unconstrained jobs (paper §4.1)",
		Long: `Run jobs with a job-level constraint (§4.1: every task must run on a node
advertising --attr, which --attr-fraction of the node monitors do) at
--constrained-load of those nodes' slots, beside unconstrained jobs at
--free-load of the whole fleet's slots, and report both groups' response
times, where their tasks ran and how busy each kind of node was.`,
		Example: `  sparrow bench constraints --plot docs/img/constraints.svg`,
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return pf.run(cmd, func() (err error) {
				if o.AttrKey, o.AttrValue, err = live.ParseAttr(attr); err != nil {
					return err
				}
				return o.Validate()
			}, func(ctx context.Context, c live.Common) (report.Charted, error) {
				o.Common = c
				return live.Constraints(ctx, o)
			})
		},
	}
	pf.register(cmd.Flags(), 20)
	fs := cmd.Flags()
	fs.StringVar(&attr, "attr", "gpu=yes", "node attribute the constrained jobs require (key=value)")
	fs.Float64Var(&o.AttrFraction, "attr-fraction", 0.2, "fraction of node monitors that have the attribute (at least one)")
	fs.Float64Var(&o.ConstrainedLoad, "constrained-load", 0.5, "constrained jobs' offered load, as a fraction of the attribute nodes' slots")
	fs.Float64Var(&o.FreeLoad, "free-load", 0.5, "unconstrained jobs' offered load, as a fraction of all slots")
	fs.StringVar(&o.Queue, "queue", "fifo", "node monitors' queue discipline")
	fs.DurationVar(&o.Duration, "duration", 30*time.Second, "how long jobs arrive")
	fs.DurationVar(&o.Drain, "drain", 10*time.Second, "longest wait for unfinished jobs after arrivals stop")
	fs.DurationVar(&o.Warmup, "warmup", time.Second, "jobs submitted this early are not measured")
	return cmd
}
