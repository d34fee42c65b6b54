package main

import (
	"fmt"

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
	f.RunConfig.RegisterFlags(fs)
	fs.BoolVar(&f.asJSON, "json", false, "print the summary as one JSON object on the last line")
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
