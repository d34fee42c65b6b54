// Package sim is a deterministic discrete-event simulator of sample-based
// scheduling for parallel jobs, after §3 and §5 of Ousterhout et al.,
// "Sparrow: Distributed, Low Latency Scheduling" (SOSP 2013).
//
// It models N node monitors with S slots each, Poisson job arrivals of m
// tasks, and a fixed one-way network delay of RTT/2 per message, and compares
// five placement policies: random placement, per-task sampling, batch
// sampling, batch sampling with late binding (Sparrow), and an omniscient
// centralized scheduler. The late-binding policy runs the product's own
// placement code (placement.Sampler.Plan and placement.Request) and node
// monitor slot machine (slots.Core over queue.FIFO); the other policies are
// simulator-owned baselines over flat per-node slices.
//
// RunTrace replays a job trace (package internal/jobtrace) instead of
// Poisson arrivals, under plain Sparrow (the same placement, queue and slot
// code), Sparrow with the long-task-aware policy of core/shortjobs, or
// the no-queueing ideal, and reports short and long jobs apart. It reads
// the trace one job ahead of the simulation.
//
// The engine is pure: no goroutines, no clock, no I/O. A run is a function of
// its Config, including the seed.
//
// It is an experiment harness: the daemons and the client library must not
// import it. It runs the core packages' code unchanged and must stay
// deterministic for a given seed: no wall clock, no global randomness.
package sim
