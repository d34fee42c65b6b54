// Package overload is the saturation benchmark (`sparrow bench overload`):
// a fleet of separate processes with a known capacity
// (node monitors × slots / task duration) is offered 0.5, 1, 2, 10 and
// 1,000 times that capacity, a fresh fleet per point, and for each point
// it reports goodput (tasks completed per second in a steady-state window,
// against capacity), submit refusals, attempts per task, the job response
// time of completed jobs, every role's resident memory over time (peak,
// and its growth over the window) and whether gossip declared any live
// member dead.
//
// It starts the fleet with bench/procs (StartFleet) and drives it with
// `sparrow drive` in a process of its own; it samples every process's RSS
// and CPU time from /proc, the node monitors' /status and the schedulers'
// /status and /metrics once per --sample-every, and at the end of each
// point counts memberlist's failure declarations in the members' logs.
// The arithmetic over those samples (windowed rates, RSS growth, log and
// metric parsing, goal verdicts) is pure and in analysis.go.
//
// It is an experiment harness: it runs processes and reads /proc (Linux
// only). The daemons and the client library must not import it.
package overload
