package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/sparrowfleet/sparrow/bench/pingpong"
)

func init() { benchCmd.AddCommand(newBenchPingPongCmd()) }

func newBenchPingPongCmd() *cobra.Command {
	var (
		cfg    pingpong.Config
		modes  string
		rates  string
		serve  string
		out    string
		asJSON bool
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
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, cancel := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
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
			for _, s := range strings.Split(modes, ",") {
				m, err := pingpong.ParseMode(strings.TrimSpace(s))
				if err != nil {
					return err
				}
				cfg.Modes = append(cfg.Modes, m)
			}
			for _, f := range strings.Split(rates, ",") {
				v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
				if err != nil || v < 0 {
					return fmt.Errorf("--rates: %q is not a rate (calls/s, 0 for flat out)", f)
				}
				cfg.Rates = append(cfg.Rates, v)
			}
			var err error
			if cfg.Binary == "" {
				if cfg.Binary, err = os.Executable(); err != nil {
					return fmt.Errorf("find this binary (set --binary): %w", err)
				}
			}
			stderr := cmd.ErrOrStderr()
			cfg.Say = func(s string) { fmt.Fprintf(stderr, "bench pingpong: %s\n", s) }
			pts, err := pingpong.Run(ctx, cfg)
			if err != nil {
				return err
			}
			if out != "" {
				if err := writeJSONFile(filepath.Join(out, "pingpong.json"), pts); err != nil {
					return err
				}
			}
			if asJSON {
				return json.NewEncoder(cmd.OutOrStdout()).Encode(pts)
			}
			return pingpong.WriteTable(cmd.OutOrStdout(), pts)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&cfg.Binary, "binary", "", "sparrow binary started as the server (default: this one)")
	fs.StringVar(&modes, "modes", "bare,rpc", `comma-separated stacks: "bare" (thrift library alone), "rpc" (internal/rpc)`)
	fs.StringVar(&rates, "rates", "0,100,1000,5000", "comma-separated offered calls per second; 0 is flat out")
	fs.DurationVar(&cfg.Duration, "duration", 5*time.Second, "how long each point runs (the server's CPU time is read in 10 ms ticks)")
	fs.StringVar(&cfg.Listen, "listen", "127.0.0.1:0", "the server's address")
	fs.StringVar(&out, "out", "", "if set, also write pingpong.json into this directory")
	fs.BoolVar(&asJSON, "json", false, "print the results as JSON instead of a table")
	fs.StringVar(&serve, "serve", "", "internal: be the server of MODE (started by this command itself)")
	_ = fs.MarkHidden("serve")
	return cmd
}
