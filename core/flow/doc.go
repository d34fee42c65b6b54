// Package flow solves minimum-cost flow problems exactly, in integers.
//
// A Network has nodes 0..n-1 with integer supplies (positive: the node
// supplies flow; negative: it demands flow; they must sum to zero) and arcs
// 0..m-1 with a lower bound, an upper bound (capacity) and a cost per unit
// of flow, all int64. Solve returns a flow of least total cost that meets
// every supply and demand and every arc's bounds, together with node
// potentials that certify its optimality (see Solution). A Solver keeps the
// previous optimum and re-solves incrementally after a few supplies, arcs or
// nodes change, as Quincy's scheduler needs when tasks arrive or finish.
//
// Lower bounds are removed by the standard transformation (the bound is
// shipped up front and the node supplies adjusted) and uncapacitated arcs
// (Upper >= Infinity) get the largest capacity an optimal flow can need.
// A cold solve then uses Goldberg's cost scaling, as CS2 and LEMON's
// CostScaling do: a plain max flow (Dinic) first finds a feasible flow or
// proves there is none; costs are scaled by n+1, and rounds of FIFO
// push-relabel divide ε by 8 until ε = 1, which makes the flow optimal;
// a label-correcting shortest-path pass then turns the scaled prices into
// exact potentials. On networks of 65,536 residual arcs or more the rounds
// run on a copy of the residual network with each node's arcs contiguous,
// and every 4n relabels a global price update (a bucket search back from
// the deficits) lowers all prices at once. Where scaled numbers could overflow int64, and for
// every warm start, the solver uses primal-dual successive shortest paths
// instead: phase by phase, a Dijkstra search over reduced costs from every
// node with excess raises the potentials up to the nearest node with a
// deficit, and a blocking flow (Dinic) over the arcs of zero reduced cost
// ships as much flow as those shortest paths carry. Every phase keeps
// complementary slackness, so a warm start only has to repair the imbalance
// that a change created; the search stops at the first deficit it settles
// and shifts only the potentials it settled, so a phase costs work
// proportional to the region it explores. A warm run keeps that region
// small: one backward search from the deficits first lowers potentials by
// the distance to the nearest deficit (an A*-like, still feasible choice),
// searches skip arcs without room, and each phase ships along its
// shortest-path tree instead of running Dinic. A Solver also checks only
// the change log for validity and updates the solution it returns in place.
//
// DIMACS min-cost-flow files (the format of the first DIMACS implementation
// challenge, read by LEMON and CS2) are read by ReadDIMACS and written by
// WriteDIMACS; WriteSolution prints a solution in the DIMACS solution format.
//
// The package is part of the deterministic core: it must not start
// goroutines, read the clock, use global randomness or do I/O other than
// through the io.Reader and io.Writer handed to its parsers and printers.
// Given the same Network, Solve returns the same Solution, bit for bit.
// The subpackage gen builds Quincy-shaped test and benchmark instances.
package flow
