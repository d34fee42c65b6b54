// Package perfmodel predicts how long a task runs on a machine it has never
// run on, after Peter et al., "Efficient data-parallel computing on small
// heterogeneous clusters" (ETH Zurich TR-756, 2012), §3 and §4.2.
//
// A task type's Model is a list of phase groups (§3.2): within a phase the
// task's resource demands are steady, so the phase's time on a target
// machine is the time of its bottleneck resource — CPU work scaled by clock
// and usable concurrency, or bytes over the disk or network rate of the
// channel's device. A Machine is a profile: cores, clock, disk read and
// write rates, network rate. Model.Steps turns a model, a target machine and
// a Binding (where each input channel's bytes live, how big the input and
// output are) into Steps: resource demands an Engine can run.
//
// The Engine is the event-driven contention evaluator of §4.2 (Figure 12's
// last model): tasks on the same machine or link share each resource
// equally, and every rate is re-evaluated each time a task starts, changes
// phase or finishes. Run alone, a step takes exactly the bottleneck time;
// contention only slows it, so isolated times are lower bounds.
//
// Build turns a Trace (cumulative CPU seconds, runnable threads and bytes
// per channel over time; ParseTrace reads its CSV form) into a Model:
// phase boundaries where a channel's byte rate switches on or off or the
// CPU rate changes markedly, and phases with similar demands grouped.
//
// It is part of the deterministic core: it must not do I/O, start
// goroutines, read the wall clock or use global randomness. Times are
// seconds as float64, sizes bytes, rates bytes per second.
package perfmodel
