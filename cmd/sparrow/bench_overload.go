package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/sparrowfleet/sparrow/bench/overload"
)

func init() { benchCmd.AddCommand(newBenchOverloadCmd()) }

func newBenchOverloadCmd() *cobra.Command {
	var o overload.Options
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
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.Validate(); err != nil {
				return err
			}
			if err := thisBinary(&o.Binary); err != nil {
				return err
			}
			stderr := cmd.ErrOrStderr()
			o.Say = func(s string) { fmt.Fprintf(stderr, "bench overload %s\n", s) }
			ctx, cancel := benchContext(cmd, false)
			defer cancel()
			return o.Run(ctx, cmd.OutOrStdout())
		},
	}
	o.AddFlags(cmd.Flags())
	return cmd
}
