// Package cmmf computes constrained max-min fair (CMMF) allocations offline,
// after Ghodsi et al., "Choosy: Max-Min Fair Sharing for Datacenter Jobs with
// Constraints" (EuroSys'13), §4–§5.
//
// A Problem is a set of machine types (interchangeable slots, coalesced as in
// the paper's §5 "Optimization") and a set of users, each with a weight, a
// demand and the machine types it may run on. Solve returns the weighted CMMF
// allocation for divisible slots: every user's total and a user × type matrix
// that is a valid flow. SolveInteger returns an allocation of whole slots.
//
// The divisible answer is computed by progressive filling (§5): the level of
// every unfrozen user rises together; each round finds the highest feasible
// level exactly, by Newton steps over minimum cuts of a max-flow network
// (users → machine types → sink) instead of bisection, and then freezes every
// user that cannot grow without lowering someone at or below its level (the
// saturation test, done for all users at once with one residual search).
// The integer answer is the leximin one (§6's "fairest" vector), computed by
// the same rounds on step functions: every turn below the round's level is
// granted at once by an integer max flow, and turns tied at that level are
// served one by one along augmenting paths.
//
// The package is part of the deterministic core: it must not do I/O, start
// goroutines, read the clock or use global randomness. Given the same Problem
// it returns the same answer, bit for bit, so that the coordinator, the
// simulator and the tests agree. Tests inject randomness as a *rand.Rand.
package cmmf
