package main

import (
	"fmt"
	"os"
	"os/exec"

	"github.com/spf13/cobra"

	"github.com/sparrowfleet/sparrow/bench/scale"
)

func init() { benchCmd.AddCommand(newBenchScaleCmd(), newBenchScaleChildCmd()) }

func newBenchScaleCmd() *cobra.Command {
	var o scale.Options
	cmd := &cobra.Command{
		Use:   "scale",
		Short: "Sweep fleet size: formation, failure detection, gossip and CPU per idle member, operator views",
		Long: `For each node monitor count in --nodes, start a fresh fleet — --schedulers
schedulers in this process and the node monitors, each member on its own
127.0.x.y address with real memberlist gossip and real Thrift, and one
sleep executor per node monitor and app — and measure:

  formation      from the last member's start until every scheduler sees
                 every node monitor
  idle cost      over --idle with no work: gossip bytes and packets sent per
                 member per second (memberlist's own counters) and the
                 CPU time of every process per member per second
  drive          --jobs-per-sec jobs of --tasks tasks for --drive: scheduling
                 delay p50/p99 and CPU per task (the process's CPU less the
                 idle rate, every role together)
  operator views one sparrow status --json (observer join, sync, every
                 member's /status) and one GET of the dashboard page
  kill           crash one node monitor; how long until no scheduler's view
                 offers it any more

The node monitors run in this process (--procs 1) or in --procs child
processes of this binary, each hosting a contiguous slice on its own
addresses (default: enough that none holds more than 200, as one process's
file descriptors limit it to about 325); children die with this process.

Prints a row per size (JSON with --json); results.json and plots go to --out.
Progress lines go to stderr.

Examples:
  sparrow bench scale --nodes 20,50 --idle 5s --drive 5s
  sparrow bench scale --nodes 100 --profile --out bin/scale-100
  sparrow bench scale --nodes 1000 --procs 5 --settle 30s --idle 20s --drive 5s`,
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
			o.ChildCommand, err = scaleChildCommand()
			if err != nil {
				return err
			}
			return o.Run(ctx, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	o.AddFlags(cmd.Flags())
	return cmd
}

// scaleChildCommand runs this binary's hidden scale-child command at this
// command's log level.
func scaleChildCommand() (func() *exec.Cmd, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("find this binary for child processes: %w", err)
	}
	level := logLevel
	return func() *exec.Cmd { return exec.Command(exe, "bench", "scale-child", "--log-level", level) }, nil
}

// newBenchScaleChildCmd is the child process of `sparrow bench scale
// --procs N`: it hosts a slice of node monitors as its parent's commands
// on stdin say, answering on stdout, until its stdin ends.
func newBenchScaleChildCmd() *cobra.Command {
	return &cobra.Command{
		Use:    "scale-child",
		Short:  "Host a slice of bench scale's node monitors for a parent bench scale",
		Hidden: true,
		Args:   noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, cancel := benchContext(cmd, true)
			defer cancel()
			log, err := newLogger()
			if err != nil {
				return err
			}
			return scale.ServeChild(ctx, os.Stdin, os.Stdout, log)
		},
	}
}
