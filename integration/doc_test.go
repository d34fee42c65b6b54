// Package integration runs the real daemons' code over real Thrift and real
// gossip on loopback, each member on its own 127.0.x.y address.
//
// It holds tests only: nothing imports it.
package integration
