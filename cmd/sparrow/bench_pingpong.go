package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/sparrowfleet/sparrow/bench/pingpong"
)

func init() { benchCmd.AddCommand(newBenchPingPongCmd()) }

func newBenchPingPongCmd() *cobra.Command {
	var o pingpong.Options
	cmd := &cobra.Command{
		Use:   "pingpong",
		Short: "CPU time per Thrift call on each side, two processes on loopback: the reference for bench procs",
		Long: `Measure the floor under the fleet's cost per task: one getTask call
(answered with an empty list) between this process and a server child
process on loopback, framed binary Thrift, on one connection. Two stacks:
"bare" is the thrift library alone (TSimpleServer, TSocket, framed
transport, binary protocol); "rpc" is the fleet's own internal/rpc server
and client pool with the daemons' limits.

Each runs flat out (rate 0: calls back to back) and at each paced rate in
--rates, for --duration per point. Reports, per point, the CPU time (user +
system) per call of the client (getrusage) and of the server (/proc), and
the round-trip latency. Paced calls find both processes parked, as the
fleet's calls do, so the paced figures are the ones to set beside
"sparrow bench procs". Linux only.

Examples:
  sparrow bench pingpong
  sparrow bench pingpong --modes bare --rates 0,1000 --duration 10s --json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, cancel := benchContext(cmd, false)
			defer cancel()
			if o.Serve != "" {
				m, err := pingpong.ParseMode(o.Serve)
				if err != nil {
					return err
				}
				return pingpong.Serve(ctx, m, o.Listen, func(a string) {
					fmt.Fprintf(cmd.OutOrStdout(), "%s%s\n", pingpong.ReadyPrefix, a)
				})
			}
			if err := o.Validate(); err != nil {
				return err
			}
			if err := thisBinary(&o.Binary); err != nil {
				return err
			}
			stderr := cmd.ErrOrStderr()
			o.Say = func(s string) { fmt.Fprintf(stderr, "bench pingpong: %s\n", s) }
			return o.Run(ctx, cmd.OutOrStdout())
		},
	}
	o.AddFlags(cmd.Flags())
	return cmd
}
