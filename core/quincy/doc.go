// Package quincy builds the min-cost flow network of Quincy's scheduler
// (Isard et al., "Quincy: Fair Scheduling for Distributed Computing
// Clusters", SOSP'09, §4 and the Appendix) from a snapshot of a cluster and
// its jobs, and reads a schedule back from the network's optimal flow.
//
// The network is the Appendix's construction: a node per root task r^j and
// per worker task w_n^j (each supplying one unit of flow), a job-wide
// unscheduled node U_j, the cluster aggregator X, a rack aggregator R_l per
// rack, a node C_m per computer and the sink S. A worker's arcs are its
// choices: stay unscheduled (cost υ, growing with the time it has waited),
// run anywhere (α, via X), anywhere in a preferred rack (ρ, via R_l), on a
// preferred computer (γ), or keep running where it runs (its data cost
// minus the time it has run, θ). The capacities and the lower bound on
// U_j → S hold every job between E_j and F_j running workers, and the
// policies Q, QP, QF, QFP and QFPX (§4.3) are nothing but choices of E_j,
// F_j, the arcs left to running workers and the core-switch weight ξ.
//
// Build turns a State, a Policy and Params into a Graph (the flow.Network
// plus an index from nodes and arcs back to jobs, tasks, racks and
// computers); ReadSchedule turns an optimal flow of that network into a
// Schedule: for every task, start it on computer m, keep it running, move
// it (preempt and restart elsewhere), preempt it, or leave it waiting.
// Synthetic makes cluster snapshots of a given size for benchmarks and the
// simulator, and WriteSyntheticDIMACS writes one as a DIMACS problem.
//
// Quincy runs one task per computer (§2.4); this package generalises that
// to K slots per computer, the extension §8 names, by giving C_m → S and
// R_l → C_m capacity K and X → R_l the rack's slot count. With one slot
// per computer it is exactly the paper's graph.
//
// It is part of the deterministic core: it must not do I/O (other than
// through an io.Writer handed to it), start goroutines, read the clock or
// use global randomness, and it must not import anything but the standard
// library and core/. Time is the State's Now, randomness a *rand.Rand from
// the caller, and all costs are int64 computed in integer arithmetic, so
// the same snapshot gives the same network bit for bit on every platform.
package quincy
