package main

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/sparrowfleet/sparrow/bench/procs"
	"github.com/sparrowfleet/sparrow/internal/listflag"
	"github.com/sparrowfleet/sparrow/internal/report"
)

func init() { benchCmd.AddCommand(newBenchProcsCmd()) }

func newBenchProcsCmd() *cobra.Command {
	var (
		cfg    procs.Config
		rates  string
		out    string
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "procs",
		Short: "CPU time per task of each role, with every member a separate OS process on loopback",
		Long: `Start every member of a fleet as its own OS process of this binary on
loopback (--schedulers schedulers, --nodes node monitors of --slots slots,
an executor beside each, each member on its own 127.x.y.z address), wait
until it has formed, measure it idle for --idle, then drive --jobs jobs of
--tasks tasks through it with "sparrow drive" at each rate in --rates (a
fresh fleet per rate; one driver per scheduler, each with its share). Reports, per role, the CPU time per completed task
(user + system of all its processes, from /proc), the part of it that is
idle cost (gossip, timers) and peak RSS; and the drive's throughput, job
response time and scheduling delay (submit to launch, from the executors'
reported launch times). Linux only.

CPU time per task is the fleet's cost metric: other load on the machine
barely moves it, unlike wall-clock rates. Every member's log is kept in
--out, with results.json and a plot of CPU per task against throughput.

Examples:
  sparrow bench procs
  sparrow bench procs --nodes 10 --slots 8 --jobs 3000 --tasks 4 --rates 50,200`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			rs, err := listflag.Positive("--rates", rates)
			if err != nil {
				return err
			}
			if err := thisBinary(&cfg.Binary); err != nil {
				return err
			}
			ctx, cancel := benchContext(cmd, false)
			defer cancel()
			results, err := procs.RunRates(ctx, cfg, rs, out, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			return report.Print(cmd.OutOrStdout(), results, report.If(asJSON, report.JSONLine))
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&cfg.Binary, "binary", "", "sparrow binary each member runs (default: this one)")
	fs.IntVar(&cfg.Schedulers, "schedulers", 1, "scheduler processes, each with its own driver that submits an equal share of the jobs and of the rate to it (the other schedulers are its failover list); latency percentiles are over all drivers' samples")
	fs.IntVar(&cfg.NodeMonitors, "nodes", 10, "node monitor processes, each with an executor process beside it")
	fs.IntVar(&cfg.Slots, "slots", 8, "slots per node monitor")
	fs.IntVar(&cfg.Jobs, "jobs", 3000, "jobs to drive at each rate")
	fs.IntVar(&cfg.Tasks, "tasks", 4, "tasks per job")
	fs.StringVar(&rates, "rates", "200", "comma-separated job arrival rates (jobs/s), one fresh fleet each")
	fs.DurationVar(&cfg.TaskDuration, "task-duration", 0, "how long each task sleeps (0: no-op tasks)")
	fs.StringVar(&cfg.GossipProfile, "gossip-profile", "lan", "every member's gossip timing: lan, local or wan")
	fs.StringVar(&cfg.Net, "net", "127.60", "first two octets of the members' loopback addresses (role r's member i is NET.r.(i+1))")
	fs.DurationVar(&cfg.Idle, "idle", 5*time.Second, "how long to measure the formed fleet with no work, for each role's idle CPU rate")
	fs.DurationVar(&cfg.Deadline, "deadline", 5*time.Minute, "give up on a drive that has not completed after this long")
	fs.DurationVar(&cfg.FrontendTimeout, "frontend-timeout", time.Second, "the driver's scheduler failure-detection timeout (sparrow drive --timeout): above the fleet's 100 ms default so that a scheduler stalled by a busy machine is not failed over, which would add resubmissions to every role's cost")
	fs.DurationVar(&cfg.ReadyTimeout, "ready-timeout", time.Minute, "give up if the fleet has not formed after this long")
	fs.StringArrayVar(&cfg.SchedulerArgs, "scheduler-arg", nil, "extra flag for every scheduler (repeatable), e.g. --scheduler-arg=--offers")
	fs.BoolVar(&cfg.Pin, "pin", false, "run every scheduler on CPU 0 and the rest of the fleet (node monitors, executors, the driver) on CPU 1, to measure what one core of scheduler sustains (Linux, 2 CPUs or more)")
	fs.DurationVar(&cfg.Profile, "profile", 0, "if set, save a CPU profile this long of the first scheduler and node monitor, from the drive's start, into --out (go tool pprof FILE)")
	fs.StringVar(&out, "out", "bin/bench-procs", "directory for members' logs, results.json and the plot")
	fs.BoolVar(&asJSON, "json", false, "print the results as JSON instead of a table")
	return cmd
}
