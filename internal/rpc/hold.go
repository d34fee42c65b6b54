package rpc

import (
	"context"
	"errors"
	"io"
)

// ErrPeerSpoke means a held connection (Pool.Hold) received bytes: a
// Thrift server never sends unprompted, so the peer is not one.
var ErrPeerSpoke = errors.New("peer sent data on a connection that made no call")

// Hold opens a connection to addr as a call would (its name resolved as
// for calls, TLS when configured, within ConnectTimeout), calls opened,
// and then holds the connection, sending nothing, until the peer closes or
// resets it or ctx ends. It returns a *DialError when the connection could
// not be opened, ctx's error when ctx ended, and otherwise the error that
// ended the connection (io.EOF for a close).
//
// A held connection is a liveness watch that costs nothing while the peer
// lives: the peer's process ending closes it at once, on any platform,
// whereas polling with new connections costs a connect, an accept and a
// close on both sides at every check. A server may also close a
// connection it finds idle (Config.IdleTimeout, or at its connection cap),
// so an ended hold says "look again", not "dead".
func (p *Pool[C]) Hold(ctx context.Context, addr string, opened func()) error {
	conn, err := p.connect(ctx, addr)
	if err != nil {
		return &DialError{Addr: addr, Err: err}
	}
	defer conn.Close()
	if opened != nil {
		opened()
	}
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	var b [1]byte
	n, err := conn.Read(b[:])
	switch {
	case ctx.Err() != nil:
		return ctx.Err()
	case n > 0:
		return ErrPeerSpoke
	case err == nil:
		return io.ErrNoProgress
	}
	return err
}
