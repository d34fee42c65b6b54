package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/sparrowfleet/sparrow/bench/pingpong"
	"github.com/sparrowfleet/sparrow/internal/report"
)

func init() { benchCmd.AddCommand(newBenchPingPongCmd()) }

func newBenchPingPongCmd() *cobra.Command {
	var (
		cfg                 pingpong.Config
		modes, rates, serve string
		asJSON              bool
	)
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
		RunE: func(cmd *cobra.Command, _ []string) (err error) {
			ctx, cancel := benchContext(cmd, false)
			defer cancel()
			if serve != "" {
				m, err := pingpong.ParseMode(serve)
				if err != nil {
					return err
				}
				return pingpong.Serve(ctx, m, cfg.Listen, func(a string) {
					fmt.Fprintf(cmd.OutOrStdout(), "%s%s\n", pingpong.ReadyPrefix, a)
				})
			}
			if cfg.Modes, err = pingpong.ParseModes(modes); err != nil {
				return err
			}
			if cfg.Rates, err = pingpong.ParseRates(rates); err != nil {
				return err
			}
			if err := thisBinary(&cfg.Binary); err != nil {
				return err
			}
			stderr := cmd.ErrOrStderr()
			cfg.Say = func(s string) { fmt.Fprintf(stderr, "bench pingpong: %s\n", s) }
			pts, err := pingpong.Run(ctx, cfg)
			if err != nil {
				return err
			}
			return report.Print(cmd.OutOrStdout(), pts, report.If(asJSON, report.JSONLine))
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&cfg.Binary, "binary", "", "sparrow binary started as the server (default: this one)")
	fs.StringVar(&modes, "modes", "bare,rpc", `comma-separated stacks: "bare" (thrift library alone), "rpc" (internal/rpc)`)
	fs.StringVar(&rates, "rates", "0,100,1000,5000", "comma-separated offered calls per second; 0 is flat out")
	fs.DurationVar(&cfg.Duration, "duration", 5*time.Second, "how long each point runs (the server's CPU time is read in 10 ms ticks)")
	fs.StringVar(&cfg.Listen, "listen", "127.0.0.1:0", "the server's address")
	fs.StringVar(&cfg.Dir, "out", "", "if set, also write pingpong.json into this directory")
	fs.BoolVar(&asJSON, "json", false, "print the results as JSON instead of a table")
	fs.StringVar(&serve, "serve", "", "internal: be the server of MODE (started by this command itself)")
	_ = fs.MarkHidden("serve")
	return cmd
}
