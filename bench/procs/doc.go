// Package procs is the separate-process fleet benchmark (`sparrow bench
// procs`): it starts every member — schedulers, node monitors, executors
// and the driver — as its own OS process of the sparrow binary on
// loopback, each on its own 127.x.y.z address, drives a workload through
// them with `sparrow drive`, and reads every process's CPU time and peak
// memory from /proc. Its headline is each role's CPU time per task, the
// fleet's cost metric: unlike wall-clock rates, it barely moves with other
// load on a shared machine.
//
// It is an experiment harness: it runs processes and reads /proc (Linux
// only). The daemons and the client library must not import it.
package procs
