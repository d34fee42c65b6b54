package main

import (
	"github.com/spf13/cobra"

	"github.com/sparrowfleet/sparrow/bench/procs"
)

func init() { benchCmd.AddCommand(newBenchProcsCmd()) }

func newBenchProcsCmd() *cobra.Command {
	var o procs.Options
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
idle cost (gossip, timers), peak RSS and the Thrift calls served and made
per task, by method (from the daemons' /metrics; an executor's are read off
its node monitor's, its only Thrift peer); and the drive's throughput, job
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
			if err := o.Validate(); err != nil {
				return err
			}
			if err := thisBinary(&o.Binary); err != nil {
				return err
			}
			ctx, cancel := benchContext(cmd, false)
			defer cancel()
			return o.Run(ctx, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	o.AddFlags(cmd.Flags())
	return cmd
}
