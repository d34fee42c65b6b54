package main

import (
	"github.com/spf13/cobra"

	"github.com/sparrowfleet/sparrow/internal/metrics"
	"github.com/sparrowfleet/sparrow/scheduler"
)

func init() { rootCmd.AddCommand(newSchedulerCmd()) }

func newSchedulerCmd() *cobra.Command {
	var (
		cfg         scheduler.DaemonConfig
		gossip      gossipFlags
		metricsAddr string
		rpcf        rpcFlags
		sec         securityFlags
	)
	cmd := &cobra.Command{
		Use:   "scheduler",
		Short: "Run a scheduler daemon (SchedulerService and GetTaskService)",
		Long: `Run a stateless Sparrow scheduler. Frontends submit jobs to its
SchedulerService; it batch-samples live node monitors from the gossip view,
places reservations on them, and hands out tasks by late binding through its
GetTaskService. Shuts down gracefully on SIGTERM, leaving the gossip cluster.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			log, err := newLogger()
			if err != nil {
				return err
			}
			cfg.Gossip, cfg.Join, cfg.GossipProfile = gossip.bind, gossip.seeds(), gossip.profile
			cfg.AdvertiseHost, cfg.Name, cfg.RPC, cfg.Log = gossip.advertise, gossip.name, rpcf.cfg, log
			if cfg.Keyring, err = sec.apply(log, &cfg.RPC); err != nil {
				return err
			}
			d, err := scheduler.StartDaemon(cfg)
			if err != nil {
				return err
			}
			stopMetrics, err := serveMetrics(metricsAddr, log, metrics.SchedulerCollector(d.Scheduler), metrics.RPCCollector(d.RPCStats))
			if err != nil {
				d.Close()
				return err
			}
			defer stopMetrics()
			return runUntilSignal(log, d.Close)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&cfg.Listen, "listen", scheduler.DefaultListen, "SchedulerService address (frontends and node monitors call it)")
	fs.StringVar(&cfg.GetTaskListen, "gettask-listen", scheduler.DefaultGetTaskListen, "GetTaskService address (node monitors call getTask here)")
	fs.Float64Var(&cfg.Scheduler.ProbeRatio, "probe-ratio", scheduler.DefaultProbeRatio, "default probe ratio d: reservations per task (a request may override it)")
	fs.Float64Var(&cfg.Scheduler.ConstrainedProbeRatio, "constrained-probe-ratio", 0, "default probe ratio for jobs with constraints or placement preferences (0: --probe-ratio)")
	fs.DurationVar(&cfg.Scheduler.ReservationTimeout, "reservation-timeout", scheduler.DefaultReservationTimeout, "place extra reservations for a job whose reservations go unanswered this long (negative: never)")
	fs.BoolVar(&cfg.Scheduler.NoCancel, "no-cancel", false, "do not cancel leftover reservations once all of a job's tasks have launched")
	fs.Uint64Var(&cfg.Scheduler.Seed, "seed", 0, "seed for placement randomness (0: random)")
	fs.StringVar(&metricsAddr, "metrics-listen", "", "serve Prometheus metrics at http://ADDR/metrics (off when empty)")
	gossip.register(fs)
	rpcf.register(fs)
	sec.register(fs)
	return cmd
}
