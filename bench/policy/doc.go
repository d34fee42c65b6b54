// Package policy holds the pure parts of the policy experiments that
// reproduce the Sparrow paper's resource-allocation results on a real
// fleet (Ousterhout et al., SOSP 2013, §4.1-4.2, §7.5 Figure 11, §7.6
// Table 3): piecewise-constant demand schedules and their Poisson
// arrivals, per-second cluster shares measured from executor launch and
// finish times, weighted max-min fair shares, mean absolute deviation,
// response-time summaries with censoring for bounded overloaded runs, and
// the tables that `sparrow bench fairness|priority|constraints` print and
// the charts they describe (drawn as SVG or PNG by internal/plot).
//
// Nothing here starts goroutines, reads the clock or does network I/O;
// the fleet-driving shell is bench/policy/live, and docs/experiments/policies.md records
// the measured results next to the paper's.
package policy
