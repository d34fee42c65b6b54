package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/rs/zerolog"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/sparrowfleet/sparrow/bench/policy"
	"github.com/sparrowfleet/sparrow/bench/policy/live"
	"github.com/sparrowfleet/sparrow/internal/plot"
	"golang.org/x/term"
)

// The policy experiments of the paper (§7.5 Figure 11, §7.6 Table 3) and a
// job-level constraints scenario (§4.1), run on a real in-process fleet.
// docs/POLICIES.md records their results next to the paper's.
func init() {
	benchCmd.AddCommand(newBenchFairnessCmd(), newBenchPriorityCmd(), newBenchConstraintsCmd())
}

// policyFlags are the flags every policy scenario shares.
type policyFlags struct {
	schedulers, nodes, slots, tasks int
	taskDuration                    time.Duration
	probeRatio                      float64
	singleHost, asJSON              bool
	seed                            uint64
	plot                            string
	maxLoad                         float64
	maxLoadWait                     time.Duration
}

func (p *policyFlags) register(fs *pflag.FlagSet, nodes int) {
	fs.IntVar(&p.schedulers, "schedulers", 2, "schedulers in the fleet (jobs go to them round robin)")
	fs.IntVar(&p.nodes, "nodes", nodes, "node monitors in the fleet")
	fs.IntVar(&p.slots, "slots", 4, "slots per node monitor")
	fs.IntVar(&p.tasks, "tasks", 10, "tasks per job")
	fs.DurationVar(&p.taskDuration, "task-duration", 100*time.Millisecond, "how long each sleep task runs")
	fs.Float64Var(&p.probeRatio, "probe-ratio", 2, "probe ratio d")
	fs.BoolVar(&p.singleHost, "single-host", false, "put every member on 127.0.0.1 instead of its own 127.0.x.y address")
	fs.Uint64Var(&p.seed, "seed", 1, "seed for arrivals and placement")
	fs.BoolVar(&p.asJSON, "json", false, "also print the results as one JSON object on the last line")
	fs.StringVar(&p.plot, "plot", "", "write a plot to this file (.svg or .png)")
	fs.Float64Var(&p.maxLoad, "max-load", 0, "before starting each fleet, wait until the host's 1-minute load (/proc/loadavg) is below this (0: don't wait)")
	fs.DurationVar(&p.maxLoadWait, "max-load-wait", 10*time.Minute, "longest wait for --max-load; the run then goes ahead and says so")
}

func (p *policyFlags) validate() error {
	switch {
	case p.schedulers < 1:
		return fmt.Errorf("--schedulers must be at least 1")
	case p.nodes < 1:
		return fmt.Errorf("--nodes must be at least 1")
	case p.slots < 1:
		return fmt.Errorf("--slots must be at least 1")
	case p.tasks < 1:
		return fmt.Errorf("--tasks must be at least 1")
	case p.taskDuration <= 0:
		return fmt.Errorf("--task-duration must be positive (the shares are measured in slot-time)")
	}
	if p.plot != "" {
		if err := plot.CheckPath(p.plot); err != nil {
			return fmt.Errorf("--%w", err) // "--plot FILE: want ..."
		}
	}
	return nil
}

// common turns the flags into the experiments' shared settings; progress
// lines go to w. The fleet logs through a LogWatch, which counts what it
// says during each measurement and mutes its teardown.
func (p *policyFlags) common(w io.Writer) (live.Common, error) {
	base, err := newLogger() // validates --log-level
	if err != nil {
		return live.Common{}, err
	}
	var out io.Writer = os.Stderr
	if term.IsTerminal(int(os.Stderr.Fd())) {
		out = zerolog.ConsoleWriter{Out: os.Stderr, TimeFormat: time.TimeOnly}
	}
	watch := live.NewLogWatch(out)
	log := zerolog.New(watch).Level(base.GetLevel()).With().Timestamp().Logger()
	return live.Common{
		Fleet: live.FleetConfig{
			Schedulers: p.schedulers, NodeMonitors: p.nodes, Slots: p.slots, ProbeRatio: p.probeRatio,
			SingleHost: p.singleHost, Seed: p.seed, Log: log, Watch: watch,
		},
		TasksPerJob: p.tasks, TaskDuration: p.taskDuration, Seed: p.seed,
		Progress: func(pr live.Progress) { fmt.Fprintln(w, " ", pr) },
		Say:      func(s string) { fmt.Fprintln(w, s) },
		MaxLoad:  p.maxLoad, MaxLoadWait: p.maxLoadWait,
	}, nil
}

// report is what every scenario prints, encodes and plots.
type report interface {
	WriteTable(io.Writer) error
	Chart() *plot.Chart
}

func (p *policyFlags) finish(cmd *cobra.Command, r report) error {
	out := cmd.OutOrStdout()
	if err := r.WriteTable(out); err != nil {
		return err
	}
	if p.plot != "" {
		if err := r.Chart().Save(p.plot); err != nil {
			return err
		}
		fmt.Fprintf(cmd.ErrOrStderr(), "plot written to %s\n", p.plot)
	}
	if p.asJSON {
		b, err := json.Marshal(r)
		if err != nil {
			return fmt.Errorf("encode result: %w", err)
		}
		fmt.Fprintln(out, string(b))
	}
	return nil
}

// policyContext quietens the fleet's logs unless asked and stops on
// SIGINT/SIGTERM.
func policyContext(cmd *cobra.Command) (context.Context, context.CancelFunc) {
	if !cmd.Flags().Changed("log-level") {
		logLevel = "warn"
	}
	ctx := cmd.Context()
	if ctx == nil {
		ctx = context.Background()
	}
	return signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
}

func newBenchFairnessCmd() *cobra.Command {
	var pf policyFlags
	var interval, bin time.Duration
	var weights string
	var user0 float64
	var user1 []float64
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
			if err := pf.validate(); err != nil {
				return err
			}
			w, err := policy.ParseWeights(weights)
			if err != nil {
				return fmt.Errorf("--weights: %w", err)
			}
			if err := policy.CheckLoads("--user1-loads", user1); err != nil {
				return err
			}
			if err := policy.CheckLoads("--user0-load", []float64{user0}); err != nil {
				return err
			}
			if interval <= 0 || bin <= 0 {
				return fmt.Errorf("--interval and --bin must be positive")
			}
			ctx, cancel := policyContext(cmd)
			defer cancel()
			c, err := pf.common(cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "fairness: %d node monitors x %d slots, weights %s, user1 loads %v per %v\n",
				pf.nodes, pf.slots, weights, user1, interval)
			r, err := live.Fairness(ctx, live.FairnessOptions{Common: c, Interval: interval, Bin: bin, Weights: w,
				User0Load: user0, User1Loads: user1})
			if err != nil {
				return err
			}
			return pf.finish(cmd, r)
		},
	}
	pf.register(cmd.Flags(), 10)
	fs := cmd.Flags()
	fs.DurationVar(&interval, "interval", 10*time.Second, "length of each step of user1's demand")
	fs.DurationVar(&bin, "bin", time.Second, "share measurement bin")
	fs.StringVar(&weights, "weights", "1:1", "fair-share weights user0:user1")
	fs.Float64Var(&user0, "user0-load", 1, "user0's offered load, as a fraction of the fleet's slots")
	fs.Float64SliceVar(&user1, "user1-loads", []float64{0, 0.25, 0.5, 0.25, 0}, "user1's offered load in each interval")
	return cmd
}

func newBenchPriorityCmd() *cobra.Command {
	var pf policyFlags
	var hp float64
	var lps []float64
	var duration, drain, warmup time.Duration
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
			if err := pf.validate(); err != nil {
				return err
			}
			if err := policy.CheckLoads("--lp-loads", lps); err != nil {
				return err
			}
			if !(hp > 0) {
				return fmt.Errorf("--hp-load must be positive")
			}
			if duration <= 0 || drain < 0 || warmup < 0 || warmup >= duration {
				return fmt.Errorf("--duration must be positive, --drain and --warmup not negative, and --warmup shorter than --duration")
			}
			ctx, cancel := policyContext(cmd)
			defer cancel()
			c, err := pf.common(cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			r, err := live.Priority(ctx, live.PriorityOptions{Common: c, HPLoad: hp, LPLoads: lps,
				Duration: duration, Drain: drain, Warmup: warmup})
			if err != nil {
				return err
			}
			return pf.finish(cmd, r)
		},
	}
	pf.register(cmd.Flags(), 10)
	fs := cmd.Flags()
	fs.Float64Var(&hp, "hp-load", 0.25, "high-priority user's offered load, as a fraction of the fleet's slots")
	fs.Float64SliceVar(&lps, "lp-loads", []float64{0, 0.25, 0.5, 0.75, 1.75}, "low-priority loads, one fleet run each")
	fs.DurationVar(&duration, "duration", 15*time.Second, "how long jobs arrive in each run")
	fs.DurationVar(&drain, "drain", 5*time.Second, "longest wait for unfinished jobs after arrivals stop; what is left is reported as still queued")
	fs.DurationVar(&warmup, "warmup", time.Second, "jobs submitted this early in each run are not measured")
	return cmd
}

func newBenchConstraintsCmd() *cobra.Command {
	var pf policyFlags
	var attr, queueName string
	var frac, cLoad, fLoad float64
	var duration, drain, warmup time.Duration
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
			if err := pf.validate(); err != nil {
				return err
			}
			key, val, ok := cutAttr(attr)
			if !ok {
				return fmt.Errorf("--attr %q: want key=value", attr)
			}
			if !(frac > 0 && frac <= 1) {
				return fmt.Errorf("--attr-fraction must be in (0, 1]")
			}
			if err := policy.CheckLoads("--constrained-load/--free-load", []float64{cLoad, fLoad}); err != nil {
				return err
			}
			if duration <= 0 || drain < 0 || warmup < 0 || warmup >= duration {
				return fmt.Errorf("--duration must be positive, --drain and --warmup not negative, and --warmup shorter than --duration")
			}
			ctx, cancel := policyContext(cmd)
			defer cancel()
			c, err := pf.common(cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			r, err := live.Constraints(ctx, live.ConstraintsOptions{Common: c, Queue: queueName, AttrFraction: frac,
				AttrKey: key, AttrValue: val, ConstrainedLoad: cLoad, FreeLoad: fLoad,
				Duration: duration, Drain: drain, Warmup: warmup})
			if err != nil {
				return err
			}
			return pf.finish(cmd, r)
		},
	}
	pf.register(cmd.Flags(), 20)
	fs := cmd.Flags()
	fs.StringVar(&attr, "attr", "gpu=yes", "node attribute the constrained jobs require (key=value)")
	fs.Float64Var(&frac, "attr-fraction", 0.2, "fraction of node monitors that have the attribute (at least one)")
	fs.Float64Var(&cLoad, "constrained-load", 0.5, "constrained jobs' offered load, as a fraction of the attribute nodes' slots")
	fs.Float64Var(&fLoad, "free-load", 0.5, "unconstrained jobs' offered load, as a fraction of all slots")
	fs.StringVar(&queueName, "queue", "fifo", "node monitors' queue discipline")
	fs.DurationVar(&duration, "duration", 30*time.Second, "how long jobs arrive")
	fs.DurationVar(&drain, "drain", 10*time.Second, "longest wait for unfinished jobs after arrivals stop")
	fs.DurationVar(&warmup, "warmup", time.Second, "jobs submitted this early are not measured")
	return cmd
}

// cutAttr splits "key=value"; both must be non-empty.
func cutAttr(s string) (key, val string, ok bool) {
	key, val, ok = strings.Cut(s, "=")
	return key, val, ok && key != "" && val != ""
}
