// Package live is the fleet-driving shell of the policy experiments: it
// starts an in-process fleet (fleet.Start: schedulers, node monitors and
// sleep executors over real Thrift and gossip on loopback), submits
// open-loop Poisson job streams for several users with piecewise-constant
// demand, and records every job's response time and every task's run on
// its executor. The analysis, tables and plots are in package policy,
// which is pure; this package only measures.
//
// It is an experiment harness: the daemons and the client library must not
// import it.
package live
