package main

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/sparrowfleet/sparrow/internal/daemon"
	"github.com/sparrowfleet/sparrow/internal/flagconfig"
	"github.com/sparrowfleet/sparrow/scheduler"
)

func init() { rootCmd.AddCommand(newSchedulerCmd()) }

func newSchedulerCmd() *cobra.Command {
	var (
		cfg    scheduler.DaemonConfig
		short  shortJobFlags
		gossip daemon.GossipFlags
		httpf  daemon.HTTPFlags
		rpcf   daemon.RPCFlags
		sec    daemon.SecurityFlags
		conf   *flagconfig.Config
		offers bool
		drain  time.Duration
	)
	cmd := &cobra.Command{
		Use:   "scheduler",
		Short: "Run a scheduler daemon (SchedulerService and GetTaskService)",
		Long: `Run a stateless Sparrow scheduler. Frontends submit jobs to its
SchedulerService; it batch-samples live node monitors from the gossip view,
places reservations on them, and hands out tasks by late binding through its
GetTaskService.

On SIGTERM or SIGINT it drains: /readyz fails at once, submitJob is refused
with a saturation refusal that suggests a retry delay (clients submit again,
and fail over once this scheduler stops answering), held submitJob calls are
answered or refused the same way, and getTask and task messages go on being
served until every accepted job has launched and its tasks are reported
finished, or --drain-timeout passes; then it leaves the gossip cluster and
exits. A second signal stops it at once.

With --http-listen, /readyz answers 200 once the Thrift services serve, the
scheduler has joined gossip (a member started without other seeds is the
first of its fleet and counts as joined alone) and at least one node monitor
is live in its view; otherwise 503 with the reason.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			log, err := newLogger()
			if err != nil {
				return err
			}
			conf.Report(log)
			cfg.Scheduler.NoOffers = !offers
			if cfg.Scheduler.ShortJobs, err = short.config(); err != nil {
				return err
			}
			if cfg.Scheduler.PullAfter, err = short.pullDelay(); err != nil {
				return err
			}
			cfg.Gossip, cfg.Join, cfg.GossipProfile = gossip.Bind, gossip.Seeds(), gossip.Profile
			cfg.AdvertiseHost, cfg.Name, cfg.RPC, cfg.Log = gossip.Advertise, gossip.Name, rpcf.Config, log
			if cfg.Keyring, err = sec.Apply(log, &cfg.RPC); err != nil {
				return err
			}
			// Joined once the HTTP endpoint is advertised: one piece of
			// gossip news, not two.
			cfg.JoinLater = true
			d, err := scheduler.StartDaemon(cfg)
			if err != nil {
				return err
			}
			srv, err := daemon.ServeHTTP(httpf, log, d.Surface(cfg.Join))
			if err != nil {
				d.Close()
				return err
			}
			defer srv.Close()
			d.Cluster.Join()
			return daemon.RunUntilSignal(log, func() error {
				srv.ShuttingDown()
				d.Drain(drain)
				return d.Close()
			})
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&cfg.Listen, "listen", scheduler.DefaultListen, "SchedulerService address (frontends and node monitors call it)")
	fs.StringVar(&cfg.GetTaskListen, "gettask-listen", scheduler.DefaultGetTaskListen, "GetTaskService address (node monitors call getTask here)")
	fs.Float64Var(&cfg.Scheduler.ProbeRatio, "probe-ratio", scheduler.DefaultProbeRatio, "default probe ratio d: reservations per task (a request may override it)")
	fs.Float64Var(&cfg.Scheduler.ConstrainedProbeRatio, "constrained-probe-ratio", 0, "default probe ratio for jobs with constraints or placement preferences (0: --probe-ratio)")
	fs.DurationVar(&cfg.Scheduler.SteerAfter, "steer-after", 0, "send a user's new jobs' reservations mostly to node monitors other than those that have held one of its reservations this long without serving any, e.g. under a fairness coordinator's CMMF weights that give it nothing there (0: off)")
	fs.DurationVar(&cfg.Scheduler.ReservationTimeout, "reservation-timeout", scheduler.DefaultReservationTimeout, "place extra reservations for a job whose reservations go unanswered this long (negative: never)")
	fs.DurationVar(&cfg.Scheduler.NodeLostGrace, "node-lost-grace", scheduler.DefaultNodeLostGrace, "after gossip declares a node monitor dead, wait this long before reporting its running tasks lost; if it is live again by then as the same process (a false death), they are kept (its queued reservations are placed elsewhere at once either way; negative: report at once)")
	fs.DurationVar(&cfg.Scheduler.LocalityStale, "locality-stale", scheduler.DefaultLocalityStale, "how long the coordinator's locality prices guide tasks that opted into relaxation (delayThreshold > 0) after they arrive; older prices fall back to the delay alone")
	fs.Int64Var(&cfg.Scheduler.LocalityInputBytes, "locality-input-bytes", scheduler.DefaultLocalityInputBytes, "input size assumed for a relaxable task whose request gives none, for pricing its move to another node")
	fs.BoolVar(&cfg.Scheduler.NoCancel, "no-cancel", false, "do not cancel leftover reservations once all of a job's tasks have launched")
	fs.IntVar(&cfg.Scheduler.OfferBatch, "offer-batch", scheduler.DefaultOfferBatch, "with --offers, the most of a job's tasks offered to one node monitor in one call: a node monitor is offered as many as it said it had free slots in its last answer to an offer (one until it has said), up to this many, and launches them with one call to its executor when the executor serves launchTasksAndWait (1: one task per call)")
	fs.BoolVar(&offers, "offers", true, "offer a job's tasks with its first reservations, one each or several to a node monitor with free slots (--offer-batch), for an idle node monitor to launch at once without the getTask round trip (lower scheduling delay and CPU per task on a fleet with free slots; see docs/protocol.md, Extensions, for what it trades: idle slots go to whoever offers first, and a node monitor that dies during the offer's call gets that task reported lost). Node monitors without the extension, or running coordinator-guided queues, decline, and get plain reservations after. --offers=false sends every reservation plain, as original Sparrow does")
	fs.Uint64Var(&cfg.Scheduler.Seed, "seed", 0, "seed for placement randomness (0: random)")
	fs.IntVar(&cfg.Scheduler.MaxHeldJobs, "max-held-jobs", scheduler.DefaultMaxHeldJobs, "most submitJob calls held at once while node monitors refuse their reservations as full; past it a job is refused as saturated with a suggested retry delay (0: never hold, answer at once and report refused tasks failed later)")
	fs.DurationVar(&cfg.Scheduler.MaxHold, "max-hold", scheduler.DefaultMaxHold, "longest a submitJob call is held on a saturated fleet before its job is refused (keep it below clients' call timeouts: the original Java client's is 60s)")
	fs.DurationVar(&cfg.Scheduler.MaxQueueWait, "max-queue-wait", 0, "hold a job before placing it while the expected queue wait of its best candidate nodes exceeds this (from node monitors' load reports and this scheduler's own reservations); held like a saturated job, refused past --max-held-jobs or --max-hold (0: off)")
	fs.IntVar(&cfg.Scheduler.FrontendMaxInflight, "frontend-max-inflight", scheduler.DefaultFrontendMaxInflight, "most task messages in flight to one frontend at once; past it a message waits up to --call-timeout for a slot, then is dropped and counted (the scheduler opens at most 64 connections to one peer, so above 64 the excess waits for a connection instead, and is dropped as in flight if none frees within --connect-timeout)")
	fs.DurationVar(&cfg.Scheduler.FrontendDeadAfter, "frontend-dead-after", scheduler.DefaultFrontendDeadAfter, "deregister a frontend's apps once no message to it has succeeded for this long; meanwhile its messages are dropped and counted, with one delivery attempt per backoff (100ms doubling to 10s), and logged once per 10s (negative: never deregister)")
	fs.DurationVar(&drain, "drain-timeout", scheduler.DefaultDrainTimeout, "on SIGTERM, how long the scheduler keeps serving getTask and task messages for the jobs it accepted (refusing new ones) before it leaves the cluster anyway; jobs not done by then are the frontends' to resubmit, as when a scheduler fails (0: do not wait). Keep it below the orchestrator's grace period (Kubernetes' terminationGracePeriodSeconds)")
	short.register(fs, true)
	httpf.Register(fs)
	gossip.Register(fs)
	rpcf.Register(fs)
	sec.Register(fs)
	conf = flagconfig.Attach(cmd)
	return cmd
}
