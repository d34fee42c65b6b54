package main

import (
	"context"
	"time"

	"github.com/spf13/cobra"

	"github.com/sparrowfleet/sparrow/bench/executor"
	"github.com/sparrowfleet/sparrow/client"
	"github.com/sparrowfleet/sparrow/internal/daemon"
	"github.com/sparrowfleet/sparrow/internal/flagconfig"
)

func init() { rootCmd.AddCommand(newExecutorCmd()) }

func newExecutorCmd() *cobra.Command {
	var (
		ef   executor.Config
		conf *flagconfig.Config
	)
	cmd := &cobra.Command{
		Use:   "executor",
		Short: "Run a sleep executor (BackendService) for one app beside a node monitor",
		Long: `Run an executor for one app: it serves BackendService, registers with its
node monitor (retrying until the node monitor answers, so start order does
not matter) and runs each launched task by sleeping for the duration in the
task's message ("200ms"; an empty message is a no-op). It reports the task
back to its frontend and finished to its node monitor.

With --log-launches it prints one JSON line per launchTask on stdout:
  {"launch":{"request":"...","task":"...","node":"...","app":"...","at":"..."}}
so that launches can be checked for exactly-once across every executor.

It re-registers if its node monitor restarts. On SIGTERM it waits up to
--drain for running tasks to finish, then cancels the rest (they are
reported failed, status 1002) and exits.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			log, err := newLogger()
			if err != nil {
				return err
			}
			conf.Report(log)
			ctx, cancel := daemon.SignalContext(context.Background())
			defer cancel()
			return executor.Run(ctx, ef, log, cmd.OutOrStdout())
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&ef.App, "app", "", "the app this executor runs tasks for (required)")
	fs.StringVar(&ef.NodeMonitor, "node-monitor", client.DefaultNodeMonitor, "NodeMonitorService host:port of the node monitor on this machine")
	fs.StringVar(&ef.Listen, "listen", "127.0.0.1:20101", "BackendService address (the node monitor calls launchTask here)")
	fs.StringVar(&ef.Advertise, "advertise-host", "127.0.0.1", "host given to the node monitor when --listen is a wildcard address")
	fs.StringVar(&ef.Node, "node", "", "node name written in launch logs (default: the host name)")
	fs.BoolVar(&ef.LogLaunches, "log-launches", false, "print one JSON line per launchTask on stdout")
	fs.BoolVar(&ef.ReportLaunchTime, "report-launch-time", false, "put each task's launch time in its OK message to the frontend, so sparrow drive reports scheduling delay (submit to launch); the hosts' clocks must agree")
	fs.DurationVar(&ef.RegisterTimeout, "register-timeout", 2*time.Minute, "give up if the node monitor does not accept the registration within this long")
	fs.DurationVar(&ef.Drain, "drain", 5*time.Second, "on SIGTERM, how long to let running tasks finish before cancelling them")
	fs.DurationVar(&ef.Watch, "watch", time.Second, "how often to check the node monitor, to re-register after it restarts (0 disables)")
	fs.StringVar(&ef.CPUProfile, "cpuprofile", "", "write a CPU profile (pprof format) of the executor's whole run to this file, finished at shutdown; {node} in the path becomes --node, so executors sharing $SPARROW_CPUPROFILE write one file each")
	conf = flagconfig.Attach(cmd)
	return cmd
}
