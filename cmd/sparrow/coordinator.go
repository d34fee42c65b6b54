package main

import (
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/sparrowfleet/sparrow/coordinator"
	"github.com/sparrowfleet/sparrow/core/locality"
	"github.com/sparrowfleet/sparrow/core/quincy"
	"github.com/sparrowfleet/sparrow/internal/httpapi"
	"github.com/sparrowfleet/sparrow/internal/membership"
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
		loc         localityFlags
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
			conf.report(log)
			if cfg.Weights, err = loadWeights(weightsFile, weights); err != nil {
				return err
			}
			cfg.Gossip, cfg.Join, cfg.GossipProfile, cfg.Name, cfg.Log = gossip.bind, gossip.seeds(), gossip.profile, gossip.name, log
			if cfg.LocalityParams, err = loc.params(); err != nil {
				return err
			}
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
	fs.StringVar(&cfg.Delivery, "delivery", coordinator.DeliveryGossip, `how guidance reaches node monitors: "gossip" spreads all of it (every user's count, every type's weights) to every member, relayed by node monitors, so each member's cost grows with users x types (fits memberlist's LAN budget up to about 1,000 nodes and 200 users at a 1 s period, see docs/experiments/fairness.md); "direct" sends each node monitor that reported one UDP reply (a few if it has many users) with only its users' counts and its type's weights, nothing relayed, so use it at large scale (thousands of nodes or users); "both" does both`)
	fs.StringArrayVar(&weights, "weight", nil, "base weight user=w (repeatable; others get 1)")
	fs.StringVar(&weightsFile, "weights-file", "", "file of user=weight lines, re-read on SIGHUP (--weight flags override it)")
	fs.StringVar(&sec.gossipKeyFile, "gossip-key-file", "", "file of base64 gossip encryption keys, one per line, the first used for sending; encrypts gossip and refuses members without a key. $"+membership.GossipKeyEnv+" may hold the keys instead")
	fs.BoolVar(&cfg.Locality, "locality", false, "compute locality prices every --period (Quincy's min-cost flow over the node monitors' queued and running work, racks and task run times) and send them to every scheduler, which weighs waiting for a task's preferred nodes against moving its input to their rack or the cluster")
	loc.register(fs)
	httpf.register(fs)
	gossip.register(fs)
	conf = withConfig(cmd)
	return cmd
}

// localityFlags are the locality prices' weights, in Quincy's units
// (§6: ω = 0.5, ψ = 1, ξ = 2).
type localityFlags struct {
	wait, rack, core, probeRatio float64
	input                        int64
}

func (l *localityFlags) register(fs *pflag.FlagSet) {
	d := locality.DefaultParams()
	unit := float64(quincy.CostUnit)
	fs.Float64Var(&l.wait, "wait-weight", float64(d.WaitPerSecond)/unit, "locality: cost of a task waiting one second in a queue, in Quincy's units (ω; a second of running is 1)")
	fs.Float64Var(&l.rack, "rack-cost-per-gb", float64(d.RackPerGB)/unit, "locality: cost of reading 10^9 bytes of a task's input across a rack switch (ψ)")
	fs.Float64Var(&l.core, "core-cost-per-gb", float64(d.CorePerGB)/unit, "locality: cost of reading 10^9 bytes across the core switch (ξ; Quincy's QFPX uses 20 for a constrained core)")
	fs.Int64Var(&l.input, "locality-input-bytes", d.InputBytes, "locality: input size assumed for every queued task (bytes that move when it runs away from its data)")
	fs.Float64Var(&l.probeRatio, "locality-probe-ratio", d.ProbeRatio, "locality: reservations each task queues (the schedulers' --probe-ratio d); a node's queued reservations divided by it estimate its queued tasks (1: count reservations as tasks)")
}

// params converts the flags to cost units and checks them.
func (l *localityFlags) params() (locality.Params, error) {
	p := locality.DefaultParams()
	toUnits := func(name string, v float64) (int64, error) {
		if v < 0 || v > 1e9 || v != v {
			return 0, fmt.Errorf("--%s %v: want a number in [0, 1e9]", name, v)
		}
		return int64(v*quincy.CostUnit + 0.5), nil
	}
	var err error
	if p.WaitPerSecond, err = toUnits("wait-weight", l.wait); err != nil {
		return p, err
	}
	if p.RackPerGB, err = toUnits("rack-cost-per-gb", l.rack); err != nil {
		return p, err
	}
	if p.CorePerGB, err = toUnits("core-cost-per-gb", l.core); err != nil {
		return p, err
	}
	p.InputBytes, p.ProbeRatio = l.input, l.probeRatio
	if err := p.Validate(); err != nil {
		return p, fmt.Errorf("locality flags: %w", err)
	}
	return p, nil
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
		collectors: []prometheus.Collector{coordinator.Collector(d.Stats)},
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
	if l := g.Locality; l != nil {
		st.Locality = &httpapi.LocalityStatus{Version: l.Version, At: l.At.UTC().Format(time.RFC3339Nano), SolveSeconds: l.Solve.Seconds(),
			Nodes: l.Nodes, TaskMillis: l.TaskMillis, Local: l.Local, Rack: l.Rack, Core: l.Core, Cluster: l.Cluster, Racks: l.Racks,
			Bytes: l.Bytes, Sent: l.Sent, SentBytes: l.SentBytes, Failed: l.Failed}
	}
	return st
}
