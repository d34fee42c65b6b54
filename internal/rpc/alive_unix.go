//go:build unix

package rpc

import (
	"crypto/tls"
	"errors"
	"net"
	"syscall"
)

// idleConnAlive reports whether a pooled client connection, idle between
// calls, can still carry a call: its peer has not closed it. A Thrift
// server never sends unprompted, so any readable byte (a FIN, a reset, a
// TLS close_notify) means the connection is done. One non-blocking
// MSG_PEEK, no data consumed.
func idleConnAlive(c net.Conn) bool {
	if tc, ok := c.(*tls.Conn); ok {
		c = tc.NetConn()
	}
	sc, ok := c.(syscall.Conn)
	if !ok {
		return true // no way to look; the call will tell
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	var n int
	var rerr error
	if err := raw.Read(func(fd uintptr) bool {
		var b [1]byte
		n, _, rerr = syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		return true
	}); err != nil {
		return false
	}
	if n > 0 {
		return false
	}
	return errors.Is(rerr, syscall.EAGAIN) || errors.Is(rerr, syscall.EWOULDBLOCK)
}
