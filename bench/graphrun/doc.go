// Package graphrun runs a planned task graph on a live in-process loopback
// fleet (bench/fleet: real Thrift, real gossip) whose node monitors
// advertise unlike machine profiles, once with the planner's plan and once
// with Dryad's greedy schedule, and compares each measured makespan with
// the one the plan predicts: the ETH report's live comparison (TR-756 §5),
// scaled down in time.
//
// The executors sleep each task's predicted duration in the schedule being
// run, times a scale, so the fleet behaves like the modelled cluster and
// the measurement shows what carrying a plan out through the fleet adds to
// it (dispatch, pinning, one task at a time per node), not how good the
// models are: that is the planner's reproductions' business.
//
// It is an experiment harness: the daemons and the client library must not
// import it.
package graphrun
