package rpc

import (
	"crypto/tls"
	"time"

	"github.com/apache/thrift/lib/go/thrift"
	"github.com/rs/zerolog"
)

// Defaults for Config's zero fields.
const (
	// DefaultMaxFrameBytes is the original Java TFramedTransport's own
	// limit (16,384,000 bytes), so every request an original client can
	// send is accepted. Memory is bounded by the decode Budget, not by a
	// smaller frame cap.
	DefaultMaxFrameBytes = 16_384_000
	// DefaultConnectTimeout bounds dialing on the client side.
	DefaultConnectTimeout = 1 * time.Second
	// DefaultCallTimeout bounds each read and write of an outgoing call.
	DefaultCallTimeout = 5 * time.Second
	// DefaultFrameTimeout is how long a peer may take to send one frame
	// once its first byte arrived: a 16 MB frame needs well under a second
	// on any LAN, and a slow-loris peer is cut off after a few seconds.
	DefaultFrameTimeout = 5 * time.Second
	// DefaultHandshakeTimeout bounds a TLS handshake.
	DefaultHandshakeTimeout = 5 * time.Second
	// DefaultMaxConns caps one server's connections.
	DefaultMaxConns = 4096
	// DefaultMaxConnsPerHost caps one remote host's connections to one
	// server: a quarter of DefaultMaxConns, room for 128 original
	// frontends (each holds a pool of 8) on one host, while no single
	// host can take the whole server.
	DefaultMaxConnsPerHost = 1024
	// DefaultMaxConnsPerPeer caps a client pool's connections to one peer.
	DefaultMaxConnsPerPeer = 64
	// DefaultMemoryBudget bounds the bytes of requests being read and
	// decoded at once in one process (see Budget): three maximum-size
	// frames at a time at the worst decoding ratio.
	DefaultMemoryBudget = 512 << 20
	// DefaultBudgetWait is how long a request waits for decode memory
	// before it is refused with an error the caller can see.
	DefaultBudgetWait = 10 * time.Second
)

// Config bounds a server's or client's connections. The zero value is usable.
type Config struct {
	// MaxFrameBytes is the largest frame accepted; a larger frame is refused
	// before anything is allocated for it.
	MaxFrameBytes int32
	// ConnectTimeout bounds dialing.
	ConnectTimeout time.Duration
	// CallTimeout bounds each read and write of a call on the client side.
	CallTimeout time.Duration
	// IdleTimeout, when positive, closes a server connection that is quiet
	// between calls for this long, and makes client pools drop connections
	// idle for half of it. Zero (the default) never closes an idle
	// connection: original Sparrow clients never reconnect. Only for
	// fleets whose clients all reconnect.
	IdleTimeout time.Duration
	// FrameTimeout is how long a server waits for the rest of a frame
	// once its first byte has arrived, and for a reply to be written.
	FrameTimeout time.Duration
	// HandshakeTimeout bounds a server's TLS handshake.
	HandshakeTimeout time.Duration
	// MaxConns caps a server's concurrent connections. At the cap the
	// connection idle the longest is closed to admit a new one; when none
	// is idle the new one is refused.
	MaxConns int
	// MaxConnsPerHost caps a server's connections from one remote IP;
	// further connections from that host are refused.
	MaxConnsPerHost int
	// MaxConnsPerPeer caps a client pool's connections to one peer; calls
	// past it wait, up to ConnectTimeout, for one to be returned.
	MaxConnsPerPeer int
	// MemoryBudget is the size of the Budget that Listen and ListenAll
	// create when Budget is nil.
	MemoryBudget int64
	// Budget, when set, is the decode budget a server draws on; servers of
	// one process should share one (ListenAll does).
	Budget *Budget
	// BudgetWait is how long a request waits for decode memory before the
	// server refuses it.
	BudgetWait time.Duration
	// TLS, when set, wraps listeners and dialed connections.
	TLS *tls.Config
	// DialLog is where client pools log, at debug, a dial to the
	// addresses a peer's name last resolved to because its lookup failed.
	// Servers log to the logger given to Listen. Nil logs nothing (a
	// pointer keeps Config comparable).
	DialLog *zerolog.Logger
	// Calls, when set, counts the calls that servers built with this
	// Config serve and that pools built with it make, per method; the
	// servers and pools of one member should share one. Nil counts
	// nothing.
	Calls *Calls
}

func (c Config) withDefaults() Config {
	if c.MaxFrameBytes <= 0 {
		c.MaxFrameBytes = DefaultMaxFrameBytes
	}
	if c.ConnectTimeout <= 0 {
		c.ConnectTimeout = DefaultConnectTimeout
	}
	if c.CallTimeout <= 0 {
		c.CallTimeout = DefaultCallTimeout
	}
	if c.IdleTimeout < 0 {
		c.IdleTimeout = 0
	}
	if c.FrameTimeout <= 0 {
		c.FrameTimeout = DefaultFrameTimeout
	}
	if c.HandshakeTimeout <= 0 {
		c.HandshakeTimeout = DefaultHandshakeTimeout
	}
	if c.MaxConns <= 0 {
		c.MaxConns = DefaultMaxConns
	}
	if c.MaxConnsPerHost <= 0 {
		c.MaxConnsPerHost = DefaultMaxConnsPerHost
	}
	if c.MaxConnsPerPeer <= 0 {
		c.MaxConnsPerPeer = DefaultMaxConnsPerPeer
	}
	if c.MemoryBudget <= 0 {
		c.MemoryBudget = DefaultMemoryBudget
	}
	if c.BudgetWait <= 0 {
		c.BudgetWait = DefaultBudgetWait
	}
	if c.TLS != nil && c.TLS.MinVersion < tls.VersionTLS12 {
		// Thrift's TLS socket writes a floor of TLS 1.0 into a config whose
		// MinVersion is unset: a data race when pooled dials share it, and
		// too old a floor. Work on a copy with our floor.
		c.TLS = c.TLS.Clone()
		c.TLS.MinVersion = tls.VersionTLS12
	}
	return c
}

func (c Config) thrift(socketTimeout time.Duration) *thrift.TConfiguration {
	return &thrift.TConfiguration{
		MaxFrameSize:   c.MaxFrameBytes,
		MaxMessageSize: c.MaxFrameBytes,
		ConnectTimeout: c.ConnectTimeout,
		SocketTimeout:  socketTimeout,
		TLSConfig:      c.TLS,
	}
}
