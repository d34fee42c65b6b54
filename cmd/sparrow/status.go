package main

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/sparrowfleet/sparrow/client/fleetstatus"
	"github.com/sparrowfleet/sparrow/internal/daemon"
	"github.com/sparrowfleet/sparrow/internal/membership"
)

func init() { rootCmd.AddCommand(newStatusCmd()) }

func newStatusCmd() *cobra.Command {
	var (
		cfg     fleetstatus.Config
		keyFile string
		asJSON  bool
		watch   fleetstatus.WatchInterval
	)
	cmd := &cobra.Command{
		Use:   "status --join HOST:PORT",
		Short: "Print the fleet: members by role, health, slots, queues, apps and users",
		Long: `Join the gossip cluster as a short-lived observer, print the fleet and
leave. Observers are a role of their own, which schedulers never sample and
node monitors never ask for tasks.

Gossip lists every member with its role, addresses, slots and apps, whether
or not it serves HTTP. Members started with --http-listen also advertise it,
and status asks each of them for /status: readiness (the /readyz answer),
free slots, running tasks, queued reservations, and each user's queued
reservations and running tasks. Members without it are shown as alive in
gossip, with "-" for those.

The observer binds gossip on the address that routes to the first --join
seed, port 0, unless --gossip says otherwise; the fleet must be able to
reach it there. An encrypted fleet needs its key: --gossip-key-file or
$` + membership.GossipKeyEnv + `.`,
		Example: `  sparrow status --join 10.0.0.1:7946
  sparrow status --join 10.0.0.1:7946 --json | jq '.members[] | select(.health != "ready")'
  sparrow status --join 10.0.0.1:7946 --watch 2`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, cancel, err := startObserver(cmd, &cfg, keyFile)
			if err != nil {
				return err
			}
			defer cancel()
			return fleetstatus.Print(ctx, cfg, cmd.OutOrStdout(), asJSON, time.Duration(watch))
		},
	}
	fs := cmd.Flags()
	observerFlags(fs, &cfg, &keyFile, " (members of any profile can be observed)")
	fs.BoolVar(&asJSON, "json", false, "print one JSON object (one per line with --watch)")
	fs.Var(&watch, "watch", "refresh every interval (seconds, or a duration such as 500ms) until interrupted; 0 prints once")
	fs.DurationVar(&cfg.Timeout, "timeout", 5*time.Second, "how long to wait for the join and for each member's /status")
	return cmd
}

// observerFlags are the gossip flags of every observer command; profileNote
// ends --gossip-profile's help.
func observerFlags(fs *pflag.FlagSet, cfg *fleetstatus.Config, keyFile *string, profileNote string) {
	fs.StringVar(&cfg.Join, "join", "", "comma-separated gossip host:port of members to join through (required)")
	fs.StringVar(&cfg.Bind, "gossip", "", "gossip host:port the observer binds and advertises (default: the local address that routes to the first --join seed, a free port)")
	fs.StringVar(&cfg.Profile, "gossip-profile", "lan", "gossip timing of the observer: lan, local or wan"+profileNote)
	fs.StringVar(keyFile, "gossip-key-file", "", "file of the fleet's base64 gossip keys, one per line, as the daemons take it; $"+membership.GossipKeyEnv+" may hold them instead")
}

// startObserver is what every observer command does before it joins:
// memberlist's chatter kept out of its output unless --log-level is given,
// --join required, the fleet's gossip keys and the logger set in cfg, and
// a context that ends on SIGINT or SIGTERM.
func startObserver(cmd *cobra.Command, cfg *fleetstatus.Config, keyFile string) (context.Context, context.CancelFunc, error) {
	if !cmd.Flags().Changed("log-level") {
		logLevel = "warn"
	}
	log, err := newLogger()
	if err != nil {
		return nil, nil, err
	}
	if cfg.Join == "" {
		return nil, nil, fmt.Errorf("--join is required: the gossip address of any member")
	}
	cfg.Log = log
	sec := daemon.SecurityFlags{GossipKeyFile: keyFile}
	if cfg.Keyring, _, err = sec.Keyring(log); err != nil {
		return nil, nil, err
	}
	ctx, cancel := daemon.SignalContext(cmd.Context())
	return ctx, cancel, nil
}
