package main

import (
	"github.com/spf13/cobra"

	"github.com/sparrowfleet/sparrow/bench/scale"
)

func init() { benchCmd.AddCommand(newBenchScaleCmd()) }

func newBenchScaleCmd() *cobra.Command {
	var o scale.Options
	cmd := &cobra.Command{
		Use:   "scale",
		Short: "Sweep fleet size: formation, failure detection, gossip and CPU per idle member, operator views",
		Long: `For each node monitor count in --nodes, start a fresh fleet in this
process — --schedulers schedulers and the node monitors, each member on its
own 127.0.x.y address with real memberlist gossip and real Thrift, and one
sleep executor per node monitor — and measure:

  formation      from the last member's start until every scheduler sees
                 every node monitor
  idle cost      over --idle with no work: gossip bytes and packets sent per
                 member per second (memberlist's own counters) and the
                 process's CPU time per member per second (getrusage)
  drive          --jobs-per-sec jobs of --tasks tasks for --drive: scheduling
                 delay p50/p99 and CPU per task (the process's CPU less the
                 idle rate, every role together)
  operator views one sparrow status --json (observer join, sync, every
                 member's /status) and one GET of the dashboard page
  kill           crash one node monitor; how long until no scheduler's view
                 offers it any more

Prints a row per size (JSON with --json); results.json and plots go to --out.
Progress lines go to stderr.

Examples:
  sparrow bench scale --nodes 20,50 --idle 5s --drive 5s
  sparrow bench scale --nodes 100 --profile --out bin/scale-100`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.Validate(); err != nil {
				return err
			}
			ctx, cancel := benchContext(cmd, true)
			defer cancel()
			log, err := newLogger()
			if err != nil {
				return err
			}
			o.Log = log
			return o.Run(ctx, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	o.AddFlags(cmd.Flags())
	return cmd
}
