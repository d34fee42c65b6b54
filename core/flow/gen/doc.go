// Package gen builds min-cost flow instances shaped like Quincy's scheduling
// graph (Isard et al., SOSP'09, §4 and Appendix) for the flow package's
// tests, benchmarks and LEMON comparison: root and worker task nodes,
// per-job unscheduled nodes U_j, the cluster aggregator X, rack aggregators
// R_l, computers C_m and the sink S, with data-transfer, wait and preemption
// costs drawn at random. It stands in for core/quincy's builder, which
// computes the same graph from real cluster state; swap it in by building a
// *flow.Network there instead.
//
// Like the rest of core it is pure: randomness comes from the caller's
// *rand.Rand, and the same seed gives the same graph.
package gen
