package daemon

import (
	"fmt"
	"strings"

	"github.com/spf13/pflag"

	"github.com/sparrowfleet/sparrow/internal/rpc"
)

// GossipFlags are the membership flags every daemon shares.
type GossipFlags struct {
	Bind      string
	Join      string
	Profile   string
	Advertise string
	Name      string
}

// Register adds the flags to fs.
func (g *GossipFlags) Register(fs *pflag.FlagSet) {
	fs.StringVar(&g.Bind, "gossip", "127.0.0.1:7946", "gossip host:port to bind and advertise (set a routable host in containers)")
	fs.StringVar(&g.Join, "join", "", "comma-separated gossip host:port seeds of existing members")
	fs.StringVar(&g.Profile, "gossip-profile", "lan", "gossip timing: lan, local (fast failure detection on loopback) or wan")
	fs.StringVar(&g.Advertise, "advertise-host", "", "host advertised for Thrift services bound to a wildcard address (default: the gossip host)")
	fs.StringVar(&g.Name, "name", "", "unique member name (default: the gossip address)")
}

// Seeds is --join as a list, blanks dropped.
func (g *GossipFlags) Seeds() []string {
	var out []string
	for _, s := range strings.Split(g.Join, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// RPCFlags bound Thrift connections.
type RPCFlags struct{ Config rpc.Config }

// Register adds the flags to fs.
func (r *RPCFlags) Register(fs *pflag.FlagSet) {
	fs.Int32Var(&r.Config.MaxFrameBytes, "max-frame-bytes", rpc.DefaultMaxFrameBytes, "largest Thrift frame accepted (the original Java transport's own limit); larger frames are refused before allocation")
	fs.DurationVar(&r.Config.ConnectTimeout, "connect-timeout", rpc.DefaultConnectTimeout, "timeout for opening Thrift connections")
	fs.DurationVar(&r.Config.CallTimeout, "call-timeout", rpc.DefaultCallTimeout, "timeout for each read or write of an outgoing Thrift call")
	fs.DurationVar(&r.Config.IdleTimeout, "idle-timeout", 0, "close incoming Thrift connections quiet between calls this long; 0 never closes them (original Sparrow clients never reconnect: set it only if every client does)")
	fs.DurationVar(&r.Config.FrameTimeout, "frame-timeout", rpc.DefaultFrameTimeout, "close a Thrift connection that takes longer than this to send a frame once its first byte arrived, or to take a reply")
	fs.DurationVar(&r.Config.HandshakeTimeout, "handshake-timeout", rpc.DefaultHandshakeTimeout, "close a TLS connection whose handshake takes longer than this")
	fs.IntVar(&r.Config.MaxConns, "max-conns", rpc.DefaultMaxConns, "cap on concurrent incoming Thrift connections per service; at the cap the longest-idle connection is closed to admit a new one")
	fs.IntVar(&r.Config.MaxConnsPerHost, "max-conns-per-host", rpc.DefaultMaxConnsPerHost, "cap on incoming Thrift connections per service from one remote IP")
	fs.Int64Var(&r.Config.MemoryBudget, "rpc-memory-budget", rpc.DefaultMemoryBudget, "bytes of Thrift requests being read and decoded at once, across all connections (each frame is charged 9x its size); past it requests wait")
	fs.DurationVar(&r.Config.BudgetWait, "rpc-budget-wait", rpc.DefaultBudgetWait, "how long a request waits for --rpc-memory-budget before it is refused with a 'server busy' error")
}

// HTTPFlags open the operator HTTP listener every daemon shares.
type HTTPFlags struct {
	Addr  string
	Pprof bool
	// AdminTokenFile holds the bearer token that admits callers not on
	// loopback to the state-changing endpoints; "" admits loopback only.
	AdminTokenFile string
}

// Register adds the flags to fs, with --metrics-listen, the old name of
// --http-listen, hidden.
func (h *HTTPFlags) Register(fs *pflag.FlagSet) {
	fs.StringVar(&h.Addr, "http-listen", "", "serve the operator endpoints at http://ADDR: /metrics (Prometheus), /livez, /readyz, /status (JSON, read by sparrow status), the fleet dashboard at /ui/ and, with --pprof, /debug/pprof/; off when empty. Plain HTTP: bind it to a private address. --metrics-listen is its old name, still accepted")
	// The old name keeps working (scripts and the interop tests use it);
	// pflag hides it from the flag list and names the new one when used.
	fs.StringVar(&h.Addr, "metrics-listen", "", "old name of --http-listen")
	fs.MarkDeprecated("metrics-listen", "use --http-listen (the same listener, with more endpoints)")
	fs.StringVar(&h.AdminTokenFile, "http-admin-token-file", "", "file holding a token (white space trimmed) that lets callers not on loopback use the state-changing endpoints of --http-listen (POST /drain) with \"Authorization: Bearer <token>\"; without it only loopback callers may. Read-only endpoints stay open to all. The file is re-read on each such request (rotate it in place); missing or empty fails start-up (see docs/SECURITY.md)")
	fs.BoolVar(&h.Pprof, "pprof", false, "also serve Go's profiler at /debug/pprof/ on --http-listen; it exposes stacks and memory contents, and profiling costs CPU while it runs")
}

// ParseAttrs reads repeated --attr key=value flags; nil for none.
func ParseAttrs(kvs []string) (map[string]string, error) {
	if len(kvs) == 0 {
		return nil, nil
	}
	out := make(map[string]string, len(kvs))
	for _, kv := range kvs {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("--attr %q: want key=value", kv)
		}
		out[k] = v
	}
	return out, nil
}
