package main

import (
	"context"
	"encoding/json"
	"fmt"
	stdlog "log"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/hashicorp/memberlist"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/sparrowfleet/sparrow/internal/dashboard"
	"github.com/sparrowfleet/sparrow/internal/httpapi"
	"github.com/sparrowfleet/sparrow/internal/logging"
	"github.com/sparrowfleet/sparrow/internal/membership"
	"github.com/sparrowfleet/sparrow/internal/metrics"
	"github.com/sparrowfleet/sparrow/internal/rpc"
	"github.com/sparrowfleet/sparrow/nodemonitor"
	"github.com/sparrowfleet/sparrow/scheduler"
)

var logLevel string

func init() {
	rootCmd.PersistentFlags().StringVar(&logLevel, "log-level", "info",
		"log level: trace, debug, info, warn, error or disabled (console output on a terminal, JSON otherwise)")
}

func newLogger() (zerolog.Logger, error) {
	l, err := logging.New(os.Stderr, logLevel)
	if err != nil {
		return l, err
	}
	// Thrift's library logs through the standard log package when given no
	// logger; route those lines, and any other stray ones, into zerolog.
	stdlog.SetFlags(0)
	stdlog.SetOutput(logging.StdLogger(l, "stdlog").Writer())
	return l, nil
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
	fs.Int32Var(&r.cfg.MaxFrameBytes, "max-frame-bytes", rpc.DefaultMaxFrameBytes, "largest Thrift frame accepted (the original Java transport's own limit); larger frames are refused before allocation")
	fs.DurationVar(&r.cfg.ConnectTimeout, "connect-timeout", rpc.DefaultConnectTimeout, "timeout for opening Thrift connections")
	fs.DurationVar(&r.cfg.CallTimeout, "call-timeout", rpc.DefaultCallTimeout, "timeout for each read or write of an outgoing Thrift call")
	fs.DurationVar(&r.cfg.IdleTimeout, "idle-timeout", 0, "close incoming Thrift connections quiet between calls this long; 0 never closes them (original Sparrow clients never reconnect: set it only if every client does)")
	fs.DurationVar(&r.cfg.FrameTimeout, "frame-timeout", rpc.DefaultFrameTimeout, "close a Thrift connection that takes longer than this to send a frame once its first byte arrived, or to take a reply")
	fs.DurationVar(&r.cfg.HandshakeTimeout, "handshake-timeout", rpc.DefaultHandshakeTimeout, "close a TLS connection whose handshake takes longer than this")
	fs.IntVar(&r.cfg.MaxConns, "max-conns", rpc.DefaultMaxConns, "cap on concurrent incoming Thrift connections per service; at the cap the longest-idle connection is closed to admit a new one")
	fs.IntVar(&r.cfg.MaxConnsPerHost, "max-conns-per-host", rpc.DefaultMaxConnsPerHost, "cap on incoming Thrift connections per service from one remote IP")
	fs.Int64Var(&r.cfg.MemoryBudget, "rpc-memory-budget", rpc.DefaultMemoryBudget, "bytes of Thrift requests being read and decoded at once, across all connections (each frame is charged 9x its size); past it requests wait")
	fs.DurationVar(&r.cfg.BudgetWait, "rpc-budget-wait", rpc.DefaultBudgetWait, "how long a request waits for --rpc-memory-budget before it is refused with a 'server busy' error")
}

// securityFlags are the TLS and gossip-encryption flags every daemon
// shares. Plaintext is the default; docs/SECURITY.md explains the setup.
type securityFlags struct {
	tls           rpc.TLSFiles
	gossipKeyFile string
}

func (s *securityFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&s.tls.CA, "tls-ca", "", "PEM file of the cluster CA certificate(s); with --tls-cert and --tls-key, turns on TLS for every Thrift service this daemon serves and every call it makes (see docs/SECURITY.md)")
	fs.StringVar(&s.tls.Cert, "tls-cert", "", "PEM file of this daemon's certificate, issued by the --tls-ca CA for the hosts peers dial (sparrow certs issue)")
	fs.StringVar(&s.tls.Key, "tls-key", "", "PEM file of the private key for --tls-cert")
	fs.BoolVar(&s.tls.RequireClientCert, "tls-require-client-cert", false, "mutual TLS: refuse every caller (frontends, executors, other daemons) without a certificate from the --tls-ca CA")
	fs.StringVar(&s.gossipKeyFile, "gossip-key-file", "", "file of base64 gossip encryption keys (16, 24 or 32 bytes), one per line, the first used for sending and all accepted; encrypts gossip and refuses members without a key. $"+membership.GossipKeyEnv+" may hold the keys instead (sparrow certs gossip-key)")
}

// apply loads the TLS files into rpcCfg.TLS and returns the gossip
// keyring, nil for plaintext gossip.
func (s *securityFlags) apply(log zerolog.Logger, rpcCfg *rpc.Config) (*memberlist.Keyring, error) {
	if s.tls.Enabled() {
		if s.tls.CA == "" || s.tls.Cert == "" || s.tls.Key == "" {
			return nil, fmt.Errorf("TLS needs all of --tls-ca, --tls-cert and --tls-key")
		}
		cfg, err := s.tls.Config()
		if err != nil {
			return nil, err
		}
		rpcCfg.TLS = cfg
	}
	keyring, source, err := s.keyring(log)
	if err != nil {
		return nil, err
	}
	switch {
	case !s.tls.Enabled() && keyring == nil:
		log.Warn().Msg("plaintext Thrift and gossip: anyone who can reach the ports can submit jobs, call internal services and join the cluster (see docs/SECURITY.md)")
		return nil, nil
	case s.tls.Enabled() && s.tls.RequireClientCert:
		log.Info().Msg("Thrift: mutual TLS; callers need a certificate from the cluster CA")
	case s.tls.Enabled():
		log.Warn().Msg("Thrift: TLS without --tls-require-client-cert; anyone who can reach the ports can submit jobs and call internal services")
	default:
		log.Warn().Msg("Thrift: plaintext; anyone who can reach the ports can submit jobs and call internal services (see --tls-*)")
	}
	if keyring != nil {
		log.Info().Str("keys_from", source).Int("keys", len(keyring.GetKeys())).Msg("gossip: encrypted; members without the key are refused")
	} else {
		log.Warn().Msg("gossip: plaintext; anyone who can reach the gossip port can join the cluster (see --gossip-key-file)")
	}
	return keyring, nil
}

// keyring reads the gossip keys from --gossip-key-file or the environment.
func (s *securityFlags) keyring(log zerolog.Logger) (*memberlist.Keyring, string, error) {
	env, inEnv := os.LookupEnv(membership.GossipKeyEnv)
	switch {
	case s.gossipKeyFile != "" && inEnv:
		return nil, "", fmt.Errorf("both --gossip-key-file and $%s are set; use one", membership.GossipKeyEnv)
	case s.gossipKeyFile != "":
		if _, err := os.Stat(s.gossipKeyFile); err != nil && membership.LooksLikeKey(s.gossipKeyFile) {
			// Never echo it: it is probably a key.
			return nil, "", fmt.Errorf("--gossip-key-file takes the path of a key file, not a key: put the key in a file (mode 0600) or in $%s, and consider it exposed (command lines are visible to other users)", membership.GossipKeyEnv)
		}
		kr, err := membership.LoadKeyring(s.gossipKeyFile)
		if err != nil {
			return nil, "", err
		}
		if fi, err := os.Stat(s.gossipKeyFile); err == nil && fi.Mode().Perm()&0o077 != 0 {
			log.Warn().Str("file", s.gossipKeyFile).Str("mode", fmt.Sprintf("%04o", fi.Mode().Perm())).
				Msg("gossip key file is accessible to other users; chmod 600 it")
		}
		return kr, s.gossipKeyFile, nil
	case inEnv:
		kr, err := membership.KeyringFromEnv(env)
		return kr, "$" + membership.GossipKeyEnv, err
	}
	return nil, "", nil
}

// runUntilSignal runs until SIGINT or SIGTERM, then calls stop. A second
// signal while stop runs (a drain) ends the process at once, the signal's
// default action.
func runUntilSignal(log zerolog.Logger, stop func() error) error {
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	<-ctx.Done()
	cancel()
	log.Info().Msg("signal received; leaving the cluster and shutting down")
	if err := stop(); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	return nil
}

// httpFlags open the operator HTTP listener every daemon shares.
type httpFlags struct {
	addr  string
	pprof bool
}

func (h *httpFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&h.addr, "http-listen", "", "serve the operator endpoints at http://ADDR: /metrics (Prometheus), /livez, /readyz, /status (JSON, read by sparrow status), the fleet dashboard at /ui/ and, with --pprof, /debug/pprof/; off when empty. Plain HTTP: bind it to a private address. --metrics-listen is its old name, still accepted")
	// The old name keeps working (scripts and the interop tests use it);
	// pflag hides it from the flag list and names the new one when used.
	fs.StringVar(&h.addr, "metrics-listen", "", "old name of --http-listen")
	fs.MarkDeprecated("metrics-listen", "use --http-listen (the same listener, with more endpoints)")
	fs.BoolVar(&h.pprof, "pprof", false, "also serve Go's profiler at /debug/pprof/ on --http-listen; it exposes stacks and memory contents, and profiling costs CPU while it runs")
}

// surface is one daemon's operator endpoints.
type surface struct {
	cluster *membership.Cluster
	// host replaces a wildcard host in the advertised HTTP address, as
	// for the Thrift services.
	host       string
	collectors []prometheus.Collector
	ready      httpapi.Check
	status     func() httpapi.Status
	// drain, if set, is started by POST /drain.
	drain func()
}

// httpServer is a daemon's operator endpoint; its methods do nothing when
// --http-listen is off.
type httpServer struct {
	srv        *httpapi.Server
	stopPoller context.CancelFunc
}

// serveHTTP serves s on h.addr, unless it is empty, and advertises the
// address in gossip so that `sparrow status` can find it.
func serveHTTP(h httpFlags, log zerolog.Logger, s surface) (*httpServer, error) {
	if h.addr == "" {
		if h.pprof {
			log.Warn().Msg("--pprof does nothing without --http-listen")
		}
		return &httpServer{}, nil
	}
	dash, stopPoller := dashboard.ForDaemon(s.cluster)
	srv, err := httpapi.Serve(httpapi.Config{
		Addr: h.addr, Collectors: s.collectors, Ready: s.ready, Status: s.status, View: s.cluster, Drain: s.drain, Pprof: h.pprof,
		UI: dash.Handler("/ui/"),
	})
	if err != nil {
		stopPoller()
		return nil, err
	}
	adv := rpc.Advertised(srv.Addr(), s.host)
	if err := s.cluster.SetHTTPAddr(adv); err != nil {
		// The endpoint works; only `sparrow status` will not find it.
		log.Warn().Err(err).Msg("could not advertise the HTTP endpoint in gossip")
	}
	ev := log.Info().Str("http", "http://"+srv.Addr()).Str("advertised", adv)
	if h.pprof {
		ev = ev.Bool("pprof", true)
	}
	ev.Msg("serving /metrics, /livez, /readyz, /status and the dashboard at /ui/")
	return &httpServer{srv, stopPoller}, nil
}

// shuttingDown fails /readyz from now on.
func (h *httpServer) shuttingDown() {
	if h.srv != nil {
		h.srv.ShuttingDown()
	}
}

func (h *httpServer) close() {
	if h.srv != nil {
		h.stopPoller()
		h.srv.Close()
	}
}

// schedulerSurface adapts a scheduler for the HTTP surface. It is ready
// once its Thrift services serve, it has joined its seeds, and it has at
// least one node monitor to sample.
func schedulerSurface(d *scheduler.Daemon, seeds []string) surface {
	return surface{
		cluster: d.Cluster, host: hostOf(d.ServiceAddr()),
		collectors: []prometheus.Collector{scheduler.Collector(d.Stats), metrics.RPCCollector(d.RPCStats)},
		ready: httpapi.All(
			httpapi.Serving(d.Serving),
			httpapi.Joined(d.Cluster, seeds),
			httpapi.HasMember(d.Cluster, membership.RoleNodeMonitor, "no live node monitor in the gossip view"),
		),
		status: d.OperatorStatus,
	}
}

// nodeMonitorSurface adapts a node monitor for the HTTP surface. It is
// ready once its Thrift services serve, it has joined its seeds, and at
// least one executor has registered: until then schedulers refuse to
// sample it for any app.
func nodeMonitorSurface(d *nodemonitor.Daemon, seeds []string) surface {
	return surface{
		cluster: d.Cluster, host: hostOf(d.ServiceAddr()),
		collectors: []prometheus.Collector{nodemonitor.Collector(d.State), metrics.RPCCollector(d.RPCStats)},
		ready: httpapi.All(
			httpapi.Serving(d.Serving),
			httpapi.Joined(d.Cluster, seeds),
			func() string {
				if len(d.State().Apps) == 0 {
					return "no executor registered"
				}
				return ""
			},
		),
		status: d.OperatorStatus,
	}
}

func hostOf(addr string) string {
	h, _, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	return h
}

// onSIGHUP calls fn on every SIGHUP until the returned stop is called.
func onSIGHUP(fn func()) (stop func()) {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGHUP)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-ch:
				fn()
			case <-done:
				return
			}
		}
	}()
	return func() {
		signal.Stop(ch)
		close(done)
	}
}

// noArgs rejects positional arguments with a clear message.
var noArgs = cobra.NoArgs

// writeJSONFile writes v, indented, to path, creating its directory.
func writeJSONFile(path string, v any) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("results dir: %w", err)
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
