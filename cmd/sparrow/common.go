package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/rs/zerolog"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/sparrowfleet/sparrow/logging"
	"github.com/sparrowfleet/sparrow/rpc"
)

var logLevel string

func init() {
	rootCmd.PersistentFlags().StringVar(&logLevel, "log-level", "info",
		"log level: trace, debug, info, warn, error or disabled (console output on a terminal, JSON otherwise)")
}

func newLogger() (zerolog.Logger, error) {
	return logging.New(os.Stderr, logLevel)
}

// gossipFlags are the membership flags every daemon shares.
type gossipFlags struct {
	bind      string
	join      string
	profile   string
	advertise string
	name      string
}

func (g *gossipFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&g.bind, "gossip", "127.0.0.1:7946", "gossip host:port to bind and advertise (set a routable host in containers)")
	fs.StringVar(&g.join, "join", "", "comma-separated gossip host:port seeds of existing members")
	fs.StringVar(&g.profile, "gossip-profile", "lan", "gossip timing: lan, local (fast failure detection on loopback) or wan")
	fs.StringVar(&g.advertise, "advertise-host", "", "host advertised for Thrift services bound to a wildcard address (default: the gossip host)")
	fs.StringVar(&g.name, "name", "", "unique member name (default: the gossip address)")
}

func (g *gossipFlags) seeds() []string {
	var out []string
	for _, s := range strings.Split(g.join, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// rpcFlags bound Thrift connections.
type rpcFlags struct{ cfg rpc.Config }

func (r *rpcFlags) register(fs *pflag.FlagSet) {
	fs.Int32Var(&r.cfg.MaxFrameBytes, "max-frame-bytes", rpc.DefaultMaxFrameBytes, "largest Thrift frame accepted; larger frames are refused before allocation")
	fs.DurationVar(&r.cfg.ConnectTimeout, "connect-timeout", rpc.DefaultConnectTimeout, "timeout for opening Thrift connections")
	fs.DurationVar(&r.cfg.CallTimeout, "call-timeout", rpc.DefaultCallTimeout, "timeout for each read or write of an outgoing Thrift call")
	fs.DurationVar(&r.cfg.IdleTimeout, "idle-timeout", rpc.DefaultIdleTimeout, "close incoming Thrift connections idle this long")
	fs.IntVar(&r.cfg.MaxConns, "max-conns", rpc.DefaultMaxConns, "cap on concurrent incoming Thrift connections per service")
}

// runUntilSignal runs until SIGINT or SIGTERM, then calls stop.
func runUntilSignal(log zerolog.Logger, stop func() error) error {
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	<-ctx.Done()
	log.Info().Msg("signal received; leaving the cluster and shutting down")
	if err := stop(); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	return nil
}

// noArgs rejects positional arguments with a clear message.
var noArgs = cobra.NoArgs
