// Package coordinator is the optional fairness coordinator daemon. Every
// period the active coordinator collects node monitors' reports of their
// per-user work, computes constrained max-min fair (CMMF) guidance with
// core/fairshare, and spreads it to every member by gossip: cluster-wide
// running counts for Choosy queues, and per-machine-type weights for
// weighted fair queues. The fleet runs without it; node monitors fall back
// to their local weights when its guidance goes stale.
//
// Several coordinators may run for availability. They never fight: the
// live coordinator with the lowest name publishes, the others stand by,
// and node monitors report to whichever is active in their view, so the
// next one takes over within a period or two of gossip declaring the
// first gone.
//
// With Config.Locality it also prices data locality every period: Quincy's
// min-cost flow over the same reports (core/locality), its prices sent to
// each scheduler directly (internal/pricegossip; locality.go).
//
// It is a daemon shell: the fairness computation lives in core/fairshare
// and core/cmmf, the locality flow in core/locality; this package adds the
// period, gossip and locking around them and must not grow algorithms of
// its own.
package coordinator
