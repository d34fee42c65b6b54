// Package daemon is what sparrow's daemon commands share between their
// flags and a running daemon: the flag groups every daemon takes (gossip,
// Thrift limits, TLS and gossip keys, the operator HTTP listener, the
// coordinator's locality weights) and what they turn into, the operator
// HTTP endpoint a daemon serves from its package's httpapi.Surface, and
// the signal handling that drains and stops a daemon.
//
// It is plumbing: it knows no daemon package, and the commands in
// cmd/sparrow wire each daemon to it.
package daemon
