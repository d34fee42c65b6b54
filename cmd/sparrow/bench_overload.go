package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/sparrowfleet/sparrow/bench/overload"
	"github.com/sparrowfleet/sparrow/internal/listflag"
)

func init() { benchCmd.AddCommand(newBenchOverloadCmd()) }

func newBenchOverloadCmd() *cobra.Command {
	var (
		cfg       overload.Config
		multiples string
		asJSON    bool
	)
	cmd := &cobra.Command{
		Use:   "overload",
		Short: "Goodput, refusals and memory of a fleet of separate processes offered up to 1,000 times its capacity",
		Long: `The saturation benchmark. Start a fleet of separate OS processes
of this binary on loopback (--schedulers schedulers, --nodes node monitors
of --slots slots, a sleep executor beside each), whose capacity is
nodes x slots / --task-duration tasks per second, and offer it each
multiple of that capacity in --multiples for --duration with "sparrow
drive" (jobs of --tasks tasks), a fresh fleet per multiple. Node monitors
queue at most --max-queued reservations, so that an overload saturates the
fleet within seconds and schedulers hold, then refuse, submitJob calls.

Every --sample-every it reads each process's RSS and CPU time from /proc,
the node monitors' /status (tasks launched, running, queued) and the
schedulers' /status and /metrics (live node monitors seen, held calls,
saturation refusals, tasks accepted). Over the window from --settle to
--duration it reports, per multiple: goodput (tasks completed per second,
and against capacity), the driver's submit errors and the schedulers'
saturation refusals, task attempts per task, completed jobs' response
time p50/p99, each role's peak RSS and RSS growth over the window, CPU per
role, and any member that gossip declared dead (memberlist's "Marking X as
failed" in the members' logs, which needs --member-log-level info or
debug). Then it checks the benchmark's goals: goodput at least 95% of capacity
at every overload, at most 1.1 attempts per task, every role's RSS growth
under 10 MB over the window, no live member declared dead. Linux only.

--out gets a directory per multiple (every member's log, drive.log, and
point.json with the per-second samples), results.json and two plots,
overload-goodput and overload-rss (.svg and .png).

Examples:
  sparrow bench overload
  sparrow bench overload --multiples 2,1000 --duration 20s --settle 5s`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) (err error) {
			if cfg.Multiples, err = listflag.Positive("--multiples", multiples); err != nil {
				return err
			}
			if err := thisBinary(&cfg.Binary); err != nil {
				return err
			}
			stderr := cmd.ErrOrStderr()
			cfg.Say = func(s string) { fmt.Fprintf(stderr, "bench overload %s\n", s) }
			ctx, cancel := benchContext(cmd, false)
			defer cancel()
			return overload.RunAndReport(ctx, cfg, asJSON, cmd.OutOrStdout())
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&cfg.Binary, "binary", "", "sparrow binary each member and the driver run (default: this one)")
	fs.IntVar(&cfg.Schedulers, "schedulers", 1, "scheduler processes")
	fs.IntVar(&cfg.NodeMonitors, "nodes", 4, "node monitor processes, each with an executor process beside it")
	fs.IntVar(&cfg.Slots, "slots", 2, "slots per node monitor")
	fs.IntVar(&cfg.Tasks, "tasks", 10, "tasks per job")
	fs.DurationVar(&cfg.TaskDuration, "task-duration", 250*time.Millisecond, "how long each task sleeps; capacity is nodes x slots / this (the default, 32 tasks/s, keeps the driver light at 1000x: it allocates every job of a point up front, 192,000 at 1000x)")
	fs.StringVar(&multiples, "multiples", "0.5,1,2,10,1000", "comma-separated offered loads, as multiples of capacity, one fresh fleet each")
	fs.DurationVar(&cfg.Duration, "duration", time.Minute, "how long each multiple is offered")
	fs.DurationVar(&cfg.Settle, "settle", 10*time.Second, "start of the measured window, from the drive's start (goodput, RSS growth and CPU are measured from here to --duration)")
	fs.DurationVar(&cfg.Drain, "drain", 5*time.Second, "how long past --duration the driver may wait for accepted jobs to finish (their response times count)")
	fs.IntVar(&cfg.MaxQueued, "max-queued", 100, "every node monitor's --max-queued: reservations queued before it refuses more, so how soon an overload saturates the fleet")
	fs.StringArrayVar(&cfg.SchedulerArgs, "scheduler-arg", nil, "extra flag for every scheduler (repeatable), e.g. --scheduler-arg=--max-hold=5s")
	fs.StringArrayVar(&cfg.NodeMonitorArgs, "nodemonitor-arg", nil, "extra flag for every node monitor (repeatable)")
	fs.StringArrayVar(&cfg.DriverArgs, "driver-arg", nil, "extra flag for sparrow drive (repeatable), e.g. --driver-arg=--retry-budget=0.5")
	fs.DurationVar(&cfg.FrontendTimeout, "frontend-timeout", time.Second, "the driver's --timeout: its scheduler failure detection and how long a submit waits for a free connection to the scheduler before failing as busy (above the 100 ms default so that a scheduler slowed by a busy machine is not failed over)")
	fs.StringVar(&cfg.GossipProfile, "gossip-profile", "lan", "every member's gossip timing: lan, local or wan")
	fs.StringVar(&cfg.Net, "net", "127.62", "first two octets of the members' loopback addresses (role r's member i is NET.r.(i+1))")
	fs.StringVar(&cfg.LogLevel, "member-log-level", "info", "the daemons' --log-level; info or debug is needed to see memberlist declare a member dead")
	fs.BoolVar(&cfg.HeapProfiles, "heap-profiles", false, "serve Go's profiler on the daemons and save a heap profile of the first scheduler and node monitor at --settle and at --duration into each point's directory (go tool pprof -sample_index=inuse_space FILE)")
	fs.DurationVar(&cfg.SampleEvery, "sample-every", time.Second, "interval between samples of /proc and the members' endpoints")
	fs.DurationVar(&cfg.ReadyTimeout, "ready-timeout", time.Minute, "give up if a fleet has not formed after this long")
	fs.StringVar(&cfg.Dir, "out", "bin/bench-overload", "directory for members' logs, samples, results.json and the plots")
	fs.BoolVar(&asJSON, "json", false, "print the results (without the per-second samples) as JSON instead of tables")
	return cmd
}
