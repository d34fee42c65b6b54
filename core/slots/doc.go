// Package slots is the node monitor's pure slot state machine: reservations
// wait in a queue discipline; when a slot is free the next one is handed to
// the caller to fetch a task for (getTask); the slot then either runs the task
// until it finishes or is freed at once if the scheduler had nothing.
//
// Like etcd's raft, it does no I/O: the node monitor daemon performs the
// getTask and launchTask calls and reports their outcome, and the simulator
// drives the same machine with simulated time. Not safe for concurrent use.
//
// It is part of the deterministic core: it must not do I/O, start
// goroutines, read the wall clock or use global randomness. Callers inject
// time and randomness, so the daemons and the simulator run exactly this
// code.
package slots
