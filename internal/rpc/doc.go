// Package rpc is sparrowfleet's Thrift edge: servers and client pools that
// speak the original Sparrow wire format (framed transport, binary
// protocol, one service per port) with bounded frames, connections and
// decode memory.
//
// Connection policy. The original Sparrow daemons served every service
// with Thrift's TThreadedSelectorServer, which never closes an idle
// connection, and the original Java clients were written for that: a
// frontend opens a pool of connections once and never reopens one, and a
// backend keeps the connection it registered on for its whole life. So a
// connection that is quiet between calls stays open here too, however
// long. What protects a server from hostile peers is elsewhere: a frame
// once begun must be finished within FrameTimeout, one remote host may
// hold at most MaxConnsPerHost connections, at the MaxConns cap the
// longest-idle connection makes room for a new one, TLS handshakes have a
// deadline, and the bytes being read and decoded at once across all
// connections are bounded by a Budget. docs/SECURITY.md lists each limit
// and why.
//
// It is plumbing: only this module may import it, and it holds no scheduling
// logic (that lives in core/).
package rpc
