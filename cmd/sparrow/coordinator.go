package main

import (
	"github.com/spf13/cobra"

	"github.com/sparrowfleet/sparrow/coordinator"
	"github.com/sparrowfleet/sparrow/internal/daemon"
	"github.com/sparrowfleet/sparrow/internal/flagconfig"
	"github.com/sparrowfleet/sparrow/internal/membership"
)

func init() { rootCmd.AddCommand(newCoordinatorCmd()) }

func newCoordinatorCmd() *cobra.Command {
	var (
		cfg         coordinator.Config
		gossip      daemon.GossipFlags
		httpf       daemon.HTTPFlags
		sec         daemon.SecurityFlags // only its gossip key: a coordinator serves no Thrift
		conf        *flagconfig.Config
		weights     []string
		weightsFile string
		loc         daemon.LocalityFlags
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

With --locality, every --period it also prices data locality: Quincy's
min-cost flow over the node monitors' queued work (reservations divided by
--locality-probe-ratio), running work, racks and recent task run times
weighs waiting in a node's queue (--wait-weight)
against moving a task's input (--locality-input-bytes) across a rack
switch (--rack-cost-per-gb) or the core (--core-cost-per-gb), and the
prices of every node, rack and the cluster go to each scheduler directly.

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
			conf.Report(log)
			if cfg.Weights, err = loadWeights(weightsFile, weights); err != nil {
				return err
			}
			cfg.Gossip, cfg.Join, cfg.GossipProfile, cfg.Name, cfg.Log = gossip.Bind, gossip.Seeds(), gossip.Profile, gossip.Name, log
			if cfg.LocalityParams, err = loc.Params(); err != nil {
				return err
			}
			if cfg.Keyring, _, err = sec.Keyring(log); err != nil {
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
			srv, err := daemon.ServeHTTP(httpf, log, d.Surface(cfg.Join, gossip.Advertise))
			if err != nil {
				d.Close()
				return err
			}
			defer srv.Close()
			return daemon.RunUntilSignal(log, func() error {
				srv.ShuttingDown()
				return d.Close()
			})
		},
	}
	fs := cmd.Flags()
	fs.DurationVar(&cfg.Period, "period", coordinator.DefaultPeriod, "how often guidance is computed and spread")
	fs.StringVar(&cfg.Delivery, "delivery", coordinator.DeliveryGossip, `how guidance reaches node monitors: "gossip" spreads all of it (every user's count, every type's weights) to every member, relayed by node monitors, so each member's cost grows with users x types (fits memberlist's LAN budget up to about 1,000 nodes and 200 users at a 1 s period, see docs/experiments/fairness.md); "direct" sends each node monitor that reported one UDP reply (a few if it has many users) with only its users' counts and its type's weights, nothing relayed, so use it at large scale (thousands of nodes or users); "both" does both`)
	fs.StringArrayVar(&weights, "weight", nil, "base weight user=w (repeatable; others get 1)")
	fs.StringVar(&weightsFile, "weights-file", "", "file of user=weight lines, re-read on SIGHUP (--weight flags override it)")
	fs.StringVar(&sec.GossipKeyFile, "gossip-key-file", "", "file of base64 gossip encryption keys, one per line, the first used for sending; encrypts gossip and refuses members without a key. $"+membership.GossipKeyEnv+" may hold the keys instead")
	fs.BoolVar(&cfg.Locality, "locality", false, "compute locality prices every --period (Quincy's min-cost flow over the node monitors' queued and running work, racks and task run times) and send them to every scheduler, which weighs waiting for a task's preferred nodes against moving its input to their rack or the cluster")
	loc.Register(fs)
	httpf.Register(fs)
	gossip.Register(fs)
	conf = flagconfig.Attach(cmd)
	return cmd
}
