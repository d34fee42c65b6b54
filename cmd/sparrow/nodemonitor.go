package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/sparrowfleet/sparrow/core/queue"
	"github.com/sparrowfleet/sparrow/core/slots"
	"github.com/sparrowfleet/sparrow/internal/daemon"
	"github.com/sparrowfleet/sparrow/internal/flagconfig"
	"github.com/sparrowfleet/sparrow/internal/k8snode"
	"github.com/sparrowfleet/sparrow/nodemonitor"
)

func init() { rootCmd.AddCommand(newNodeMonitorCmd()) }

func newNodeMonitorCmd() *cobra.Command {
	var (
		cfg         nodemonitor.DaemonConfig
		gossip      daemon.GossipFlags
		httpf       daemon.HTTPFlags
		conf        *flagconfig.Config
		rpcf        daemon.RPCFlags
		sec         daemon.SecurityFlags
		queueKind   string
		attrs       []string
		weights     []string
		weightsFile string
		profile     string
		profileDir  string
		profileNet  float64
		drainFor    time.Duration
		short       shortJobFlags
		k8sNode     string
	)
	cmd := &cobra.Command{
		Use:   "nodemonitor",
		Short: "Run a node monitor daemon (NodeMonitorService and InternalService)",
		Long: `Run a Sparrow node monitor on a worker machine. Executors register with
its NodeMonitorService; schedulers queue reservations on its InternalService.
When a slot frees it pulls a task from the reservation's scheduler (getTask)
and launches it on the app's executor.

On SIGTERM or SIGINT, or on POST /drain to --http-listen (from loopback, or
with the bearer token of --http-admin-token-file), it drains: it
refuses new reservations and hands its queued ones back to their schedulers,
which place them elsewhere at once; it lets running tasks finish for up to
--drain-timeout; then it leaves the gossip cluster, refuses new work for
--leave-grace while the leave spreads, and exits, and schedulers report
the tasks still running as lost. A second signal stops it at once.

With --k8s-node it watches its Kubernetes Node through the API server
(the pod's service account needs get and watch on nodes): while the Node
is cordoned (spec.unschedulable, as kubectl cordon and kubectl drain set
it) it pauses: it refuses new reservations, hands its queued ones back and
stops advertising its apps, while running tasks finish and are reported;
it keeps running and takes work again once the Node is uncordoned. API
errors are logged and retried with backoff; the last known state stands.

With --http-listen, /readyz answers 200 once the Thrift services serve, the
node monitor has joined gossip (alone only if started without other seeds)
and at least one executor has registered, until a drain begins; otherwise
503 with the reason.
/status adds live slot use and each user's queued reservations and running
tasks.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			log, err := newLogger()
			if err != nil {
				return err
			}
			conf.Report(log)
			w, err := loadWeights(weightsFile, weights)
			if err != nil {
				return err
			}
			short.on = short.on || queueKind == "srpt"
			if cfg.ShortJobs, err = short.config(); err != nil {
				return err
			}
			if cfg.PullRetry, err = short.pullDelay(); err != nil {
				return err
			}
			kind := queueKind
			if short.on {
				kind = "fifo" // unused: the policy's SRPT queue replaces it
			}
			q, err := queue.New(kind, 1, w)
			if err != nil {
				return fmt.Errorf("--queue: %w", err)
			}
			cfg.Attrs, err = daemon.ParseAttrs(attrs)
			if err != nil {
				return err
			}
			if cfg.Attrs, err = applyProfile(log, profile, profileDir, profileNet, gossip.Name, cfg.Attrs); err != nil {
				return err
			}
			cfg.Queue = q
			cfg.Gossip, cfg.Join, cfg.GossipProfile = gossip.Bind, gossip.Seeds(), gossip.Profile
			cfg.AdvertiseHost, cfg.Name, cfg.RPC, cfg.Log = gossip.Advertise, gossip.Name, rpcf.Config, log
			if cfg.Keyring, err = sec.Apply(log, &cfg.RPC); err != nil {
				return err
			}
			var nodeWatch k8snode.Config
			if k8sNode != "" {
				if nodeWatch, err = k8snode.InCluster(k8sNode, log); err != nil {
					return fmt.Errorf("--k8s-node: %w", err)
				}
			}
			// Joined once the HTTP endpoint is advertised: one piece of
			// gossip news, not two.
			cfg.JoinLater = true
			d, err := nodemonitor.StartDaemon(cfg)
			if err != nil {
				return err
			}
			if k8sNode != "" {
				ctx, stopWatch := context.WithCancel(context.Background())
				defer stopWatch()
				go k8snode.Watch(ctx, nodeWatch, d.SetPaused)
			}
			stopReload := reloadWeightsOnSIGHUP(log, weightsFile, weights, d.SetWeights)
			defer stopReload()
			drainAsked := make(chan struct{}, 1)
			surf := d.Surface(cfg.Join)
			surf.Drain = func() { drainAsked <- struct{}{} }
			srv, err := daemon.ServeHTTP(httpf, log, surf)
			if err != nil {
				d.Close()
				return err
			}
			defer srv.Close()
			d.Cluster.Join()
			return daemon.DrainOnSignal(log, drainAsked, drainFor, func() error {
				srv.ShuttingDown()
				d.Drain(drainFor)
				return d.Close()
			})
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&cfg.Listen, "listen", nodemonitor.DefaultListen, "NodeMonitorService address (executors call it)")
	fs.StringVar(&cfg.InternalListen, "internal-listen", nodemonitor.DefaultInternalListen, "InternalService address (schedulers call it)")
	fs.IntVar(&cfg.Slots, "slots", 4, "tasks this node runs at once")
	fs.StringVar(&queueKind, "queue", "fifo", "reservation queue discipline: "+strings.Join(queue.Kinds(), ", ")+", srpt (the same as --short-jobs)")
	short.register(fs, false)
	fs.StringArrayVar(&attrs, "attr", nil, "node attribute key=value advertised to schedulers (repeatable; \"rack\" names the rack)")
	fs.StringVar(&profile, "profile", "", profileFlagHelp)
	fs.StringVar(&profileDir, "profile-dir", "", "directory for --profile calibrate's temporary file (default: the system's temporary directory)")
	fs.Float64Var(&profileNet, "profile-net", 119.2, "network rate in MB/s that --profile calibrate reports (it cannot be measured alone; 119.2 = 1 Gbit/s)")
	fs.StringArrayVar(&weights, "weight", nil, "fair-share weight user=w for the fair and priority queues (repeatable; others get 1)")
	fs.StringVar(&weightsFile, "weights-file", "", "file of user=weight lines, re-read on SIGHUP (--weight flags override it)")
	fs.IntVar(&cfg.MaxQueued, "max-queued", slots.DefaultMaxQueued, "most reservations queued at once; past it they are refused and schedulers place them elsewhere")
	fs.DurationVar(&cfg.GetTaskTimeout, "gettask-timeout", nodemonitor.DefaultGetTaskTimeout, "timeout for getTask calls; a reservation whose scheduler does not answer frees its slot after this")
	fs.DurationVar(&cfg.FetchRetryFor, "fetch-retry-for", nodemonitor.DefaultFetchRetryFor, "how long a getTask whose call failed after it was sent is asked about again, holding its slot, in case the scheduler handed out a task whose answer was lost")
	fs.DurationVar(&cfg.LeaveGrace, "leave-grace", nodemonitor.DefaultLeaveGrace, "after a drain, how long the node monitor keeps answering, refusing new work, once it has left the gossip cluster: a scheduler that has not yet heard of the leave gets a refusal instead of a dropped call, whose offered task it would report lost (0: exit at once)")
	fs.DurationVar(&drainFor, "drain-timeout", nodemonitor.DefaultDrainTimeout, "on SIGTERM or POST /drain, how long running tasks may finish before the node monitor leaves the cluster anyway and their schedulers report them lost (0: do not wait); queued reservations are handed back at once either way. Keep it below the orchestrator's grace period (Kubernetes' terminationGracePeriodSeconds)")
	fs.DurationVar(&cfg.ExecutorCheck, "executor-check", nodemonitor.DefaultExecutorCheck, "executor liveness: each executor is watched through a connection held open to it; one whose connection ended or refused is connected to again after this long (negative: never watched)")
	fs.DurationVar(&cfg.Coordination.ReportEvery, "report-every", nodemonitor.DefaultReportEvery, "how often per-user queued and running counts are reported to the fairness coordinator, when one is live (sparrow coordinator), and the node's load to schedulers run with --max-queue-wait")
	fs.DurationVar(&cfg.Coordination.Stale, "guidance-stale", nodemonitor.DefaultGuidanceStale, "fall back to local weights when the coordinator's guidance is this old (it is gone or cut off)")
	fs.BoolVar(&cfg.Coordination.Weights, "coordinator-weights", false, "with --queue fair or priority, take the coordinator's CMMF weights for this node's machine type (its --attr set); --queue choosy uses the coordinator's cluster-wide counts either way")
	fs.StringVar(&k8sNode, "k8s-node", "", "name of the Kubernetes Node this runs on (the downward API's spec.nodeName): while it is cordoned, take no new reservations and hand queued ones back, resuming when it is uncordoned; needs the in-cluster API and a service account allowed get and watch on nodes (empty: do not watch)")
	httpf.Register(fs)
	gossip.Register(fs)
	rpcf.Register(fs)
	sec.Register(fs)
	conf = flagconfig.Attach(cmd)
	return cmd
}
