package client

import (
	"crypto/tls"
	"time"

	"github.com/rs/zerolog"
	"github.com/sparrowfleet/sparrow/internal/rpc"
)

// RPCConfig bounds a frontend's or executor's Thrift connections. The
// zero value of each field is the fleet's default, so RPCConfig{} is the
// defaults and RPCConfig{TLS: cfg} only turns TLS on (see TLSFiles and
// docs/SECURITY.md).
type RPCConfig struct {
	// MaxFrameBytes is the largest frame accepted; a larger one is refused
	// before anything is allocated for it. Default 16,384,000 bytes, the
	// original Java transport's limit.
	MaxFrameBytes int32
	// ConnectTimeout bounds dialing (default 1 s). A Frontend uses its
	// own Timeout instead.
	ConnectTimeout time.Duration
	// CallTimeout bounds each read and write of an outgoing call (default
	// 5 s). A Frontend uses its own Timeout and SubmitTimeout instead.
	CallTimeout time.Duration
	// IdleTimeout, when positive, closes a served connection quiet for
	// this long and makes outgoing connections idle for half of it be
	// dropped. Zero never closes an idle connection.
	IdleTimeout time.Duration
	// FrameTimeout is how long the listener waits for the rest of a frame
	// once its first byte has arrived, and for a reply to be written
	// (default 5 s).
	FrameTimeout time.Duration
	// HandshakeTimeout bounds the listener's TLS handshakes (default 5 s).
	HandshakeTimeout time.Duration
	// MaxConns caps the listener's concurrent connections (default 4096);
	// MaxConnsPerHost its connections from one remote IP (default 1024);
	// MaxConnsPerPeer the outgoing connections to one peer (default 64).
	MaxConns, MaxConnsPerHost, MaxConnsPerPeer int
	// MemoryBudget bounds the bytes of requests being read and decoded at
	// once by the listener (default 512 MiB); BudgetWait is how long a
	// request waits for that memory before it is refused (default 10 s).
	MemoryBudget int64
	BudgetWait   time.Duration
	// TLS, when set, wraps the listener and every dialed connection.
	// TLSFiles.Config builds one from PEM files; any *tls.Config the
	// peers accept will do.
	TLS *tls.Config
}

// internal is the transport's form of c.
func (c RPCConfig) internal() rpc.Config {
	return rpc.Config{
		MaxFrameBytes: c.MaxFrameBytes, ConnectTimeout: c.ConnectTimeout, CallTimeout: c.CallTimeout,
		IdleTimeout: c.IdleTimeout, FrameTimeout: c.FrameTimeout, HandshakeTimeout: c.HandshakeTimeout,
		MaxConns: c.MaxConns, MaxConnsPerHost: c.MaxConnsPerHost, MaxConnsPerPeer: c.MaxConnsPerPeer,
		MemoryBudget: c.MemoryBudget, BudgetWait: c.BudgetWait, TLS: c.TLS,
	}
}

// dialing is the transport's form of c for a client pool logging to log.
func (c RPCConfig) dialing(log *zerolog.Logger) rpc.Config {
	cfg := c.internal()
	cfg.DialLog = log
	return cfg
}

// TLSFiles names the PEM files of a frontend's or executor's TLS
// identity, as "sparrow certs issue" writes them. The zero value means
// plaintext: its methods return a nil *tls.Config.
type TLSFiles struct {
	// CA is a PEM bundle of the cluster's CA certificates: peers are
	// verified against it.
	CA string
	// Cert is this member's PEM certificate (optionally followed by
	// intermediates) and Key its PEM private key.
	Cert, Key string
	// RequireClientCert makes the listener refuse callers without a
	// certificate issued by CA (mutual TLS).
	RequireClientCert bool
}

// Config is the *tls.Config for RPCConfig.TLS of a member that both
// serves and calls, as frontends and executors do (schedulers call a
// frontend's FrontendService; node monitors an executor's
// BackendService): it presents Cert both ways and verifies peers against
// CA. CA, Cert and Key are all required, and the certificate must chain
// to CA and allow both server and client authentication. It returns nil,
// nil for the zero value.
func (f TLSFiles) Config() (*tls.Config, error) { return rpc.TLSFiles(f).Config() }

// ServerConfig is the *tls.Config of a process that only serves. Cert
// and Key are required; CA is required with RequireClientCert.
func (f TLSFiles) ServerConfig() (*tls.Config, error) { return rpc.TLSFiles(f).ServerConfig() }

// ClientConfig is the *tls.Config of a process that only calls: servers
// are verified against CA (the system's roots when CA is empty), and
// Cert and Key, given together, are presented when a server asks.
func (f TLSFiles) ClientConfig() (*tls.Config, error) { return rpc.TLSFiles(f).ClientConfig() }
