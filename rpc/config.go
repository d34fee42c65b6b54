// Package rpc is sparrowfleet's Thrift edge: servers and client pools that
// speak the original Sparrow wire format (framed transport, binary
// protocol, one service per port) with bounded frames and connections.
package rpc

import (
	"crypto/tls"
	"time"

	"github.com/apache/thrift/lib/go/thrift"
)

// Defaults for Config's zero fields.
const (
	// DefaultMaxFrameBytes is 4 MiB: a 500-task job with 1 KiB task
	// messages needs about 0.5 MiB, and decoding costs up to ~77 bytes of
	// memory per wire byte (lists of empty structs; see docs/FUZZING.md),
	// so larger frames are a memory risk per connection.
	DefaultMaxFrameBytes  = 4 << 20
	DefaultConnectTimeout = 1 * time.Second
	DefaultCallTimeout    = 5 * time.Second
	DefaultIdleTimeout    = 60 * time.Second
	DefaultMaxConns       = 4096
	// DefaultMaxConnsPerPeer caps a client pool's connections to one peer.
	DefaultMaxConnsPerPeer = 64
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
	// IdleTimeout closes a server connection that sends nothing for this long,
	// so idle or slow peers cannot pin goroutines and descriptors.
	IdleTimeout time.Duration
	// MaxConns caps a server's concurrent connections; further connections
	// are closed at once.
	MaxConns int
	// MaxConnsPerPeer caps a client pool's connections to one peer; calls
	// past it wait, up to ConnectTimeout, for one to be returned.
	MaxConnsPerPeer int
	// TLS, when set, wraps listeners and dialed connections.
	TLS *tls.Config
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
	if c.IdleTimeout <= 0 {
		c.IdleTimeout = DefaultIdleTimeout
	}
	if c.MaxConns <= 0 {
		c.MaxConns = DefaultMaxConns
	}
	if c.MaxConnsPerPeer <= 0 {
		c.MaxConnsPerPeer = DefaultMaxConnsPerPeer
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
