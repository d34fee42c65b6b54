// Package httpapi is the daemons' operator HTTP surface, served on the
// listener --http-listen opens: Prometheus metrics at /metrics, liveness
// and readiness probes at /livez and /readyz, a JSON snapshot at /status
// (read by `sparrow status`), and, only when asked for, Go's profiler at
// /debug/pprof/. The one endpoint that changes state, POST /drain, goes
// through an AdminGuard: loopback callers, or callers with the bearer
// token of --http-admin-token-file.
//
// It also holds the /status wire format and the readiness checks built
// from a member's gossip view, so that the daemons' commands and
// `sparrow status` agree on both.
//
// It is plumbing: only this module may import it. It must not import the
// daemons (scheduler, nodemonitor): commands adapt their state into
// Checks and Status values, so this package stays below them in the
// layout. It holds no scheduling logic (that lives in core/).
package httpapi
