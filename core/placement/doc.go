// Package placement is the scheduler's pure placement core: where a job's
// reservations go (batch sampling, and per-task sampling for tasks with
// placement preferences), and which task a node monitor gets when one of
// those reservations reaches the front of its queue (late binding).
//
// Nothing here does I/O, starts goroutines or reads the clock; randomness is
// injected as a *rand.Rand. The scheduler daemon wraps these types with its
// RPC and locking, and the simulator drives exactly the same code.
package placement
