package main

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/sparrowfleet/sparrow/bench/fleet"
)

func init() { benchCmd.AddCommand(newBenchFleetCmd()) }

func newBenchFleetCmd() *cobra.Command {
	var (
		ff     fleetFlags
		loads  string
		rates  string
		settle time.Duration
	)
	cmd := &cobra.Command{
		Use:   "fleet",
		Short: "Sweep load or arrival rate over one in-process fleet: throughput, scheduling delay, response time",
		Long: `Start one fleet in this process (real Thrift and gossip on loopback, each
member on its own 127.0.x.y address) and drive a Poisson workload through it
at each load in --loads (or each job rate in --rates, for no-op tasks), one
point after another. Prints a row per point: completed tasks/s, scheduling
delay (submit to launch) p50/p99, and job response time p50/p95/p99 next to
the ideal (the task duration). A point whose jobs are refused or left
incomplete is beyond what the fleet sustains.

Examples:
  sparrow bench fleet --schedulers 1 --nodes 50 --task-duration 0 --rates 100,300,600,1000
  sparrow bench fleet --nodes 100 --slots 4 --loads 0.25,0.8`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !cmd.Flags().Changed("log-level") {
				logLevel = "warn"
			}
			points, err := fleet.SweepPoints(loads, rates, ff.RunConfig)
			if err != nil {
				return err
			}
			c, err := ff.config()
			if err != nil {
				return err
			}
			return fleet.Sweep(cmd.Context(), c, points, settle, ff.asJSON, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	ff.register(cmd.Flags())
	cmd.Flags().Lookup("duration").DefValue = "10s"
	ff.Duration = 10 * time.Second
	cmd.Flags().StringVar(&loads, "loads", "0.25,0.5,0.8", "comma-separated loads to sweep (ignored with --rates)")
	cmd.Flags().StringVar(&rates, "rates", "", "comma-separated job arrival rates (jobs/s) to sweep instead of loads; needed for no-op tasks")
	cmd.Flags().DurationVar(&settle, "settle", time.Second, "pause between points so the previous one's stragglers drain")
	return cmd
}
