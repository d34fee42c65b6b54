// Package workload describes synthetic job streams: jobs of m tasks of a
// fixed duration, arriving as a Poisson process at a target load. Pure: the
// caller supplies randomness and turns the schedule into wall-clock time.
//
// It is plumbing: only this module may import it, and it holds no scheduling
// logic (that lives in core/).
package workload
