// Package locality is the pure core of the coordinator's locality guidance:
// Quincy's min-cost flow adapted to a fleet that does not
// preempt and whose schedulers sample on their own.
//
// The coordinator turns node monitors' reports (slots, running and queued
// work, rack, recent task length) into a flow network whose costs weigh
// waiting in a node's queue against moving a task's input across a rack or
// core switch, solves it, and reads prices off the optimal flow: what one
// more task costs on each node, on the best node of each rack and on the
// best node of the cluster (build.go, solve.go). Compute solves the
// network with core/flow's general min-cost flow; Pricer, which the
// coordinator runs, solves it period after period with an exact method
// specialised to its shape, keeping what did not change (pricer.go), and
// is tested against Compute. The
// coordinator sends the prices to each scheduler directly (schedulers are
// few; internal/pricegossip is the wire format), and a scheduler decides,
// task by task, whether the preferred nodes are worth waiting for or the
// task should also be offered to its racks or to the whole cluster
// (choose.go).
//
// Nothing here does I/O, starts goroutines or reads the clock.
package locality
