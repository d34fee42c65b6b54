package main

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/cobra"

	"github.com/sparrowfleet/sparrow/coordinator"
	"github.com/sparrowfleet/sparrow/internal/httpapi"
	"github.com/sparrowfleet/sparrow/internal/membership"
	"github.com/sparrowfleet/sparrow/internal/metrics"
)

func init() { rootCmd.AddCommand(newCoordinatorCmd()) }

func newCoordinatorCmd() *cobra.Command {
	var (
		cfg         coordinator.Config
		gossip      gossipFlags
		httpf       httpFlags
		sec         securityFlags // only its gossip key: a coordinator serves no Thrift
		conf        *daemonConfig
		weights     []string
		weightsFile string
	)
	cmd := &cobra.Command{
		Use:   "coordinator",
		Short: "Run the optional fairness coordinator (CMMF guidance by gossip or direct replies)",
		Long: `Run the optional fairness coordinator. The fleet works without it.

Every --period the active coordinator gathers node monitors' reports of
their per-user queued and running work (node monitors send them to it over
gossip), computes constrained max-min fair (CMMF) shares over machine types
(a node's machine type is its set of --attr attributes), and delivers each
user's cluster-wide running count and per-type CMMF weights (--delivery:
spread to every member by gossip, or sent to each reporting node monitor
directly with just its own users' numbers).
Node monitors started with --queue choosy serve the user with the lowest
weighted cluster-wide share first (Choosy); those with --queue fair and
--coordinator-weights take the CMMF weights of their type. A node monitor
that hears nothing newer for --guidance-stale falls back to its own weights.

Run two or more for availability: the live coordinator with the lowest
--name publishes, the others stand by and take over when gossip declares
it gone. Users' base weights come from here (--weight, --weights-file,
re-read on SIGHUP). Shuts down gracefully on SIGTERM, leaving the gossip
cluster so a standby takes over at once.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			log, err := newLogger()
			if err != nil {
				return err
			}
			conf.report(log)
			if cfg.Weights, err = loadWeights(weightsFile, weights); err != nil {
				return err
			}
			cfg.Gossip, cfg.Join, cfg.GossipProfile, cfg.Name, cfg.Log = gossip.bind, gossip.seeds(), gossip.profile, gossip.name, log
			if cfg.Keyring, _, err = sec.keyring(log); err != nil {
				return err
			}
			if cfg.Keyring == nil {
				log.Warn().Msg("gossip: plaintext; anyone who can reach the gossip port can join the cluster and send reports (see --gossip-key-file)")
			}
			d, err := coordinator.Start(cfg)
			if err != nil {
				return err
			}
			stopReload := reloadWeightsOnSIGHUP(log, weightsFile, weights, d.SetWeights)
			defer stopReload()
			srv, err := serveHTTP(httpf, log, coordinatorSurface(d, cfg.Join, gossip.advertise))
			if err != nil {
				d.Close()
				return err
			}
			defer srv.close()
			return runUntilSignal(log, func() error {
				srv.shuttingDown()
				return d.Close()
			})
		},
	}
	fs := cmd.Flags()
	fs.DurationVar(&cfg.Period, "period", coordinator.DefaultPeriod, "how often guidance is computed and spread")
	fs.StringVar(&cfg.Delivery, "delivery", coordinator.DeliveryGossip, `how guidance reaches node monitors: "gossip" spreads all of it (every user's count, every type's weights) to every member, relayed by node monitors, so each member's cost grows with users x types (fits memberlist's LAN budget up to about 1,000 nodes and 200 users at a 1 s period, see docs/FAIRNESS.md); "direct" sends each node monitor that reported one UDP reply (a few if it has many users) with only its users' counts and its type's weights, nothing relayed, so use it at large scale (thousands of nodes or users); "both" does both`)
	fs.StringArrayVar(&weights, "weight", nil, "base weight user=w (repeatable; others get 1)")
	fs.StringVar(&weightsFile, "weights-file", "", "file of user=weight lines, re-read on SIGHUP (--weight flags override it)")
	fs.StringVar(&sec.gossipKeyFile, "gossip-key-file", "", "file of base64 gossip encryption keys, one per line, the first used for sending; encrypts gossip and refuses members without a key. $"+membership.GossipKeyEnv+" may hold the keys instead")
	httpf.register(fs)
	gossip.register(fs)
	conf = withConfig(cmd)
	return cmd
}

// coordinatorSurface adapts a coordinator for the HTTP surface: ready once
// it has joined its seeds, whether it publishes or stands by.
func coordinatorSurface(d *coordinator.Daemon, seeds []string, advertise string) surface {
	host := advertise
	if host == "" {
		host = hostOf(d.Cluster.Addr())
	}
	return surface{
		cluster: d.Cluster, host: host,
		collectors: []prometheus.Collector{metrics.CoordinatorCollector(d.Stats)},
		ready:      httpapi.All(httpapi.Joined(d.Cluster, seeds)),
		status: func() httpapi.Status {
			return httpapi.Status{Name: d.Cluster.Name(), Role: membership.RoleCoordinator, Gossip: d.Cluster.Addr(),
				Coordinator: coordinatorStatus(d.Guidance())}
		},
	}
}

// coordinatorStatus is the coordinator's part of /status: its role and
// the guidance it last published.
func coordinatorStatus(g coordinator.GuidanceStatus) *httpapi.CoordinatorStatus {
	st := &httpapi.CoordinatorStatus{Active: g.Active, Version: g.Version, Reports: g.Reports,
		Users: make(map[string]httpapi.UserShare, len(g.Users))}
	if !g.At.IsZero() {
		st.At = g.At.UTC().Format(time.RFC3339Nano)
	}
	for u, s := range g.Users {
		st.Users[u] = httpapi.UserShare{Running: s.Running, Target: s.Target}
	}
	return st
}
