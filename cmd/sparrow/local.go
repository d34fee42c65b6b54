package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/sparrowfleet/sparrow/bench/fleet"
)

func init() { rootCmd.AddCommand(newLocalCmd()) }

// fleetFlags shape an in-process fleet and its workload; `local` and
// `bench fleet` share them.
type fleetFlags struct {
	fleet.RunConfig
	asJSON bool
}

func (f *fleetFlags) register(fs *pflag.FlagSet) {
	fs.IntVar(&f.Schedulers, "schedulers", 2, "schedulers in the fleet")
	fs.IntVar(&f.NodeMonitors, "nodes", 10, "node monitors in the fleet")
	fs.IntVar(&f.Slots, "slots", 4, "slots per node monitor")
	fs.IntVar(&f.Tasks, "tasks", 10, "tasks per job")
	fs.DurationVar(&f.TaskDuration, "task-duration", 100*time.Millisecond, "how long each sleep task runs (0: no-op tasks; then set --jobs-per-sec)")
	fs.Float64Var(&f.Load, "load", 0.8, "target fraction of slots busy; sets the Poisson job arrival rate")
	fs.Float64Var(&f.JobsPerSec, "jobs-per-sec", 0, "job arrival rate, overriding the one derived from --load")
	fs.DurationVar(&f.Duration, "duration", 20*time.Second, "how long jobs keep arriving")
	fs.DurationVar(&f.Drain, "drain", 30*time.Second, "longest wait for in-flight jobs after arrivals stop")
	fs.Float64Var(&f.ProbeRatio, "probe-ratio", 2, "probe ratio d")
	fs.StringVar(&f.Queue, "queue", "fifo", "node monitors' reservation queue discipline")
	fs.BoolVar(&f.NoCancel, "no-cancel", false, "do not cancel leftover reservations")
	fs.BoolVar(&f.SingleHost, "single-host", false, "put every member on 127.0.0.1 instead of its own 127.0.x.y address")
	fs.Uint64Var(&f.Seed, "seed", 1, "seed for arrivals and placement")
	fs.BoolVar(&f.asJSON, "json", false, "print the summary as one JSON object on the last line")
	fs.StringVar(&f.CPUProfile, "cpuprofile", "", "write a CPU profile of the run (fleet and driver) to this file")
	fs.StringVar(&f.GossipProfile, "gossip-profile", "local", "members' gossip timing: local (fast convergence and failure detection), lan (lighter, but slower to converge) or wan")
}

// config is the fleet's configuration, logging as --log-level says.
func (f *fleetFlags) config() (fleet.RunConfig, error) {
	log, err := newLogger()
	c := f.RunConfig
	c.Log = log
	return c, err
}

func newLocalCmd() *cobra.Command {
	var ff fleetFlags
	cmd := &cobra.Command{
		Use:   "local",
		Short: "Run an embedded fleet on loopback and drive a synthetic workload through it",
		Long: `Start a whole fleet in this process — schedulers, node monitors and sleep
executors, over real Thrift and real gossip, each on its own 127.0.x.y
address — drive Poisson arrivals of jobs through it, and print a summary:
jobs and tasks completed, job response time next to the ideal, scheduling
delay (submit to launch) and throughput.

While it runs, every member serves its operator endpoints, and the
command prints the dashboard's address (open it in a browser) and a
gossip address that sparrow status --join and sparrow ui --join accept.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !cmd.Flags().Changed("log-level") {
				logLevel = "warn"
			}
			if ff.TaskDuration == 0 && ff.JobsPerSec <= 0 {
				return fmt.Errorf("no-op tasks (--task-duration 0) need --jobs-per-sec")
			}
			c, err := ff.config()
			if err != nil {
				return err
			}
			res, err := fleet.RunWorkload(cmd.Context(), c, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			return fleet.WriteResult(cmd.OutOrStdout(), res, ff.asJSON)
		},
	}
	ff.register(cmd.Flags())
	cmd.Flags().BoolVar(&ff.HTTP, "http", true, "serve every member's /status, /readyz, /metrics and the fleet dashboard (/ui/) on its own address, and print the dashboard's address and the gossip address to join")
	return cmd
}
