package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/hashicorp/memberlist"
	"github.com/rs/zerolog"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/sparrowfleet/sparrow/client/fleetstatus"
	"github.com/sparrowfleet/sparrow/internal/membership"
)

func init() { rootCmd.AddCommand(newStatusCmd()) }

// statusOptions are `sparrow status`'s flags.
type statusOptions struct {
	join, bind, profile string
	asJSON              bool
	watch               watchInterval
	timeout             time.Duration
	keyring             *memberlist.Keyring
}

// watchInterval is --watch: a duration, or a bare number of seconds.
type watchInterval time.Duration

func (w *watchInterval) String() string { return time.Duration(*w).String() }
func (w *watchInterval) Type() string   { return "interval" }
func (w *watchInterval) Set(s string) error {
	if n, err := strconv.ParseFloat(s, 64); err == nil {
		*w = watchInterval(n * float64(time.Second))
	} else if d, err := time.ParseDuration(s); err == nil {
		*w = watchInterval(d)
	} else {
		return fmt.Errorf("want seconds (5) or a duration (5s)")
	}
	if *w < 0 {
		return fmt.Errorf("must not be negative")
	}
	return nil
}

func newStatusCmd() *cobra.Command {
	var (
		o   statusOptions
		sec securityFlags
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
			ctx, cancel, keyring, log, err := startObserver(cmd, o.join, &sec)
			if err != nil {
				return err
			}
			defer cancel()
			o.keyring = keyring
			return runStatus(ctx, o, cmd.OutOrStdout(), log)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&o.join, "join", "", "comma-separated gossip host:port of members to join through (required)")
	fs.StringVar(&o.bind, "gossip", "", "gossip host:port the observer binds and advertises (default: the local address that routes to the first --join seed, a free port)")
	fs.StringVar(&o.profile, "gossip-profile", "lan", "gossip timing of the observer: lan, local or wan (members of any profile can be observed)")
	fs.BoolVar(&o.asJSON, "json", false, "print one JSON object (one per line with --watch)")
	fs.Var(&o.watch, "watch", "refresh every interval (seconds, or a duration such as 500ms) until interrupted; 0 prints once")
	fs.DurationVar(&o.timeout, "timeout", 5*time.Second, "how long to wait for the join and for each member's /status")
	fs.StringVar(&sec.gossipKeyFile, "gossip-key-file", "", "file of the fleet's base64 gossip keys, one per line, as the daemons take it; $"+membership.GossipKeyEnv+" may hold them instead")
	return cmd
}

// runStatus joins the fleet as an observer, prints it once or every
// o.watch until ctx ends, and leaves.
func runStatus(ctx context.Context, o statusOptions, out io.Writer, log zerolog.Logger) error {
	obs, err := fleetstatus.Join(ctx, fleetstatus.Config{
		Join: o.join, Bind: o.bind, Profile: o.profile, Keyring: o.keyring, Timeout: o.timeout, Log: log,
	})
	if err != nil {
		return err
	}
	defer obs.Leave()
	redraw := o.watch > 0 && !o.asJSON && isTerminal(out)
	for {
		v := obs.Collect(ctx)
		if ctx.Err() != nil {
			return nil // interrupted mid-collection: print nothing half-read
		}
		if redraw {
			fmt.Fprint(out, "\x1b[H\x1b[2J") // home and clear: redraw in place
		}
		if o.asJSON {
			if err := json.NewEncoder(out).Encode(v); err != nil {
				return err
			}
		} else {
			fleetstatus.Render(out, v)
		}
		if o.watch == 0 {
			return nil
		}
		if !redraw && !o.asJSON {
			fmt.Fprintln(out)
		}
		t := time.NewTimer(time.Duration(o.watch))
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-t.C:
		}
	}
}

// isTerminal reports whether out is a terminal, where --watch redraws in
// place instead of scrolling.
func isTerminal(out io.Writer) bool {
	f, ok := out.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// startObserver is what every observer command does before it joins:
// memberlist's chatter kept out of its output unless --log-level is given,
// --join required, the fleet's gossip keys, and a context that ends on
// SIGINT or SIGTERM.
func startObserver(cmd *cobra.Command, join string, sec *securityFlags) (context.Context, context.CancelFunc, *memberlist.Keyring, zerolog.Logger, error) {
	if !cmd.Flags().Changed("log-level") {
		logLevel = "warn"
	}
	log, err := newLogger()
	if err != nil {
		return nil, nil, nil, log, err
	}
	if join == "" {
		return nil, nil, nil, log, fmt.Errorf("--join is required: the gossip address of any member")
	}
	keyring, _, err := sec.keyring(log)
	if err != nil {
		return nil, nil, nil, log, err
	}
	ctx, cancel := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	return ctx, cancel, keyring, log, nil
}
