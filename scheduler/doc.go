// Package scheduler is the Sparrow scheduler daemon: a thin shell that
// validates requests, asks the placement core where reservations go, sends
// them to node monitors over Thrift, and answers their getTask calls by late
// binding. It keeps no state about cluster load; a request's state lives
// only until all of its tasks have launched.
//
// Placement preferences are strict unless a task opts in, with a positive
// delayThreshold, to having them relaxed to its racks and then the cluster
// after a delay or at once when the coordinator's locality prices say so;
// locality.go states the semantics.
//
// On a saturated fleet (node monitors refusing reservations because their
// queues are full) a scheduler with Config.MaxHeldJobs > 0 holds the
// submitJob call until the job's reservations are placed, within bounds;
// past them it refuses the job whole with "fleet saturated ... retry after
// <d>", withdrawing what was placed, unless a task already launched, in
// which case the job is accepted and its remainder re-placed as before.
// hold.go states the semantics and why.
//
// It is a daemon shell: placement, sampling and the request book live in
// core/placement; this package adds locking, Thrift and gossip around them
// and must not grow algorithms of its own.
package scheduler
