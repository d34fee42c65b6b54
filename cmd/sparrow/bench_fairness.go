package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/rs/zerolog"
	"github.com/spf13/cobra"

	"github.com/sparrowfleet/sparrow/bench/fairness"
	"github.com/sparrowfleet/sparrow/bench/policy/live"
)

// The Choosy paper's §7.3 Mesos scenario on a live fleet. (The name
// "fairness" is taken by the Sparrow paper's Figure 11 in bench_policy.go.)
func init() { benchCmd.AddCommand(newBenchChoosyCmd()) }

func newBenchChoosyCmd() *cobra.Command {
	var (
		cfg         fairness.Config
		setups      string
		outDir      string
		maxLoad     float64
		maxLoadWait time.Duration
	)
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
			var list []fairness.Setup
			for _, name := range strings.Split(setups, ",") {
				s, err := fairness.SetupByName(strings.TrimSpace(name))
				if err != nil {
					return fmt.Errorf("--setups: %w", err)
				}
				list = append(list, s)
			}
			if err := cfg.Validate(); err != nil {
				return err
			}
			if err := os.MkdirAll(outDir, 0o755); err != nil {
				return fmt.Errorf("--out-dir: %w", err)
			}
			ctx, cancel := policyContext(cmd)
			defer cancel()
			base, err := newLogger() // validates --log-level
			if err != nil {
				return err
			}
			stderr := cmd.ErrOrStderr()
			cfg.Logs = fairness.NewLogCounter(os.Stderr)
			cfg.Log = zerolog.New(cfg.Logs).Level(base.GetLevel()).With().Timestamp().Logger()
			cfg.Say = func(s string) { fmt.Fprintln(stderr, s) }
			fmt.Fprintf(stderr, "choosy §7.3: 4 types x %d node monitors x %d slots, %v tasks, scale %g (%.0f s per setup), setups %s\n",
				cfg.NodesPerType, cfg.Slots, cfg.TaskDuration, cfg.Scale, 360*cfg.Scale, setups)
			var rep fairness.Report
			for k, s := range list {
				waitForQuietHost(ctx, stderr, maxLoad, maxLoadWait)
				r, err := fairness.Run(ctx, cfg, []fairness.Setup{s})
				if err != nil {
					return err
				}
				if k == 0 {
					rep = r
				} else {
					rep.Setups = append(rep.Setups, r.Setups...)
				}
			}
			rep.Command = "sparrow " + strings.Join(os.Args[1:], " ")
			return rep.Write(outDir, cmd.OutOrStdout(), stderr)
		},
	}
	fs := cmd.Flags()
	fs.IntVar(&cfg.NodesPerType, "nodes-per-type", 4, "node monitors of each of the 4 machine types (the paper: 5 x 8 cores)")
	fs.IntVar(&cfg.Slots, "slots", 4, "slots per node monitor")
	fs.DurationVar(&cfg.TaskDuration, "task-duration", 200*time.Millisecond, "how long each sleep task runs")
	fs.IntVar(&cfg.TasksPerJob, "tasks", 8, "tasks per job")
	fs.Float64Var(&cfg.Backlog, "backlog", 4, "unfinished tasks each live user keeps, as a multiple of the slots it may use")
	fs.Float64Var(&cfg.Scale, "scale", 0.2, "run seconds per paper second (0.2: the paper's 360 s take 72 s per setup)")
	fs.StringVar(&setups, "setups", "fair,choosy,cmmf-weights", "comma-separated setups to run: fair, choosy, cmmf-weights")
	fs.DurationVar(&cfg.Period, "period", time.Second, "coordinator period (and node monitors' report interval)")
	fs.DurationVar(&cfg.Bin, "bin", 500*time.Millisecond, "share measurement bin")
	fs.DurationVar(&cfg.Settle, "settle", 2*time.Second, "bins this soon after an arrival or departure are left out of the converged deviation")
	fs.Float64Var(&cfg.Tolerance, "tolerance", 0.05, "ramp-up threshold: |share - CMMF share| as a fraction of the cluster")
	fs.Uint64Var(&cfg.Seed, "seed", 1, "seed for the schedulers' placement")
	fs.DurationVar(&cfg.SteerAfter, "steer-after", time.Second, "the scheduler's --steer-after in the choosy and cmmf-weights setups (negative: off)")
	fs.StringVar(&cfg.GossipProfile, "gossip-profile", "lan", "members' gossip timing: lan, local or wan")
	fs.StringVar(&outDir, "out-dir", ".", "directory for fairness-mesos.json and the fairness-mesos-<setup>.svg/.png plots")
	fs.Float64Var(&maxLoad, "max-load", 0, "before each setup, wait until the host's 1-minute load (/proc/loadavg) is below this (0: don't wait)")
	fs.DurationVar(&maxLoadWait, "max-load-wait", 5*time.Minute, "longest wait for --max-load; the run then goes ahead and says so")
	return cmd
}

// waitForQuietHost waits, up to maxWait, for the host's load average to
// fall below maxLoad before a live setup runs, saying so on stderr; past
// maxWait it runs anyway.
func waitForQuietHost(ctx context.Context, stderr io.Writer, maxLoad float64, maxWait time.Duration) {
	waited, gaveUp := live.WaitForLoad(ctx, maxLoad, maxWait, 10*time.Second, func(l float64, d time.Duration) {
		fmt.Fprintf(stderr, "waiting for load %.1f < %.1f (%v)\n", l, maxLoad, d.Round(time.Second))
	})
	if gaveUp {
		fmt.Fprintf(stderr, "load still above %.1f after %v; running anyway\n", maxLoad, waited.Round(time.Second))
	}
}
