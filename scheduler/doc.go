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
// It is a daemon shell: placement, sampling and the request book live in
// core/placement; this package adds locking, Thrift and gossip around them
// and must not grow algorithms of its own.
package scheduler
