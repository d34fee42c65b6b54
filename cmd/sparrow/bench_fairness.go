package main

import (
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/sparrowfleet/sparrow/bench/fairness"
)

// The Choosy paper's §7.3 Mesos scenario on a live fleet. (The name
// "fairness" is taken by the Sparrow paper's Figure 11 in bench_policy.go.)
func init() { benchCmd.AddCommand(newBenchChoosyCmd()) }

func newBenchChoosyCmd() *cobra.Command {
	var o fairness.Options
	cmd := &cobra.Command{
		Use:   "choosy",
		Short: "The Choosy paper's §7.3 Mesos scenario: four constrained frameworks' shares against CMMF, three setups",
		Long: `Reproduce the Choosy paper's §7.3 experiment (Ghodsi et al., EuroSys 2013,
Figure 14) on an in-process fleet (real Thrift and gossip on loopback):
four machine types (standard, high-memory, cluster with 10 Gbps, cluster-GPU)
of --nodes-per-type node monitors x --slots slots, and four backlogged
users with the paper's constraints as job placement constraints on node
attributes: hadoop anywhere, spark on mem=high, cuda on gpu=yes, mpi on
net=10g. They arrive and leave on the paper's timeline (hadoop from 0 s,
spark 30 s, cuda 65 s, mpi 100 s; cuda leaves at 200 s and mpi at 250 s,
times the paper leaves open; mpi again at 305 s; end 360 s), scaled by
--scale. Each live user keeps --backlog times the slots it may use in
unfinished sleep tasks.

Each --setups entry runs on a fresh fleet: "fair" (per-node fair queues,
no coordinator), "choosy" (choosy queues and a coordinator), "cmmf-weights"
(fair queues taking the coordinator's per-type CMMF weights). Shares of
the cluster come from the executors' task spans per --bin, and are
compared with the offline CMMF allocation (core/cmmf) of each phase: the
mean absolute deviation over bins at least --settle after every change,
and each ramp-up, the time until a bin's share is within --tolerance of
the new CMMF share (the paper: within 5 s). Writes fairness-mesos.json
and one plot per setup, fairness-mesos-<setup>.svg and .png, into
--out-dir, and prints the tables.`,
		Example: `  nice sparrow bench choosy --out-dir docs/img
  sparrow bench choosy --setups fair,choosy --scale 0.1 --nodes-per-type 2`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.Validate(); err != nil {
				return err
			}
			ctx, cancel := benchContext(cmd, true)
			defer cancel()
			var err error
			o.Logs = fairness.NewLogCounter(os.Stderr)
			if o.Log, err = fleetLog(o.Logs); err != nil {
				return err
			}
			o.Say = printLines(cmd.ErrOrStderr())
			o.Command = "sparrow " + strings.Join(os.Args[1:], " ")
			return o.RunAll(ctx, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	o.AddFlags(cmd.Flags())
	return cmd
}
