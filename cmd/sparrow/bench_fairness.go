package main

import (
	"os"
	"strings"
	"time"

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
			o.Say = lines(cmd.ErrOrStderr())
			o.Command = "sparrow " + strings.Join(os.Args[1:], " ")
			return o.RunAll(ctx, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	fs := cmd.Flags()
	fs.IntVar(&o.NodesPerType, "nodes-per-type", 4, "node monitors of each of the 4 machine types (the paper: 5 x 8 cores)")
	fs.IntVar(&o.Slots, "slots", 4, "slots per node monitor")
	fs.DurationVar(&o.TaskDuration, "task-duration", 200*time.Millisecond, "how long each sleep task runs")
	fs.IntVar(&o.TasksPerJob, "tasks", 8, "tasks per job")
	fs.Float64Var(&o.Backlog, "backlog", 4, "unfinished tasks each live user keeps, as a multiple of the slots it may use")
	fs.Float64Var(&o.Scale, "scale", 0.2, "run seconds per paper second (0.2: the paper's 360 s take 72 s per setup)")
	fs.StringVar(&o.Setups, "setups", "fair,choosy,cmmf-weights", "comma-separated setups to run: fair, choosy, cmmf-weights")
	fs.DurationVar(&o.Period, "period", time.Second, "coordinator period (and node monitors' report interval)")
	fs.DurationVar(&o.Bin, "bin", 500*time.Millisecond, "share measurement bin")
	fs.DurationVar(&o.Settle, "settle", 2*time.Second, "bins this soon after an arrival or departure are left out of the converged deviation")
	fs.Float64Var(&o.Tolerance, "tolerance", 0.05, "ramp-up threshold: |share - CMMF share| as a fraction of the cluster")
	fs.Uint64Var(&o.Seed, "seed", 1, "seed for the schedulers' placement")
	fs.DurationVar(&o.SteerAfter, "steer-after", time.Second, "the scheduler's --steer-after in the choosy and cmmf-weights setups (negative: off)")
	fs.StringVar(&o.GossipProfile, "gossip-profile", "lan", "members' gossip timing: lan, local or wan")
	fs.StringVar(&o.OutDir, "out-dir", ".", "directory for fairness-mesos.json and the fairness-mesos-<setup>.svg/.png plots")
	fs.Float64Var(&o.MaxLoad, "max-load", 0, "before each setup, wait until the host's 1-minute load (/proc/loadavg) is below this (0: don't wait)")
	fs.DurationVar(&o.MaxLoadWait, "max-load-wait", 5*time.Minute, "longest wait for --max-load; the run then goes ahead and says so")
	return cmd
}
